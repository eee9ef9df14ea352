#!/usr/bin/env bash
# Sets everything up, then runs every test (GPU tests skip with a reason where there is no GPU).
#   tools/test.sh [--no-gui] [ctest arguments, e.g. -L gpu]
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
setup_args=()
if [ "${1:-}" = "--no-gui" ]; then setup_args+=(--no-gui); shift; fi
"$here/tools/setup.sh" "${setup_args[@]}"
build=${KF_BUILD_DIR:-$here/build}
cd "$build"
exec ctest --output-on-failure --timeout 900 "$@"

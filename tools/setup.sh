#!/usr/bin/env bash
# Installs what KernelForge needs on Debian/Ubuntu (skipping what is present) and configures and
# builds it into build/. On a GPU host the CUDA-enabled libtorch of an installed PyTorch (or an
# unpacked LibTorch named by KF_LIBTORCH) is used instead of Debian's CPU-only libtorch.
#   tools/setup.sh [--no-gui]        env: KF_BUILD_DIR (default build), KF_LIBTORCH, KF_JOBS
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=${KF_BUILD_DIR:-$here/build}
gui=ON
for a in "$@"; do
  case "$a" in
    --no-gui) gui=OFF ;;
    *) echo "setup.sh: unknown option $a" >&2; exit 2 ;;
  esac
done

say() { printf '[setup] %s\n' "$*"; }
die() { printf '[setup] error: %s\n' "$*" >&2; exit 1; }

cuda=${CUDA_HOME:-/usr/local/cuda}
[ -x "$cuda/bin/nvcc" ] || die "the CUDA toolkit was not found at $cuda (install NVIDIA's cuda-toolkit package, version 12.4 or newer, or set CUDA_HOME)"

# libtorch: a CUDA build from PyTorch or LibTorch when there is one, else Debian's CPU build.
torch_prefix=""
if [ -n "${KF_LIBTORCH:-}" ]; then
  [ -f "$KF_LIBTORCH/share/cmake/Torch/TorchConfig.cmake" ] || die "KF_LIBTORCH=$KF_LIBTORCH holds no share/cmake/Torch/TorchConfig.cmake (unpack a LibTorch archive there)"
  torch_prefix=$KF_LIBTORCH
elif command -v python3 >/dev/null && python3 -c 'import torch' 2>/dev/null; then
  # Debian's python3-torch (for the KernelBench importer's test) ships no CMake files: its
  # libtorch is libtorch-dev's, found without a prefix.
  prefix_dir=$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)')
  if [ -f "$prefix_dir/Torch/TorchConfig.cmake" ]; then
    torch_prefix=$prefix_dir
    say "using the libtorch of PyTorch $(python3 -c 'import torch; print(torch.__version__)') at $torch_prefix"
  fi
fi

pkgs=(build-essential cmake ninja-build pkg-config nlohmann-json3-dev libtomlplusplus-dev libcurl4-openssl-dev
      libsqlite3-dev qt6-base-dev dpkg-dev)
# The workbench: Widgets, Charts, QScintilla; the SVG plugin for its icons; appstream to validate
# the package's metainfo; Xvfb for running the GUI tests on a display.
[ "$gui" = ON ] && pkgs+=(qt6-charts-dev libqt6opengl6-dev libqscintilla2-qt6-dev libqt6svg6 appstream xvfb xauth)
[ -z "$torch_prefix" ] && pkgs+=(libtorch-dev)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  command -v apt-get >/dev/null || die "missing packages (${missing[*]}) and no apt-get: install them by hand"
  sudo=""; [ "$(id -u)" -ne 0 ] && sudo=sudo
  say "installing: ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
# With Debian's libtorch, Debian's PyTorch too (the same 1.13, ~17 MB more): the KernelBench
# importer's test runs on it. Where there is no such package (Ubuntu 24.04), that test skips.
if [ -z "$torch_prefix" ] && command -v apt-get >/dev/null &&
   ! dpkg-query -W -f='${Status}' python3-torch 2>/dev/null | grep -q "install ok installed"; then
  sudo=""; [ "$(id -u)" -ne 0 ] && sudo=sudo
  if ! apt-cache show python3-torch >/dev/null 2>&1 && [ ${#missing[@]} -eq 0 ]; then
    $sudo apt-get update -qq || true
  fi
  if apt-cache show python3-torch >/dev/null 2>&1; then
    say "installing: python3-torch"
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends python3-torch >/dev/null ||
      say "python3-torch did not install: the KernelBench importer's test will skip"
  else
    say "no python3-torch package here: the KernelBench importer's test will skip"
  fi
fi
if [ -z "$torch_prefix" ] && ! dpkg-query -W libtorch-dev >/dev/null 2>&1; then
  die "no libtorch: install PyTorch with CUDA (pip install torch), unpack LibTorch and set KF_LIBTORCH, or apt-get install libtorch-dev"
fi

args=(-G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKF_BUILD_GUI=$gui -DCUDAToolkit_ROOT="$cuda")
prefix=${KF_PREFIX_PATH:-}
[ -n "$torch_prefix" ] && prefix="${prefix:+$prefix;}$torch_prefix"
[ -n "$prefix" ] && args+=(-DCMAKE_PREFIX_PATH="$prefix")
say "configuring $build"
cmake -S "$here" -B "$build" "${args[@]}" ${KF_CMAKE_ARGS:-} >"$build.configure.log" 2>&1 || { cat "$build.configure.log"; die "cmake failed"; }
jobs=${KF_JOBS:-$(nproc)}
say "building with $jobs jobs"
cmake --build "$build" -j "$jobs"

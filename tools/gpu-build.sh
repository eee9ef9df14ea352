#!/usr/bin/env bash
# Sourced by the GPU-machine scripts: unpacks the Debian packages the host lacks (from .debs/, see
# tools/fetch-debs.sh), configures against PyTorch's libtorch (the GUI only with KF_GPU_GUI=ON), and builds.
# Sets: here, out, build, cli, KERNELFORGE_PROBLEMS, KERNELFORGE_WORKER.
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=${OUT:-$here/build-gpu/out}
mkdir -p "$out"
R=${KF_DEB_ROOT:-/opt/kfroot}
if [ -d "$here/.debs" ] && [ ! -f "$R/.unpacked" ]; then
  mkdir -p "$R"
  for f in "$here"/.debs/*.deb; do dpkg -x "$f" "$R"; done
  touch "$R/.unpacked"
fi
export LD_LIBRARY_PATH="$R/usr/lib/x86_64-linux-gnu:$R/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}"
export QT_PLUGIN_PATH="$R/usr/lib/x86_64-linux-gnu/qt6/plugins" QT_QPA_PLATFORM=offscreen
# The GPU hosts have no fonts: without this the workbench's pictures show boxes for every letter.
if [ -d "$R/usr/share/fonts" ]; then
  mkdir -p "$R/var/cache/fontconfig"
  cat >"$R/fonts.conf" <<EOF
<?xml version="1.0"?>
<!DOCTYPE fontconfig SYSTEM "fonts.dtd">
<fontconfig><dir>$R/usr/share/fonts</dir><dir>/usr/share/fonts</dir><cachedir>$R/var/cache/fontconfig</cachedir></fontconfig>
EOF
  export FONTCONFIG_FILE="$R/fonts.conf"
fi
torch_prefix=$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)')
sqlite_lib=$(ls /usr/lib/x86_64-linux-gnu/libsqlite3.so* 2>/dev/null | head -1)
# libcurl: always the host's own library (Debian's would bring its LDAP and TLS libraries along),
# with the host's headers, or the unpacked ones when the host has none.
curl_args=()
host_curl=$(ls /usr/lib/x86_64-linux-gnu/libcurl.so.4 /usr/lib/x86_64-linux-gnu/libcurl-gnutls.so.4 /usr/lib64/libcurl.so.4 \
  2>/dev/null | head -1)
curl_inc=
for d in /usr/include/x86_64-linux-gnu /usr/include "$R/usr/include/x86_64-linux-gnu"; do
  [ -f "$d/curl/curl.h" ] && { curl_inc=$d; break; }
done
[ -n "$host_curl" ] && [ -n "$curl_inc" ] && curl_args=(-DCURL_INCLUDE_DIR="$curl_inc" -DCURL_LIBRARY="$host_curl")
build=${KF_BUILD_DIR:-$here/build-gpu}
cmake -S "$here" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKF_BUILD_GUI="${KF_GPU_GUI:-OFF}" \
  -DCUDAToolkit_ROOT=/usr/local/cuda \
  -DCMAKE_PREFIX_PATH="$R/usr/lib/x86_64-linux-gnu/cmake;$torch_prefix;$R/usr" -DQT_HOST_PATH="$R/usr" \
  -DSQLite3_INCLUDE_DIR="$R/usr/include" -DSQLite3_LIBRARY="$sqlite_lib" "${curl_args[@]}" >"$out/configure.log" 2>&1 \
  || { tail -40 "$out/configure.log"; exit 1; }
cmake --build "$build" -j "$(nproc)" ${KF_BUILD_TARGETS:+--target $KF_BUILD_TARGETS} >"$out/build.log" 2>&1 \
  || { grep -E "error|Error" "$out/build.log" | head -40; exit 1; }
echo "built in $build"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
cli="$build/app/cli/kernelforge-cli"
export KERNELFORGE_PROBLEMS="$here/problems" KERNELFORGE_WORKER="$build/app/worker/kernelforge-worker"
export KERNELFORGE_TEMPLATES="$here/resources/templates"

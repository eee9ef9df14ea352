#!/usr/bin/env bash
# On a Debian 12 machine: downloads into .debs/ the packages that tools/gpu-check.sh unpacks on a
# GPU host that has PyTorch but neither Qt nor toml++ nor the SQLite and libcurl headers (the host's
# own libcurl.so.4 is linked: Debian's would bring its LDAP and TLS libraries along).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$here/.debs" && cd "$here/.debs"
apt-get download qt6-base-dev qt6-base-dev-tools qmake6 qmake6-bin libqt6core6 libqt6gui6 libqt6widgets6 \
  libqt6test6 libqt6dbus6 libqt6network6 libqt6opengl6 libqt6opengl6-dev libqt6openglwidgets6 libqt6printsupport6 \
  libqt6sql6 libqt6sql6-sqlite qt6-qpa-plugins qt6-charts-dev libqt6charts6 libqscintilla2-qt6-15 \
  libqscintilla2-qt6-dev libicu72 libdouble-conversion3 libb2-1 libmd4c0 libpcre2-16-0 libglib2.0-0 libdbus-1-3 \
  libxkbcommon0 libxkbcommon-x11-0 libts0 libgl-dev libglx-dev libopengl-dev libegl-dev libgles-dev libglvnd-dev \
  libglvnd-core-dev libglvnd0 libgl1 libglx0 libopengl0 libegl1 libgles1 libgles2 libvulkan1 libx11-dev \
  x11proto-dev libxcb1-dev libxau-dev libxdmcp-dev libxcb-xkb1 libxcb-cursor0 libxcb-icccm4 libxcb-image0 \
  libxcb-keysyms1 libxcb-randr0 libxcb-render-util0 libxcb-shape0 libxcb-xinerama0 libxcb-xinput0 libxcb-util1 \
  fonts-dejavu-core fontconfig-config libfontconfig1 libfreetype6 libharfbuzz0b libpng16-16 libgraphite2-3 \
  libbrotli1 libtomlplusplus-dev libtomlplusplus3 libsqlite3-dev libcurl4-openssl-dev

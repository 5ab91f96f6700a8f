#!/usr/bin/env bash
# Installs what onemodel needs on a fresh Debian machine; does nothing when all is present.
#   tools/bootstrap.sh          host build, tests and the ONNX Runtime oracle
#   tools/bootstrap.sh cross    also the AArch64 cross toolchain, qemu and nanopb for arm64
#   tools/bootstrap.sh lib      only what building the library needs (make install: no test
#                               tools, no Node.js, no ONNX Runtime)
#   tools/bootstrap.sh lib-cross  the same plus the AArch64 cross toolchain (make install-aarch64)
#   tools/bootstrap.sh mcu      the bare-metal Cortex-M toolchain (newlib, libstdc++) and
#                               qemu-system-arm (make mcu-test, make install-cortex-m)
set -euo pipefail
mode="${1:-}"
lib_only=0
case "$mode" in lib|mcu) lib_only=1 ;; lib-cross) lib_only=1; mode=cross ;; esac
here=$(cd "$(dirname "$0")/.." && pwd)
sudo_cmd=""
if [ "$(id -u)" != 0 ]; then sudo_cmd="sudo"; fi

need=()
have_pkg() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
# Tools count as present when their command is (they may come from elsewhere than Debian, e.g.
# a newer Node.js); libraries and generators are checked as packages.
tools="cmake:cmake g++:g++ make:make"
[ $lib_only = 1 ] || tools="$tools node:nodejs npm:npm dot:graphviz"  # dot: the CLI test renders --svg
for c in $tools; do
  command -v "${c%%:*}" >/dev/null 2>&1 || need+=("${c##*:}")
done
pkgs="nanopb libnanopb-dev protobuf-compiler python3-protobuf"
[ $lib_only = 1 ] || pkgs="$pkgs doctest-dev libonnx-testdata"
for p in $pkgs; do
  have_pkg "$p" || need+=("$p")
done
if [ "$mode" = cross ]; then
  for p in g++-aarch64-linux-gnu qemu-user; do have_pkg "$p" || need+=("$p"); done
fi
if [ "$mode" = mcu ]; then
  for p in gcc-arm-none-eabi libnewlib-arm-none-eabi libstdc++-arm-none-eabi-newlib qemu-system-arm; do
    have_pkg "$p" || need+=("$p")
  done
fi
if [ ${#need[@]} -gt 0 ]; then
  echo "bootstrap: installing ${need[*]}"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${need[@]}" >/dev/null
fi
if [ "$mode" = cross ] && ! have_pkg libnanopb-dev:arm64; then
  echo "bootstrap: installing libnanopb-dev:arm64"
  $sudo_cmd dpkg --add-architecture arm64
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq libnanopb-dev:arm64 >/dev/null
fi

# ONNX Runtime for the oracle: its install script downloads extra files and fails offline;
# the CPU library ships inside the package, so the script is skipped.
oracle="$here/tools/trace_oracle"
if [ $lib_only = 0 ] && [ -f "$oracle/package.json" ] && [ ! -d "$oracle/node_modules/onnxruntime-node" ]; then
  echo "bootstrap: npm install onnxruntime-node (oracle)"
  (cd "$oracle" && npm install --ignore-scripts --no-audit --no-fund --loglevel=error >/dev/null)
fi
exit 0

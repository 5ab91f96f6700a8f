#!/usr/bin/env bash
# Stripped size of an inference-only AArch64 program (tools/size/infer_om.cpp: load an .om,
# run it), built as a device build would: -Os, -ffunction-sections -fdata-sections, linked
# with --gc-sections, dynamic libc. Fails above the limit (default 400 KB; docs/performance.md).
#   tools/size_check.sh [LIMIT_BYTES]        (make size)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
limit=${1:-409600}
build="$here/build-size-aarch64"
flags="-Os -ffunction-sections -fdata-sections"
cmake -S "$here" -B "$build" -DCMAKE_TOOLCHAIN_FILE="$here/cmake/aarch64-linux-gnu.cmake" -DCMAKE_BUILD_TYPE=MinSizeRel \
  -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_C_FLAGS="$flags" -DONEMODEL_BUILD_TESTS=OFF -DONEMODEL_BUILD_EXAMPLES=OFF \
  -DONEMODEL_BUILD_BENCH=OFF -DONEMODEL_BUILD_CLI=OFF >/dev/null
cmake --build "$build" -j "${JOBS:-1}" --target onemodel >/dev/null
aarch64-linux-gnu-g++ -std=c++17 $flags -I"$here" -I"$build/include" "$here/tools/size/infer_om.cpp" "$build/libonemodel.a" \
  -lprotobuf-nanopb -lpthread -Wl,--gc-sections -o "$build/infer_om"
aarch64-linux-gnu-strip -o "$build/infer_om.stripped" "$build/infer_om"
size=$(stat -c %s "$build/infer_om.stripped")
echo "size: stripped AArch64 inference program: $size bytes ($((size / 1024)) KB; limit $((limit / 1024)) KB)"
[ "$size" -le "$limit" ] || { echo "size: over the limit: see docs/performance.md for what pulls code in"; exit 1; }

#!/usr/bin/env bash
# Program size on AArch64 (docs/performance.md, "Program size on a device"): the inference-only
# program tools/size/infer_om.cpp (load an .om, run it in Exact mode), built as a device build
# would be: the -fno-exceptions library and the program at -Os with link-time optimisation, each
# function and object in its own section, no unwind tables, linked with --gc-sections against
# dynamic libc and libstdc++, stripped. The size is code + constants + initialised data
# (`size`: text + data), as on the microcontroller; the file size is printed beside it.
#
# Two programs, both run under qemu-aarch64 on the models the host build's test_mcu writes:
#   mlp   registers only the operators of a plain MLP (Gemm, ReLU): the header `onemodel ops`
#         prints for mcu/mlp.om (onemodel/op_list.h). Runs mlp.om; refuses kws_cnn.om naming
#         Conv. Fails above 200 KB.
#   full  the full operator registry. Runs both. Fails above FULL_LIMIT: the 400 KB this program
#         once met is out of reach with every operator linked (docs/performance.md says what each
#         part costs); the limit catches growth.
#   tools/size_check.sh HOST_BUILD_DIR        (make size)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
host=${1:?usage: $0 <host-build-dir (with onemodel and test_mcu built)>}
mlp_limit=$((200 * 1024))
full_limit=$((828 * 1024))
build="$here/build-size-aarch64"
flags="-Os -ffunction-sections -fdata-sections -fno-asynchronous-unwind-tables -fno-unwind-tables -flto"
[ -f "$host/mcu/mlp.om" ] || (cd "$host" && ./test_mcu >/dev/null)
cmake -S "$here" -B "$build" -DCMAKE_TOOLCHAIN_FILE="$here/cmake/aarch64-linux-gnu.cmake" -DCMAKE_BUILD_TYPE=MinSizeRel \
  -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_C_FLAGS="$flags" -DONEMODEL_NO_EXCEPTIONS=ON \
  -DCMAKE_AR="$(command -v aarch64-linux-gnu-gcc-ar)" -DCMAKE_RANLIB="$(command -v aarch64-linux-gnu-gcc-ranlib)" \
  -DONEMODEL_BUILD_TESTS=OFF -DONEMODEL_BUILD_EXAMPLES=OFF -DONEMODEL_BUILD_BENCH=OFF -DONEMODEL_BUILD_CLI=OFF >/dev/null
cmake --build "$build" -j "${JOBS:-1}" --target onemodel >/dev/null
"$host/onemodel" ops "$host/mcu/mlp.om" > "$build/mlp_ops.h"
printf '#include "mlp_ops.h"\n' > "$build/mlp_ops.cpp"
status=0
qemu="qemu-aarch64 -L /usr/aarch64-linux-gnu"
for program in mlp full; do
  extra=""
  [ $program = mlp ] && extra="$build/mlp_ops.cpp"
  exe="$build/infer_$program"
  # shellcheck disable=SC2086  # $flags and $extra are word lists
  aarch64-linux-gnu-g++ -std=c++17 $flags -fno-exceptions -DONEMODEL_NO_EXCEPTIONS=1 -I"$here" -I"$build/include" -I"$build" \
    "$here/tools/size/infer_om.cpp" $extra "$build/libonemodel.a" -lprotobuf-nanopb -lpthread -Wl,--gc-sections \
    -flto=auto -o "$exe" 2>/dev/null
  aarch64-linux-gnu-strip "$exe"
  read -r text data _ < <(aarch64-linux-gnu-size -B "$exe" | awk 'NR == 2 { print $1, $2 }')
  size=$((text + data))
  limit=$full_limit
  [ $program = mlp ] && limit=$mlp_limit
  echo "size: $program: $size bytes ($((size / 1024)) KB) of code, constants and data (file $(stat -c %s "$exe") bytes; limit $((limit / 1024)) KB)"
  if [ $size -gt $limit ]; then
    echo "size: $program is over its limit: docs/performance.md, \"Program size on a device\", says what pulls code in"
    status=1
  fi
  if ! out=$($qemu "$exe" "$host/mcu/mlp.om" 8 16 2>&1); then
    echo "size: $program could not run mlp.om: $out"
    status=1
  fi
  if out=$($qemu "$exe" "$host/mcu/kws_cnn.om" 1 1 49 10 2>&1); then
    [ $program = full ] || { echo "size: mlp ran kws_cnn.om, whose Conv it does not register"; status=1; }
  elif [ $program = full ] || [[ "$out" != *"does not register: Conv"* ]]; then
    echo "size: $program on kws_cnn.om: $out"
    status=1
  else
    echo "size: mlp refuses kws_cnn.om: ${out:0:110}..."
  fi
done
exit $status

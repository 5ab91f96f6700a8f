#!/usr/bin/env bash
# make mcu-test: runs every Cortex-M program of a bare-metal build (tests/mcu/device, the
# examples/cortex_m_kws program) under qemu-system-arm on the MPS2 AN386 board; their exit status
# is main's (semihosting). Then checks the keyword-spotting program's flash and RAM
# (tools/mcu_size.sh) and compares the Exact hashes with x86-64's (and AArch64's when that build
# is there) through tools/exactness.sh.
# Usage: tools/mcu_test.sh <host-build-dir> <cortex-m-build-dir> [<aarch64-build-dir>]
set -u
if [ $# -lt 2 ]; then
  echo "usage: $0 <host-build-dir> <cortex-m-build-dir> [<aarch64-build-dir>]" >&2
  exit 2
fi
host_dir=$1
mcu_dir=$2
arm_dir=${3:-}
here=$(cd "$(dirname "$0")/.." && pwd)
status=0
ran=0
for src in "$here"/tests/mcu/device/*.cpp; do
  prog="$mcu_dir/$(basename "$src" .cpp)"
  if [ ! -f "$prog" ]; then
    echo "mcu-test: $prog was not built" >&2
    status=1
    continue
  fi
  ran=$((ran + 1))
  echo "== $(basename "$prog") (qemu-system-arm -M mps2-an386)"
  # A hang (a fault loop, a wait that never ends) must fail the run, not stall CI.
  timeout 300 qemu-system-arm -M mps2-an386 -nographic -semihosting -kernel "$prog"
  rc=$?
  if [ $rc -ne 0 ]; then
    echo "mcu-test: $(basename "$prog") exited with $rc" >&2
    status=1
  fi
done
[ $ran -gt 0 ] || { echo "mcu-test: no programs in tests/mcu/device" >&2; exit 1; }
# The example registers only its model's operators: its list must be what `onemodel ops` says.
want=$("$host_dir/onemodel" ops --list "$host_dir/mcu/kws_cnn.om")
have=$(sed -n 's/^onemodel_register_ops(cortex_m_kws \(.*\))$/\1/p' "$here/examples/cortex_m_kws/CMakeLists.txt")
if [ "$want" != "$have" ]; then
  echo "mcu-test: examples/cortex_m_kws registers '$have'; \`onemodel ops --list kws_cnn.om\` says '$want'" >&2
  status=1
fi
# The example, built against the installed package (make mcu-test puts it in <mcu>/kws).
kws="$mcu_dir/kws/cortex_m_kws"
if [ -f "$kws" ]; then
  echo "== cortex_m_kws (examples/cortex_m_kws, qemu-system-arm -M mps2-an386)"
  timeout 120 qemu-system-arm -M mps2-an386 -nographic -semihosting -kernel "$kws" || { echo "mcu-test: cortex_m_kws failed" >&2; status=1; }
  "$here/tools/mcu_size.sh" "$kws" || status=1
else
  echo "mcu-test: $kws was not built" >&2
  status=1
fi
# The hashes: x86-64 (native, forced scalar, 1/3/8 threads), AArch64 when built, Cortex-M.
if [ -n "$arm_dir" ] && [ -x "$arm_dir/test_mcu" ] && [ -x "$arm_dir/test_kernels" ]; then
  ONEMODEL_EXACTNESS_TESTS="test_mcu test_kernels" "$here/tools/exactness.sh" "$host_dir" "$arm_dir" "$mcu_dir" || status=1
else
  echo "mcu-test: no AArch64 build with test_mcu and test_kernels (make cross-test): comparing x86-64 and Cortex-M only"
  ONEMODEL_EXACTNESS_TESTS="test_mcu test_kernels" "$here/tools/exactness.sh" "$host_dir" - "$mcu_dir" || status=1
fi
exit $status

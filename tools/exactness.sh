#!/usr/bin/env bash
# Cross-machine exactness check. Runs the test_* executables of an x86-64 build (native ISA and
# with ONEMODEL_ISA=scalar) and of an AArch64 build (under qemu-aarch64), collects the lines
#   EXACT_HASH <name> <isa> <hex>
# they print, and fails if the hashes for one <name> differ between any two runs. The x86-64 tests
# that print hashes also run at 1, 3 and 8 threads with every kernel's work split over all of
# them (ONEMODEL_NUM_THREADS, ONEMODEL_TEST_MIN_PART_COST=1): the thread count changes no bit.
# A Cortex-M build (make mcu-test) adds a third column: its tests/mcu/device programs run under
# qemu-system-arm (MPS2 AN386) and print EXACT_HASH lines for the models the x86-64 and AArch64
# test_mcu print. An AArch64 directory of "-" leaves that column out; ONEMODEL_EXACTNESS_TESTS
# (e.g. "test_mcu test_kernels") limits the test_* executables run.
# Every AArch64 test program runs here, once, under the emulator (make cross-test runs only the
# examples through ctest), so a failing AArch64 test fails this check; ONEMODEL_EXACTNESS_ARM_SKIP
# names programs left out there. On x86-64 only the programs that print hashes run: ctest has run
# every program natively already, so their failures here are reported as notes.
# The runs are independent processes, JOBS of them at a time (default: the number of cores),
# the emulated ones first as they are the longest; the notes and the table come out in one order.
# Every run's lines are kept in <x86-build-dir>/exactness_hashes.txt with the program that printed
# them; a later call takes a program's lines from there instead of running it again when the file
# is newer than the program (make mcu-test after make cross-test: only the Cortex-M runs are new).
# Usage: tools/exactness.sh <x86-build-dir> <aarch64-build-dir|-> [<cortex-m-build-dir>]
set -u
if [ $# -lt 2 ] || [ $# -gt 3 ]; then
  echo "usage: $0 <x86-build-dir> <aarch64-build-dir|-> [<cortex-m-build-dir>]" >&2
  exit 2
fi
x86_dir=$1
arm_dir=$2
mcu_dir=${3:-}
only=${ONEMODEL_EXACTNESS_TESTS:-}
arm_skip=${ONEMODEL_EXACTNESS_ARM_SKIP:-}
here=$(cd "$(dirname "$0")/.." && pwd)
sysroot=${ONEMODEL_AARCH64_SYSROOT:-/usr/aarch64-linux-gnu}
qemu=${QEMU_AARCH64:-qemu-aarch64}
max_jobs=${JOBS:-$(nproc)}
known="$x86_dir/exactness_hashes.txt"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
out="$work/hashes"
failed="$work/failed"
: >"$out"
: >"$failed"

# run <label> <program> <command...>: records "<label> <name> <isa> <hex> <program>" for every
# EXACT_HASH line in $work/<n>.hashes, and a failing run's note in $work/<n>.note.
run() {
  local label=$1 program=$2
  shift 2
  local log rc
  # Test failures are reported by the test runs themselves; here only the hashes matter, so the
  # exit status does not stop the comparison. A failing run names its configuration and prints
  # its failing checks, so an intermittent failure can be told from a real one.
  log=$("$@" 2>&1)
  rc=$?
  if [ $rc -ne 0 ]; then
    { echo "note: '$*' exited with $rc (run $label, ONEMODEL_ISA=${ONEMODEL_ISA:-native}," \
        "ONEMODEL_NUM_THREADS=${ONEMODEL_NUM_THREADS:-default}); its failures:"
      printf '%s\n' "$log" | grep -E -A6 'ERROR|FATAL|TEST CASE|Status:|test cases:' | head -60
    } >"$work/$n.note"
    echo "$label $*" >"$work/$n.failed"
  fi
  printf '%s\n' "$log" |
    awk -v l="$label" -v p="$program" '$1 == "EXACT_HASH" && NF >= 4 { print l, $2, $3, $4, p }' >"$work/$n.hashes"
}

# start <label> <dir> <program> [VAR=value ...] -- <command...>: runs one program in its build
# folder in the background, at most max_jobs at once; or takes its lines from $known.
n=0
start() {
  local label=$1 dir=$2 program=$3
  shift 3
  local vars=()
  while [ "$1" != -- ]; do vars+=("$1"); shift; done
  shift
  n=$((n + 1))
  local path
  path=$(cd "$dir" && pwd)/$program
  if [ -f "$known" ] && [ "$known" -nt "$path" ] &&
     awk -v l="$label" -v p="$path" '$1 == l && $5 == p { f = 1 } END { exit !f }' "$known"; then
    awk -v l="$label" -v p="$path" '$1 == l && $5 == p' "$known" >"$work/$n.hashes"
    return
  fi
  while [ "$(jobs -rp | wc -l)" -ge "$max_jobs" ]; do wait -n; done
  (cd "$dir" && { [ ${#vars[@]} -eq 0 ] || export "${vars[@]}"; } && run "$label" "$path" "$@") &
}

found=0
selected() { [ -z "$only" ] || [[ " $only " == *" $(basename "$1") "* ]]; }
for t in "$arm_dir"/test_*; do
  [ "$arm_dir" != - ] || break
  [ -x "$t" ] && [ -f "$t" ] || continue
  selected "$t" || continue
  [[ " $arm_skip " != *" $(basename "$t") "* ]] || continue
  found=1
  p=$(basename "$t")
  start aarch64 "$arm_dir" "$p" OM_TEST_EMULATOR="$qemu -L $sysroot" -- "$qemu" -L "$sysroot" "./$p"
done
for t in "$x86_dir"/test_*; do
  [ -x "$t" ] && [ -f "$t" ] || continue
  selected "$t" || continue
  found=1
  grep -q EXACT_HASH "$t" || continue
  p=$(basename "$t")
  start x86-64 "$x86_dir" "$p" -- "./$p"
  start x86-64/forced "$x86_dir" "$p" ONEMODEL_ISA=scalar -- "./$p"
  for threads in 1 3 8; do
    start "x86-64/t$threads" "$x86_dir" "$p" ONEMODEL_NUM_THREADS=$threads ONEMODEL_TEST_MIN_PART_COST=1 -- "./$p"
  done
done
if [ -n "$mcu_dir" ]; then
  for src in "$here"/tests/mcu/device/*.cpp; do
    p="$(cd "$mcu_dir" && pwd)/$(basename "$src" .cpp)"
    [ -f "$p" ] || continue
    found=1
    start cortex-m4 "$mcu_dir" "$(basename "$p")" -- timeout 300 qemu-system-arm -M mps2-an386 -nographic -semihosting -kernel "$p"
  done
fi
wait
: >"$work/passed"
for ((i = 1; i <= n; i++)); do
  [ -f "$work/$i.note" ] && cat "$work/$i.note" >&2
  [ -f "$work/$i.hashes" ] && cat "$work/$i.hashes" >>"$out"
  if [ -f "$work/$i.failed" ]; then
    cat "$work/$i.failed" >>"$failed"
  elif [ -f "$work/$i.hashes" ]; then
    cat "$work/$i.hashes" >>"$work/passed"
  fi
done
# Kept for a later call (the header says when they are used): the lines of runs that passed, in
# place of any older lines of the same program and label. A failing run is never taken again.
if [ -s "$work/passed" ]; then
  { [ -f "$known" ] && awk 'NR == FNR { ran[$1 " " $5] = 1; next } !(($1 " " $5) in ran)' "$work/passed" "$known"
    cat "$work/passed"; } >"$work/known" && mv "$work/known" "$known"
fi
if [ $found -eq 0 ]; then
  echo "exactness: no test_* executables in $x86_dir or $arm_dir" >&2
  exit 2
fi
if [ ! -s "$out" ]; then
  echo "exactness: no EXACT_HASH lines were printed" >&2
  exit 1
fi

# Table: one row per (machine or thread count, isa, name), then a verdict per name.
printf '%-14s %-10s %-28s %s\n' "machine" "isa" "name" "hash"
sort -k2,2 -k1,1 -k3,3 -u "$out" | while read -r label name isa hex _; do
  printf '%-14s %-10s %-28s %s\n' "$label" "$isa" "$name" "$hex"
done
status=0
echo
for name in $(awk '{ print $2 }' "$out" | sort -u); do
  distinct=$(awk -v n="$name" '$2 == n { print $4 }' "$out" | sort -u | wc -l)
  runs=$(awk -v n="$name" '$2 == n { print $1 "/" $3 }' "$out" | sort -u | tr '\n' ' ')
  if [ "$distinct" -eq 1 ]; then
    echo "OK       $name (same hash on: $runs)"
  else
    echo "MISMATCH $name ($distinct different hashes across: $runs)"
    status=1
  fi
done
if grep -q '^aarch64 ' "$failed"; then
  echo "exactness: AArch64 test programs failed:" >&2
  grep '^aarch64 ' "$failed" | sed 's/^aarch64 /  /' >&2
  status=1
fi
machines=$(awk '{ print $1 }' "$out" | sort -u | wc -l)
expected=5
[ "$arm_dir" = - ] || expected=$((expected + 1))
[ -z "$mcu_dir" ] || expected=$((expected + 1))
if [ "$machines" -lt $expected ]; then
  echo "exactness: expected hashes from x86-64 (at 1, 3, 8 threads too), x86-64/forced$([ "$arm_dir" = - ] || echo " and aarch64")${mcu_dir:+ and cortex-m4} runs, got $machines" >&2
  status=1
fi
# Every name the microcontroller printed must have been compared with another machine's.
if [ -n "$mcu_dir" ]; then
  for name in $(awk '$1 == "cortex-m4" { print $2 }' "$out" | sort -u); do
    others=$(awk -v n="$name" '$2 == n && $1 != "cortex-m4"' "$out" | wc -l)
    if [ "$others" -eq 0 ]; then
      echo "exactness: $name was hashed on the Cortex-M only (no x86-64 or AArch64 hash to compare)" >&2
      status=1
    fi
  done
fi
exit $status

#!/usr/bin/env bash
# Runs every libFuzzer target of a fuzz build on a copy of its seed corpus.
#   tools/run_fuzzers.sh <build-fuzz-dir> <seconds-per-target> [target-name-filter]
# Target fuzz_<name>_reader (or fuzz_<name>) uses fuzz/corpus/<name>/. New inputs go to
# fuzz/corpus-work/<name>/ (git-ignored), crash/leak/timeout reproducers to
# fuzz/corpus-work/<name>/artifacts/. One process per target (-jobs unset), so it fits a small
# machine. A target with a dictionary fuzz/<name>.dict uses it (the Session's holds every operator
# and attribute name and the hostile values of the generated hostile test). Exit status: non-zero
# when any target found a failure.
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:?usage: run_fuzzers.sh <build-fuzz-dir> <seconds>}
seconds=${2:-60}
only=${3:-}
# UBSan findings stop the run and leave a reproducer, like ASan ones.
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
status=0
found=0
for bin in "$build"/fuzz_*; do
  [ -x "$bin" ] && [ -f "$bin" ] || continue
  found=1
  name=$(basename "$bin")
  [ -n "$only" ] && [[ "$name" != *"$only"* ]] && continue
  name=${name#fuzz_}
  name=${name%_reader}
  seeds="$here/fuzz/corpus/$name"
  work="$here/fuzz/corpus-work/$name"
  mkdir -p "$work/corpus" "$work/artifacts"
  [ -d "$seeds" ] && cp -n "$seeds"/* "$work/corpus/" 2>/dev/null
  # The Session target also starts from the reader's per-operator models.
  [ "$name" = session ] && cp -n "$here/fuzz/corpus/onnx"/* "$work/corpus/" 2>/dev/null
  # ...and from every ONNX backend node test model (libonnx-testdata, installed by bootstrap), so
  # each operator's planning and kernels are reached from a valid model of it.
  if [ "$name" = session ] && [ -d /usr/share/libonnx-testdata/data/node ]; then
    for m in /usr/share/libonnx-testdata/data/node/*/model.onnx; do
      cp -n "$m" "$work/corpus/node_$(basename "$(dirname "$m")").onnx" 2>/dev/null
    done
  fi
  dict=()
  [ -f "$here/fuzz/$name.dict" ] && dict=(-dict="$here/fuzz/$name.dict")
  echo "== $(basename "$bin"): ${seconds}s on $(ls "$work/corpus" | wc -l) inputs${dict:+, dictionary fuzz/$name.dict}"
  "$bin" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 "${dict[@]}" \
    -artifact_prefix="$work/artifacts/" "$work/corpus" 2>"$work/log.txt"
  rc=$?
  grep -E "^(stat::|#[0-9]+.*DONE|==[0-9]+==ERROR|SUMMARY)" "$work/log.txt" | tail -12
  if [ $rc -ne 0 ]; then
    echo "!! $(basename "$bin") failed (exit $rc); reproducers in $work/artifacts, log in $work/log.txt"
    status=1
  fi
done
[ $found = 1 ] || { echo "no fuzz_* targets in $build (build with make fuzz)"; exit 1; }
exit $status

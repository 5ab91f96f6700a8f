#!/usr/bin/env bash
# Runs one doctest program's test cases as SHARDS processes at once (default: the number of
# cores), each taking a consecutive range of the cases in the program's own order (doctest's
# --first/--last), and fails when any shard fails. A sanitizer build's tests run on one core
# each, so on two cores this halves the time `make sanitize-ci` waits for them.
# Every shard's output is printed whole, shard by shard, after all have ended.
# Usage: tools/test_shards.sh <program> [doctest options...]
set -u
program=${1:?usage: $0 <program> [doctest options...]}
shift
shards=${SHARDS:-$(nproc)}
count=$("$program" --count "$@" 2>/dev/null | sed -n 's/.*passing the current filters: \([0-9]*\).*/\1/p')
if [ -z "$count" ]; then
  echo "test_shards: '$program --count' printed no count" >&2
  exit 2
fi
[ "$count" -ge "$shards" ] || shards=1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
first=1
for ((i = 1; i <= shards; i++)); do
  last=$((count * i / shards))
  "$program" --first=$first --last=$last "$@" >"$work/$i.log" 2>&1 &
  echo $! >"$work/$i.pid"
  first=$((last + 1))
done
status=0
for ((i = 1; i <= shards; i++)); do
  wait "$(cat "$work/$i.pid")"
  rc=$?
  echo "== shard $i of $shards: test cases $((count * (i - 1) / shards + 1)) to $((count * i / shards)) of $count (doctest counts all $count in its summary)"
  cat "$work/$i.log"
  if [ $rc -ne 0 ]; then
    echo "test_shards: shard $i of $shards of $program exited with $rc" >&2
    status=1
  fi
done
exit $status

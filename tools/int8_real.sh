#!/usr/bin/env bash
# A real dynamically quantized model against ONNX Runtime, one thread each (docs/performance.md,
# "int8", "A real model"): the ISNet background remover of the npm package
# @imgly/background-removal-data 1.4.5 (onnxruntime's quantize_dynamic: DynamicQuantizeLinear +
# ConvInteger x119, Resize x39, at 1024x1024), fetched into BUILD_DIR/real_models (never
# committed; the package stores the model in 4 MB chunks that its resources.json lists in order).
#   tools/int8_real.sh BUILD_DIR [RUNS]      (make bench-int8-real)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:?usage: tools/int8_real.sh BUILD_DIR [RUNS]}" && pwd)
runs=${2:-5}
dir="$build/real_models/imgly-background-removal-data-1.4.5"
model="$dir/isnet_quint8.onnx"
if [ ! -f "$model" ]; then
  mkdir -p "$dir"
  tgz=$(cd "$dir" && npm pack --silent @imgly/background-removal-data@1.4.5 | tail -1)
  tar xzf "$dir/$tgz" -C "$dir"
  rm -f "$dir/$tgz"
  node -e '
    const fs = require("fs"), dist = process.argv[1] + "/package/dist/";
    const chunks = JSON.parse(fs.readFileSync(dist + "resources.json"))["/models/small"].chunks;
    fs.writeFileSync(process.argv[2], Buffer.concat(chunks.map((c) => fs.readFileSync(dist + c.hash))));
  ' "$dir" "$model"
  rm -rf "$dir/package"
fi
oracle="$here/tools/trace_oracle"
node "$oracle/run_ort.js" input "$dir/input.npy" 1,3,1024,1024
"$build/onemodel" run "$model" --input "input=$dir/input.npy" --out "$dir/onemodel_out" --max-arena 4G >/dev/null
echo "onemodel Fast, 1 thread:"
"$build/onemodel" bench "$model" --threads 1 --runs "$runs" --warmup 1 --max-arena 4G | grep -E "latency|arena"
echo "ONNX Runtime, 1 intra-op thread:"
(cd "$oracle" && node run_ort.js time "$model" "$dir/input.npy" "$dir/onemodel_out/output.npy" "$runs")

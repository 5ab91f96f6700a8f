#!/usr/bin/env node
// One model, one input, ONNX Runtime with one intra-op thread (graph optimizations "all"): its
// median time over RUNS runs after one warm-up, and its first output against onemodel's (the
// .npy `onemodel run` wrote): max |a - b| / max(1, max |a|) and the mean |a - b| over the mean |a|.
// `input` mode writes the deterministic input instead: sin(0.001 i), as float32.
//
//   node run_ort.js input OUT.npy D0,D1,...
//   node run_ort.js time MODEL INPUT.npy ONEMODEL_OUTPUT.npy RUNS
'use strict';
const fs = require('fs');
const { readNpy } = require('./npy');

function writeNpy(file, dims, data) {
  let header = `{'descr': '<f4', 'fortran_order': False, 'shape': (${dims.join(', ')}${dims.length === 1 ? ',' : ''}), }`;
  header += ' '.repeat(63 - ((10 + header.length) % 64)) + '\n';
  const head = Buffer.alloc(10);
  head.write('\x93NUMPY', 0, 'latin1');
  head[6] = 1;
  head[7] = 0;
  head.writeUInt16LE(header.length, 8);
  fs.writeFileSync(file, Buffer.concat([head, Buffer.from(header, 'latin1'), Buffer.from(data.buffer)]));
}

async function time(model, input, ours, runs) {
  const ort = require('onnxruntime-node');
  const s = await ort.InferenceSession.create(model, { intraOpNumThreads: 1, interOpNumThreads: 1, executionMode: 'sequential',
                                                       graphOptimizationLevel: 'all' });
  const x = readNpy(input);
  const feeds = { [s.inputNames[0]]: new ort.Tensor('float32', Float32Array.from(x.data), x.dims) };
  const first = await s.run(feeds);
  const t = [];
  for (let r = 0; r < runs; ++r) {
    const a = process.hrtime.bigint();
    await s.run(feeds);
    t.push(Number(process.hrtime.bigint() - a) / 1e3);
  }
  t.sort((a, b) => a - b);
  const a = first[s.outputNames[0]].data, b = readNpy(ours).data;
  let max = 0, diff = 0, sumDiff = 0, sumAbs = 0;
  for (let i = 0; i < a.length; ++i) {
    const d = Math.abs(a[i] - b[i]);
    max = Math.max(max, Math.abs(a[i]));
    diff = Math.max(diff, d);
    sumDiff += d;
    sumAbs += Math.abs(a[i]);
  }
  console.log(`ort median_us ${t[t.length >> 1].toFixed(0)} runs ${runs}`);
  console.log(`agreement ${s.outputNames[0]}: scaled max diff ${(diff / Math.max(1, max)).toExponential(2)}, ` +
              `mean diff / mean |ort| ${(sumDiff / Math.max(1e-30, sumAbs)).toExponential(2)}`);
}

const [mode, ...args] = process.argv.slice(2);
if (mode === 'input') {
  const dims = args[1].split(',').map(Number), n = dims.reduce((p, d) => p * d, 1), v = new Float32Array(n);
  for (let i = 0; i < n; ++i) v[i] = Math.sin(0.001 * i);
  writeNpy(args[0], dims, v);
} else if (mode === 'time') {
  time(args[0], args[1], args[2], Number(args[3])).catch((e) => { console.error(e.message); process.exit(1); });
} else {
  console.error('usage: run_ort.js input OUT.npy D0,D1,... | time MODEL INPUT.npy ONEMODEL_OUTPUT.npy RUNS');
  process.exit(2);
}

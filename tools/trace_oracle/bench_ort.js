#!/usr/bin/env node
// Times ONNX Runtime (one intra-op and one inter-op thread, graph optimizations "all") on the
// models bench/bench_session writes, and checks its outputs against the ones stored there.
//
//   node bench_ort.js <work-dir> [--seconds 0.6] [--rtol 1e-4]
//
// <work-dir>/<case>/model.onnx with input sets in <work-dir>/<case>/<set>/ (input_<name>.npy,
// expected_<name>.npy; the oracle.js layout). Per set one line:
//   ort <case>/<set> median_us <t> runs <n> max_rel <r> agree <yes|no>
// The median is over session.run() calls from Node after a warm-up, so it includes the
// binding's per-call overhead; bench_session subtracts the median of an empty model measured
// the same way. max_rel = max |expected - got| / max(1, max |expected|) over all outputs.
//
// Exit status: 0 all agree, 1 a disagreement or failure, 2 bad usage, 77 no onnxruntime-node.
'use strict';
const fs = require('fs');
const path = require('path');

let ort;
try {
  ort = require('onnxruntime-node');
} catch (e) {
  console.error('bench_ort: onnxruntime-node is not installed; run tools/bootstrap.sh');
  process.exit(77);
}
const { readNpy, toNumbers } = require('./npy');

function loadSet(dir) {
  const inputs = {}, expected = {};
  for (const f of fs.readdirSync(dir).sort()) {
    const m = /^(input|expected)_(.+)\.npy$/.exec(f);
    if (m) (m[1] === 'input' ? inputs : expected)[decodeURIComponent(m[2])] = readNpy(path.join(dir, f));
  }
  return { inputs, expected };
}

function maxRel(exp, got) {
  const gotDims = Array.from(got.dims, Number);
  if (got.type !== exp.type.ort || gotDims.length !== exp.dims.length || gotDims.some((d, i) => d !== exp.dims[i])) return Infinity;
  const e = toNumbers(exp.type.ort, exp.data), g = toNumbers(got.type, got.data);
  let maxAbs = 0, scale = 1;
  for (let i = 0; i < e.length; ++i) {
    const diff = Math.abs(e[i] - g[i]);
    maxAbs = Number.isNaN(diff) ? Infinity : Math.max(maxAbs, diff);
    if (Number.isFinite(e[i])) scale = Math.max(scale, Math.abs(e[i]));
  }
  return maxAbs / scale;
}

async function timeSet(session, feeds, names, seconds) {
  const warmEnd = process.hrtime.bigint() + BigInt(Math.round(seconds * 0.1 * 1e9));
  for (let i = 0; i < 5 || process.hrtime.bigint() < warmEnd; ++i) await session.run(feeds, names);
  const times = [];
  const end = process.hrtime.bigint() + BigInt(Math.round(seconds * 1e9));
  while (times.length < 30 || (process.hrtime.bigint() < end && times.length < 200000)) {
    const t0 = process.hrtime.bigint();
    await session.run(feeds, names);
    times.push(Number(process.hrtime.bigint() - t0) / 1e3);
  }
  times.sort((a, b) => a - b);
  const n = times.length;
  return { median: n % 2 ? times[n >> 1] : 0.5 * (times[n / 2 - 1] + times[n / 2]), runs: n };
}

async function main() {
  const args = process.argv.slice(2);
  let dir = null, seconds = 0.6, rtol = 1e-4;
  for (let i = 0; i < args.length; ++i) {
    if (args[i] === '--seconds') seconds = Number(args[++i]);
    else if (args[i] === '--rtol') rtol = Number(args[++i]);
    else if (!dir) dir = args[i];
    else dir = null;
  }
  if (!dir || !fs.existsSync(dir) || !(seconds > 0) || !Number.isFinite(rtol)) {
    console.error('usage: node bench_ort.js <work-dir> [--seconds 0.6] [--rtol 1e-4]');
    process.exit(2);
  }
  const options = { intraOpNumThreads: 1, interOpNumThreads: 1, executionMode: 'sequential', graphOptimizationLevel: 'all' };
  let failed = 0;
  const cases = fs.readdirSync(dir).filter((c) => fs.existsSync(path.join(dir, c, 'model.onnx'))).sort();
  for (const c of cases) {
    const caseDir = path.join(dir, c);
    const session = await ort.InferenceSession.create(path.join(caseDir, 'model.onnx'), options);
    const sets = fs.readdirSync(caseDir).filter((s) => fs.statSync(path.join(caseDir, s)).isDirectory()).sort();
    for (const s of sets) {
      const label = `${c}/${s}`;
      try {
        const set = loadSet(path.join(caseDir, s));
        const feeds = {};
        for (const [name, t] of Object.entries(set.inputs)) feeds[name] = new ort.Tensor(t.type.ort, t.data, t.dims);
        const names = Object.keys(set.expected);
        if (!names.length) throw new Error('no expected_<name>.npy files');
        const results = await session.run(feeds, names);
        let rel = 0;
        for (const name of names) rel = Math.max(rel, maxRel(set.expected[name], results[name]));
        const agree = rel <= rtol;
        if (!agree) ++failed;
        const t = await timeSet(session, feeds, names, seconds);
        console.log(`ort ${label} median_us ${t.median.toFixed(3)} runs ${t.runs} max_rel ${rel.toExponential(2)} agree ${agree ? 'yes' : 'no'}`);
      } catch (e) {
        ++failed;
        console.log(`FAIL ${label}: ${String(e && e.message ? e.message : e).split('\n')[0]}`);
      }
    }
    if (session.release) await session.release();
  }
  console.log(`bench_ort: ${cases.length} model(s), ONNX Runtime ${ort.env.versions ? ort.env.versions.common : ''}, ${failed} failed`);
  process.exit(failed ? 1 : 0);
}

main().catch((e) => {
  console.error(`bench_ort: ${e && e.stack ? e.stack : e}`);
  process.exit(1);
});

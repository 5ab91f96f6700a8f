#!/usr/bin/env node
// Runs ONNX files written by the onemodel test suite in ONNX Runtime and compares its outputs
// with the expected outputs the tests computed. See README.md for the case folder layout.
//
//   node oracle.js <cases-dir> [--rtol 1e-5] [--case <substring>] [--time <runs>] [--verbose]
//
// --time N also prints ONNX Runtime's median latency of N runs per input set (one thread; it
// includes the Node binding's per-call overhead).
//
// Exit status: 0 when every case agrees, 1 on any disagreement, load or run failure, 2 on bad
// usage or an empty/missing cases folder, 77 when onnxruntime-node is not installed.
'use strict';
const fs = require('fs');
const path = require('path');

let ort;
try {
  ort = require('onnxruntime-node');
} catch (e) {
  console.error('oracle: onnxruntime-node is not installed; run tools/bootstrap.sh (npm install --ignore-scripts in tools/trace_oracle)');
  process.exit(77);
}

const { readNpy, toNumbers } = require('./npy');

// File names carry value names percent-encoded: every byte outside [A-Za-z0-9._-] is %XX.
function decodeName(s) {
  return decodeURIComponent(s);
}

// ---- one input set: the npy files of one folder ----
function loadSet(dir) {
  const inputs = {}, expected = {};
  for (const f of fs.readdirSync(dir).sort()) {
    const m = /^(input|expected)_(.+)\.npy$/.exec(f);
    if (!m) continue;
    (m[1] === 'input' ? inputs : expected)[decodeName(m[2])] = readNpy(path.join(dir, f));
  }
  return { inputs, expected };
}

function compare(name, exp, got, rtol) {
  const gotType = got.type;
  if (exp.type.ort !== gotType) return { ok: false, text: `dtype: expected ${exp.type.ort}, ONNX Runtime gave ${gotType}` };
  const gotDims = Array.from(got.dims, Number);
  if (gotDims.length !== exp.dims.length || gotDims.some((d, i) => d !== exp.dims[i]))
    return { ok: false, text: `shape: expected [${exp.dims}], ONNX Runtime gave [${gotDims}]` };
  const e = toNumbers(exp.type.ort, exp.data), g = toNumbers(gotType, got.data);
  const exact = !['float32', 'float16'].includes(gotType);
  let maxAbs = 0, magnitude = 0, mismatches = 0, worst = -1;
  for (let i = 0; i < e.length; ++i) {
    const a = e[i], b = g[i];
    let diff;
    if (Number.isNaN(a) || Number.isNaN(b)) diff = Number.isNaN(a) && Number.isNaN(b) ? 0 : Infinity;
    else if (a === b) diff = 0;  // also equal infinities
    else diff = Math.abs(a - b);
    if (Number.isFinite(a)) magnitude = Math.max(magnitude, Math.abs(a));
    if (diff > maxAbs || (diff > 0 && worst < 0)) { maxAbs = diff; worst = i; }
    // int64 values beyond 2^53 are compared exactly as BigInt.
    if (exact && (gotType === 'int64' ? exp.data[i] !== got.data[i] : diff !== 0)) ++mismatches;
  }
  const scale = Math.max(1, magnitude);
  const rel = maxAbs / scale;
  const ok = exact ? mismatches === 0 : rel <= rtol;  // NaN/inf mismatches give rel = Infinity
  let text = `max_abs ${maxAbs.toExponential(3)} rel ${rel.toExponential(3)} (scale ${scale.toPrecision(4)}, ${e.length} values)`;
  if (!ok && worst >= 0) text += `; worst at flat index ${worst}: expected ${e[worst]}, got ${g[worst]}`;
  return { ok, text };
}

// ONNX Runtime's x86 u8 x s8 product is exact with a VNNI dot product (AVX-512 VNNI, AVX-VNNI);
// without one it multiplies with vpmaddubsw, whose 16-bit pair sums saturate (2 * 255 * 127 >
// 32767), so the integer kernels its QDQ fusion (graph optimization level 2) runs move results
// by several quantization steps on such CPUs. Cases marked with a `u8s8` file then run at level
// 1 ('basic': DequantizeLinear, the float operator, QuantizeLinear, as the ONNX semantics read).
function u8s8Exact() {
  if (process.arch !== 'x64') return true;
  try {
    const flags = fs.readFileSync('/proc/cpuinfo', 'utf8');
    return /\b(avx512_vnni|avx_vnni)\b/.test(flags);
  } catch (e) {
    return true;
  }
}

async function runSet(modelPath, set, rtol, label, timeRuns, basic) {
  const options = { intraOpNumThreads: 1, interOpNumThreads: 1 };
  if (basic) options.graphOptimizationLevel = 'basic';
  const session = await ort.InferenceSession.create(modelPath, options);
  const feeds = {};
  for (const [name, t] of Object.entries(set.inputs)) feeds[name] = new ort.Tensor(t.type.ort, t.data, t.dims);
  const missing = session.inputNames.filter((n) => !(n in feeds));
  if (missing.length) throw new Error(`no input file for model input(s) ${missing.join(', ')}`);
  const names = Object.keys(set.expected);
  if (!names.length) throw new Error('no expected_<name>.npy files');
  const unknown = names.filter((n) => !session.outputNames.includes(n));
  if (unknown.length) throw new Error(`expected output(s) ${unknown.join(', ')} are not outputs of the model (${session.outputNames.join(', ')})`);
  const results = await session.run(feeds, names);
  let ok = true;
  for (const name of names) {
    const r = compare(name, set.expected[name], results[name], rtol);
    console.log(`${r.ok ? 'ok  ' : 'FAIL'} ${label} output ${JSON.stringify(name)}: ${r.text}`);
    ok = ok && r.ok;
  }
  if (timeRuns > 0) {
    const times = [];
    for (let i = 0; i < timeRuns; ++i) {
      const t0 = process.hrtime.bigint();
      await session.run(feeds, names);
      times.push(Number(process.hrtime.bigint() - t0) / 1e3);
    }
    times.sort((a, b) => a - b);
    console.log(`time ${label}: ONNX Runtime median ${times[times.length >> 1].toFixed(2)} us per run (${timeRuns} runs, 1 thread, incl. Node binding overhead)`);
  }
  if (session.release) await session.release();
  return ok;
}

async function main() {
  const args = process.argv.slice(2);
  let dir = null, rtolDefault = 1e-5, filter = null, timeRuns = 0;
  for (let i = 0; i < args.length; ++i) {
    if (args[i] === '--rtol') rtolDefault = Number(args[++i]);
    else if (args[i] === '--case') filter = args[++i];
    else if (args[i] === '--time') timeRuns = Number(args[++i]);
    else if (!dir) dir = args[i];
    else { console.error(`oracle: unexpected argument ${args[i]}`); process.exit(2); }
  }
  if (!dir || !Number.isFinite(rtolDefault)) {
    console.error('usage: node oracle.js <cases-dir> [--rtol 1e-5] [--case <substring>]');
    process.exit(2);
  }
  if (!fs.existsSync(dir)) {
    console.error(`oracle: ${dir} does not exist; the test programs write their cases there (run the test suite first)`);
    process.exit(2);
  }
  const cases = fs.readdirSync(dir).filter((c) => fs.existsSync(path.join(dir, c, 'model.onnx'))).filter((c) => !filter || c.includes(filter)).sort();
  if (!cases.length) {
    console.error(`oracle: no cases (folders with a model.onnx) in ${dir}`);
    process.exit(2);
  }
  let failed = 0, sets = 0;
  for (const c of cases) {
    const caseDir = path.join(dir, c);
    const modelPath = path.join(caseDir, 'model.onnx');
    // A case may tighten or loosen its tolerance with a file named `rtol` holding a number.
    let rtol = rtolDefault;
    const rtolFile = path.join(caseDir, 'rtol');
    if (fs.existsSync(rtolFile)) rtol = Number(fs.readFileSync(rtolFile, 'utf8').trim());
    const basic = fs.existsSync(path.join(caseDir, 'u8s8')) && !u8s8Exact();
    if (basic) console.log(`note ${c}: this CPU has no VNNI dot product, so ONNX Runtime runs the case without its QDQ fusion (its u8 x s8 product saturates here)`);
    // The case folder is one input set; each subfolder holding input_/expected_ files is another.
    const setDirs = [caseDir].concat(
      fs.readdirSync(caseDir).map((f) => path.join(caseDir, f)).filter((p) => fs.statSync(p).isDirectory()).sort());
    for (const sd of setDirs) {
      const label = sd === caseDir ? c : `${c}/${path.basename(sd)}`;
      let set;
      try {
        set = loadSet(sd);
        if (!Object.keys(set.inputs).length && !Object.keys(set.expected).length) {
          if (sd !== caseDir) continue;
        }
        ++sets;
        if (!(await runSet(modelPath, set, rtol, label, timeRuns, basic))) ++failed;
      } catch (e) {
        ++failed;
        console.log(`FAIL ${label}: ${String(e && e.message ? e.message : e).split('\n')[0]}`);
      }
    }
  }
  console.log(`oracle: ${cases.length} case(s), ${sets} input set(s), ${failed} failed (ONNX Runtime ${ort.env.versions ? ort.env.versions.common : ''})`);
  process.exit(failed ? 1 : 0);
}

main().catch((e) => {
  console.error(`oracle: ${e && e.stack ? e.stack : e}`);
  process.exit(1);
});

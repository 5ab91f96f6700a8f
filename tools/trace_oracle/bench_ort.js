#!/usr/bin/env node
// Times ONNX Runtime (--threads intra-op threads, default one, and one inter-op thread, sequential
// execution, graph optimizations "all") on the models bench/bench_session writes, and checks its
// outputs against the ones stored there.
//
//   node bench_ort.js <work-dir> [--seconds 0.6] [--rtol 1e-4] [--threads 1] [--serve]
//
// <work-dir>/<case>/model.onnx with input sets in <work-dir>/<case>/<set>/ (input_<name>.npy,
// expected_<name>.npy; the oracle.js layout). Each model is loaded twice, with ONNX Runtime's
// default memory settings (sets labelled <case>/<set>) and without its CPU memory arena and
// memory patterns (<case>/<set>@noarena; see loadAll). Every set is first run once and checked:
//   check <case>/<set> max_rel <r> agree <yes|no>
// max_rel = max |expected - got| / max(1, max |expected|) over all outputs.
//
// Without --serve every set is then timed for --seconds (a tenth more as warm-up):
//   ort <case>/<set> median_us <t> runs <n>
// With --serve the program prints "ready" and then answers commands on stdin, one per line, so
// that the caller can interleave these timings with its own under the same machine load:
//   warm <case>/<set> <seconds>   ->  warm <case>/<set>
//   time <case>/<set> <seconds>   ->  ort <case>/<set> median_us <t> runs <n>
// Medians are over session.run() calls from Node, so they include the binding's per-call
// overhead; bench_session subtracts the median of an empty model measured the same way.
//
// Exit status: 0 all agree, 1 a disagreement or failure, 2 bad usage, 77 no onnxruntime-node.
'use strict';
const fs = require('fs');
const path = require('path');
const readline = require('readline');

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

async function runFor(entry, seconds, minRuns, times) {
  const end = process.hrtime.bigint() + BigInt(Math.round(seconds * 1e9));
  for (let i = 0; i < minRuns || process.hrtime.bigint() < end; ++i) {
    const t0 = process.hrtime.bigint();
    await entry.session.run(entry.feeds, entry.names);
    if (times) times.push(Number(process.hrtime.bigint() - t0) / 1e3);
    if (times && times.length >= 200000) break;
  }
}

async function timeEntry(entry, seconds) {
  const times = [];
  await runFor(entry, seconds, 15, times);
  times.sort((a, b) => a - b);
  const n = times.length;
  return { median: n % 2 ? times[n >> 1] : 0.5 * (times[n / 2 - 1] + times[n / 2]), runs: n };
}

// Loads every case's sessions and sets, runs and checks each set once. Every model gets two
// sessions: ONNX Runtime's defaults (label <case>/<set>) and one without the CPU memory arena and
// memory patterns (label <case>/<set>@noarena). On a paravirtualized VM the default session's
// latency can flip between two levels about 2x apart from one block of runs to the next, while
// the arena-less one is stable; timing both lets the caller compare with ONNX Runtime's best.
async function loadAll(dir, rtol, threads) {
  const base = { intraOpNumThreads: threads, interOpNumThreads: 1, executionMode: 'sequential', graphOptimizationLevel: 'all' };
  const variants = [['', base], ['@noarena', Object.assign({}, base, { enableCpuMemArena: false, enableMemPattern: false })]];
  const entries = new Map();
  let failed = 0;
  const cases = fs.readdirSync(dir).filter((c) => fs.existsSync(path.join(dir, c, 'model.onnx'))).sort();
  for (const c of cases) {
    const caseDir = path.join(dir, c);
    const sets = fs.readdirSync(caseDir).filter((s) => fs.statSync(path.join(caseDir, s)).isDirectory()).sort();
    for (const [suffix, options] of variants) {
      let session;
      try {
        session = await ort.InferenceSession.create(path.join(caseDir, 'model.onnx'), options);
      } catch (e) {
        ++failed;
        console.log(`FAIL ${c}${suffix}: ${String(e && e.message ? e.message : e).split('\n')[0]}`);
        continue;
      }
      for (const s of sets) {
        const label = `${c}/${s}${suffix}`;
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
          console.log(`check ${label} max_rel ${rel.toExponential(2)} agree ${agree ? 'yes' : 'no'}`);
          entries.set(label, { session, feeds, names });
        } catch (e) {
          ++failed;
          console.log(`FAIL ${label}: ${String(e && e.message ? e.message : e).split('\n')[0]}`);
        }
      }
    }
  }
  return { entries, failed, cases: cases.length };
}

function serve(entries, state) {
  const rl = readline.createInterface({ input: process.stdin });
  let chain = Promise.resolve();
  const handle = async (line) => {
    const [cmd, label, secondsText] = line.trim().split(/\s+/);
    const entry = entries.get(label);
    const seconds = Number(secondsText);
    if ((cmd !== 'warm' && cmd !== 'time') || !entry || !(seconds >= 0)) {
      console.log(`error unknown command or set: ${line.trim()}`);
      ++state.failed;
    } else if (cmd === 'warm') {
      await runFor(entry, seconds, 5, null);
      console.log(`warm ${label}`);
    } else {
      const t = await timeEntry(entry, seconds);
      console.log(`ort ${label} median_us ${t.median.toFixed(3)} runs ${t.runs}`);
    }
  };
  rl.on('line', (line) => { chain = chain.then(() => handle(line)); });
  rl.on('close', () => { chain.then(() => process.exit(state.failed ? 1 : 0)); });
}

async function main() {
  const args = process.argv.slice(2);
  let dir = null, seconds = 0.6, rtol = 1e-4, threads = 1, serving = false, bad = false;
  for (let i = 0; i < args.length; ++i) {
    if (args[i] === '--seconds') seconds = Number(args[++i]);
    else if (args[i] === '--rtol') rtol = Number(args[++i]);
    else if (args[i] === '--threads') threads = Number(args[++i]);
    else if (args[i] === '--serve') serving = true;
    else if (!dir) dir = args[i];
    else bad = true;
  }
  if (bad || !dir || !fs.existsSync(dir) || !(seconds > 0) || !Number.isFinite(rtol) || !(threads >= 1)) {
    console.error('usage: node bench_ort.js <work-dir> [--seconds 0.6] [--rtol 1e-4] [--threads 1] [--serve]');
    process.exit(2);
  }
  const state = await loadAll(dir, rtol, threads);
  console.log(`bench_ort: ${state.cases} model(s), ${state.entries.size} input set(s), ONNX Runtime ${ort.env.versions ? ort.env.versions.common : ''}, ${state.failed} failed`);
  if (serving) {
    console.log('ready');
    serve(state.entries, state);
    return;
  }
  for (const [label, entry] of state.entries) {
    await runFor(entry, seconds * 0.1, 5, null);
    const t = await timeEntry(entry, seconds);
    console.log(`ort ${label} median_us ${t.median.toFixed(3)} runs ${t.runs}`);
  }
  process.exit(state.failed ? 1 : 0);
}

main().catch((e) => {
  console.error(`bench_ort: ${e && e.stack ? e.stack : e}`);
  process.exit(1);
});

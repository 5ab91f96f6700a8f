// .npy reading shared by oracle.js and bench_ort.js: NumPy v1/v2/v3 files, little-endian, C
// order, of the dtypes the onemodel tests write; values as typed arrays ONNX Runtime accepts.
'use strict';
const fs = require('fs');

const NPY_TYPES = {
  '<f4': { ort: 'float32', size: 4, array: Float32Array },
  '<f2': { ort: 'float16', size: 2, array: Uint16Array },
  '<i8': { ort: 'int64', size: 8, array: BigInt64Array },
  '<i4': { ort: 'int32', size: 4, array: Int32Array },
  '|i1': { ort: 'int8', size: 1, array: Int8Array },
  '|u1': { ort: 'uint8', size: 1, array: Uint8Array },
  '|b1': { ort: 'bool', size: 1, array: Uint8Array },
};

function readNpy(file) {
  const buf = fs.readFileSync(file);
  if (buf.length < 10 || buf[0] !== 0x93 || buf.toString('latin1', 1, 6) !== 'NUMPY') throw new Error(`${file}: not a .npy file`);
  const major = buf[6];
  let headerLen, start;
  if (major === 1) { headerLen = buf.readUInt16LE(8); start = 10; }
  else if (major === 2 || major === 3) { headerLen = buf.readUInt32LE(8); start = 12; }
  else throw new Error(`${file}: unknown .npy version ${major}`);
  const header = buf.toString('latin1', start, start + headerLen);
  const descr = /'descr'\s*:\s*'([^']*)'/.exec(header);
  const fortran = /'fortran_order'\s*:\s*(True|False)/.exec(header);
  const shape = /'shape'\s*:\s*\(([^)]*)\)/.exec(header);
  if (!descr || !fortran || !shape) throw new Error(`${file}: unreadable .npy header ${JSON.stringify(header)}`);
  if (fortran[1] === 'True') throw new Error(`${file}: Fortran order is not supported`);
  const type = NPY_TYPES[descr[1]];
  if (!type) throw new Error(`${file}: unsupported dtype ${descr[1]}`);
  const dims = shape[1].split(',').map((s) => s.trim()).filter((s) => s.length).map((s) => Number(s.replace(/L$/, '')));
  const count = dims.reduce((a, b) => a * b, 1);
  const dataStart = start + headerLen;
  if (buf.length - dataStart !== count * type.size) throw new Error(`${file}: data size ${buf.length - dataStart} does not match shape [${dims}]`);
  const copy = new Uint8Array(buf.subarray(dataStart)).buffer;  // aligned copy for the typed array
  return { type, dims, data: new type.array(copy, 0, count) };
}

function halfToFloat(h) {
  const s = h & 0x8000 ? -1 : 1, e = (h >> 10) & 0x1f, m = h & 0x3ff;
  if (e === 0) return s * m * Math.pow(2, -24);
  if (e === 31) return m ? NaN : s * Infinity;
  return s * (1 + m / 1024) * Math.pow(2, e - 15);
}

function toNumbers(type, data) {
  if (type === 'float16') return Array.from(data, halfToFloat);
  if (type === 'int64') return Array.from(data, (v) => Number(v));
  return Array.from(data, Number);
}

module.exports = { NPY_TYPES, readNpy, halfToFloat, toNumbers };

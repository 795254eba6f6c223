/**
 * Q4_K weights as MatMulNBits blocks (src/checkpoint/gguf/nbits.ts): each 32-element sub-block of a
 * 256-element super-block becomes one block with scale d·sc and float zero point dmin·m / (d·sc).
 * Golden values: the `gguf` package's dequantisation of the fixture's random Q4_K bytes
 * (test/fixtures/gguf/dequant-reference.safetensors), one hand-made super-block, and onnxruntime's
 * MatMulNBits on the mapped blocks against x·Wᵀ with the gguf-dequantised W.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import * as ort from "onnxruntime-node";
import { describe, expect, it } from "vitest";
import { nbitsBytes, toMatMulNBits, type NBitsWeight } from "../../src/checkpoint/gguf/nbits.js";
import { readGgufHeader } from "../../src/checkpoint/gguf/reader.js";
import { readSafetensorsHeader, readTensorF32 } from "../../src/checkpoint/safetensors.js";
import type { SafetensorsDType, TensorInfo } from "../../src/checkpoint/types.js";
import { DataType, GraphBuilder } from "../../src/graph/onnx/builder.js";

const FIX = path.join(path.dirname(new URL(import.meta.url).pathname), "..", "fixtures", "gguf");

/** W[n][k] = (code − zp) · scale, in float64, from the MatMulNBits inputs (byte i: elements 2i low, 2i + 1 high). */
function expand(q: NBitsWeight): Float64Array {
  const w = new Float64Array(q.n * q.k);
  const bpr = q.k / 32;
  for (let b = 0; b < q.n * bpr; b++) {
    const zp = q.zeroPoints ? q.zeroPoints[b] : 8;
    for (let i = 0; i < 32; i++) {
      const byte = q.codes[b * 16 + (i >> 1)];
      const code = i & 1 ? byte >> 4 : byte & 15;
      w[b * 32 + i] = (code - zp) * q.scales[b];
    }
  }
  return w;
}

function fixtureQ4K(): { info: TensorInfo; ref: Float32Array } {
  const header = readGgufHeader(path.join(FIX, "dequant.gguf"));
  const t = header.tensors.find((x) => x.name === "Q4_K")!;
  const info: TensorInfo = {
    name: "Q4_K",
    file: header.file,
    dtype: "F32" as SafetensorsDType,
    shape: [...t.dims].reverse(),
    byteOffset: t.byteOffset,
    byteLength: t.byteLength,
    encoding: { ggmlType: "Q4_K" },
  };
  const st = readSafetensorsHeader(path.join(FIX, "dequant-reference.safetensors"));
  return { info, ref: readTensorF32(st.tensors.find((x) => x.name === "Q4_K")!) };
}

describe("Q4_K → MatMulNBits", () => {
  it("the blocks give the gguf package's dequantised values (random super-blocks, [4, 512])", () => {
    const { info, ref } = fixtureQ4K();
    const q = toMatMulNBits(info)!;
    expect(q).toBeDefined();
    expect([q.bits, q.blockSize, q.n, q.k, q.scales.length, q.zeroPoints?.length]).toEqual([4, 32, 4, 512, 64, 64]);
    const w = expand(q);
    let worst = 0;
    for (let b = 0; b < 64; b++) {
      // ggml rounds d·sc·q and dmin·m to float32; (q − zp)·scale differs by a few ulps of those terms
      const tol = 4 * 2 ** -24 * (Math.abs(q.scales[b]) * 15 + Math.abs(q.scales[b] * q.zeroPoints![b]));
      for (let i = 0; i < 32; i++) worst = Math.max(worst, Math.abs(w[b * 32 + i] - ref[b * 32 + i]) / (tol || 1));
    }
    expect(worst).toBeLessThanOrEqual(1);
    expect(ref.some((v) => Math.abs(v) > 1e-3)).toBe(true);
  });

  it("a hand-made super-block: d 1, dmin 0.5, 6-bit scales and mins including their high bits", () => {
    // one row of 256: bytes d = 1.0 (0x3C00), dmin = 0.5 (0x3800), 12 scale bytes, 128 nibble bytes
    const raw = new Uint8Array(144);
    raw.set([0x00, 0x3c, 0x00, 0x38], 0);
    // sub-blocks 0..3: sc = 1, 2, 3, 4 and m = 0, 1, 2, 3 in bytes 0..3 and 4..7 (low 6 bits);
    // sub-block 4: sc = 33 = 0b10_0001 → low 4 bits 1 in byte 8, high 2 bits (2) in bits 6-7 of byte 0;
    //              m = 20 = 0b01_0100 → low 4 bits 4 in byte 8's high nibble, high 2 bits (1) in byte 4's bits 6-7.
    // sub-blocks 5, 6: sc = 5, m = 1 (bytes 9, 10: 0x15); sub-block 7: sc = 0, m = 3 (byte 11: 0x30), so
    // every weight of it is −0.5·3 whatever its nibbles (scale 0 with a min: no zero point of d·sc expresses it).
    const sc = raw.subarray(4, 16);
    sc.set([1 | (2 << 6), 2, 3, 4, 0 | (1 << 6), 1, 2, 3, 0x41, 0x15, 0x15, 0x30]);
    // nibbles: byte 16 + 32g + l holds element l of sub-block 2g (low) and of 2g + 1 (high); here l % 16 and 15 − l % 16
    for (let g = 0; g < 4; g++) for (let l = 0; l < 32; l++) raw[16 + 32 * g + l] = (l % 16) | ((15 - (l % 16)) << 4);
    const expected = (j: number, l: number) => {
      const [s, m] = [
        [1, 0],
        [2, 1],
        [3, 2],
        [4, 3],
        [33, 20],
        [5, 1],
        [5, 1],
        [0, 3],
      ][j];
      const code = j % 2 === 0 ? l % 16 : 15 - (l % 16);
      return 1.0 * s * code - 0.5 * m;
    };
    const info = {
      name: "hand",
      file: "(memory)",
      dtype: "F32",
      shape: [1, 256],
      byteOffset: 0,
      byteLength: 144,
      encoding: { ggmlType: "Q4_K" },
    };
    const q = toMatMulNBitsFromBytes(info as TensorInfo, raw);
    const w = expand(q);
    for (let j = 0; j < 8; j++) for (let l = 0; l < 32; l++) expect(w[j * 32 + l]).toBeCloseTo(expected(j, l), 5);
  });

  it("a Q4_1 block with scale 0 and min 0.75 is 0.75 everywhere", () => {
    const raw = new Uint8Array(20);
    raw.set([0x00, 0x00, 0x00, 0x3a], 0); // d = 0, m = 0.75
    for (let i = 4; i < 20; i++) raw[i] = (i * 29) & 255;
    const info = {
      name: "q41",
      file: "(memory)",
      dtype: "F32",
      shape: [1, 32],
      byteOffset: 0,
      byteLength: 20,
      encoding: { ggmlType: "Q4_1" },
    };
    const w = expand(toMatMulNBitsFromBytes(info as TensorInfo, raw));
    expect([...w]).toEqual(new Array(32).fill(0.75));
  });

  it("onnxruntime's MatMulNBits on the mapped blocks computes x·Wᵀ with the gguf-dequantised W", async () => {
    const { info, ref } = fixtureQ4K();
    const q = toMatMulNBits(info)!;
    const g = new GraphBuilder();
    const x = g.input("x", DataType.FLOAT, [3, 512]);
    const u8 = (a: Float32Array) => new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
    g.initializer({ name: "codes", dataType: DataType.UINT8, dims: [4, 16, 16], rawData: q.codes });
    g.initializer({ name: "scales", dataType: DataType.FLOAT, dims: [64], rawData: u8(q.scales) });
    g.initializer({ name: "zp", dataType: DataType.FLOAT, dims: [64], rawData: u8(q.zeroPoints!) });
    const y = g.node("MatMulNBits", [x, "codes", "scales", "zp"], { K: 512, N: 4, bits: 4, block_size: 32 }, 1, "com.microsoft");
    g.output(y, "y", DataType.FLOAT, [3, 4]);
    const s = await ort.InferenceSession.create(g.encode("q4k"));
    const xs = Float32Array.from({ length: 3 * 512 }, (_, i) => Math.sin(i * 0.37) * 2);
    const out = (await s.run({ x: new ort.Tensor("float32", xs, [3, 512]) })).y.data as Float32Array;
    await s.release();
    for (let r = 0; r < 3; r++)
      for (let n = 0; n < 4; n++) {
        let want = 0,
          mag = 0;
        for (let k = 0; k < 512; k++) {
          want += xs[r * 512 + k] * ref[n * 512 + k];
          mag += Math.abs(xs[r * 512 + k] * ref[n * 512 + k]);
        }
        expect(Math.abs(out[r * 4 + n] - want)).toBeLessThanOrEqual(1e-5 * mag);
      }
  });

  it("costs 4.5 bits per weight plus a float zero point per block, not float32's 32", () => {
    expect(nbitsBytes("Q4_K", 4096 * 4096)).toBe((4096 * 4096) / 2 + ((4096 * 4096) / 32) * 8);
    expect(nbitsBytes("Q4_0", 256)).toBe(128 + 8 * 4);
  });
});

/** toMatMulNBits on bytes in memory: a temporary file holding them. */
function toMatMulNBitsFromBytes(info: TensorInfo, raw: Uint8Array): NBitsWeight {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "floatscope-q4k-"));
  try {
    const file = path.join(dir, "block.bin");
    fs.writeFileSync(file, raw);
    return toMatMulNBits({ ...info, file })!;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

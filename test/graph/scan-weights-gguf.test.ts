import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { TensorInfo } from "../../src/checkpoint/types.js";
import { scanWeights } from "../../src/graph/scan-weights.js";

const root = fs.mkdtempSync(path.join(os.tmpdir(), "fs-scan-gguf-"));
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

const HALF_ONE = 0x3c00,
  HALF_INF = 0x7c00,
  HALF_NAN = 0x7e00;

/** `blocks` blocks of `blockBytes` random bytes with every half-float field (at `halfAt`) set to 1.0. */
function blocks(n: number, blockBytes: number, halfAt: number[], seed: number): Buffer {
  const b = Buffer.alloc(n * blockBytes);
  let s = seed;
  for (let i = 0; i < b.length; i++) b[i] = (s = (s * 1103515245 + 12345) >>> 0) >>> 24;
  for (let k = 0; k < n; k++) for (const o of halfAt) b.writeUInt16LE(HALF_ONE, k * blockBytes + o);
  return b;
}

function tensor(name: string, ggmlType: string, data: Buffer, elements: number): TensorInfo {
  const file = path.join(root, `${name}.bin`);
  fs.writeFileSync(file, Buffer.concat([Buffer.alloc(7), data])); // an odd offset, as in a real GGUF
  return { name, file, dtype: "F32", shape: [elements], byteOffset: 7, byteLength: data.length, encoding: { ggmlType } };
}

describe("scanWeights on GGUF tensors (checked on the stored blocks)", () => {
  it("a Q4_1 block whose scale is Inf: NaN where the 4-bit code is 0 (0·Inf), Inf elsewhere; clean blocks count nothing", () => {
    const data = blocks(4, 20, [0, 2], 7); // Q4_1: d, m, then 16 bytes of two 4-bit codes
    data.writeUInt16LE(HALF_INF, 2 * 20); // block 2's d
    // Worked by hand from the layout: element j < 16 is byte j's low nibble, j ≥ 16 byte j−16's high nibble.
    const codes = [...data.subarray(2 * 20 + 4, 2 * 20 + 20)].flatMap((q) => [q & 15, q >> 4]);
    const byElement = [...codes.filter((_, i) => i % 2 === 0), ...codes.filter((_, i) => i % 2 === 1)];
    const zeros = byElement.filter((q) => q === 0).length;
    const r = scanWeights({ tensors: new Map([["w", tensor("w", "Q4_1", data, 128)]]) });
    expect(r.nonFinite).toEqual([expect.objectContaining({ tensor: "w", nanCount: zeros, infCount: 32 - zeros, firstIndex: 64 })]);
  });

  it("a Q6_K super-block with a NaN scale makes all its 256 values NaN; a clean Q4_K tensor reports nothing", () => {
    const q6 = blocks(2, 210, [208], 3);
    q6.writeUInt16LE(HALF_NAN, 210 + 208);
    const q4k = blocks(3, 144, [0, 2], 5);
    const r = scanWeights({
      tensors: new Map([
        ["a", tensor("a", "Q6_K", q6, 512)],
        ["b", tensor("b", "Q4_K", q4k, 768)],
      ]),
    });
    expect(r.tensorsScanned).toBe(2);
    expect(r.bytesScanned).toBe(q6.length + q4k.length);
    expect(r.nonFinite).toEqual([expect.objectContaining({ tensor: "a", nanCount: 256, infCount: 0, firstIndex: 256 })]);
  });

  it("small chunks split a tensor only between whole blocks", () => {
    const data = blocks(9, 34, [0], 11); // Q8_0
    data.writeUInt16LE(HALF_INF, 8 * 34);
    const r = scanWeights({ tensors: new Map([["w", tensor("w", "Q8_0", data, 288)]]) }, undefined, { chunkBytes: 40 });
    expect(r.nonFinite).toHaveLength(1);
    expect(r.nonFinite[0].count).toBe(32);
  });
});

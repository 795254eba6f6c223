/**
 * Defects the fuzz suite found in the safetensors reader, one test each (the trace ones are in
 * test/trace/hardening.test.ts). The reference safetensors loader refuses all three: its tensors
 * must tile the data exactly.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { encodeSafetensors, readSafetensorsHeader } from "../../src/checkpoint/safetensors.js";
import { CheckpointError } from "../../src/util/errors.js";

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "fs-found-"));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

const seed = encodeSafetensors({
  a: { dtype: "F32", shape: [2], data: Float32Array.from([1, 2]) },
  b: { dtype: "F32", shape: [3], data: Float32Array.from([3, 4, 5]) },
});

function header(b: Buffer): { n: number; json: Record<string, { data_offsets: number[] }> } {
  const n = Number(b.readBigUInt64LE(0));
  return { n, json: JSON.parse(b.toString("utf8", 8, 8 + n)) };
}

function write(name: string, bytes: Buffer): string {
  const f = path.join(tmp, name);
  fs.writeFileSync(f, bytes);
  return f;
}

describe("safetensors data must be tiled exactly by its tensors", () => {
  it("the seed file reads", () => {
    expect(readSafetensorsHeader(write("ok.safetensors", seed)).tensors.map((t) => t.name)).toEqual(["a", "b"]);
  });

  it("bytes after the last tensor are refused", () => {
    const f = write("trailing.safetensors", Buffer.concat([seed, Buffer.alloc(4)]));
    expect(() => readSafetensorsHeader(f)).toThrow(CheckpointError);
    expect(() => readSafetensorsHeader(f)).toThrow(/not exactly covered[\s\S]*4 unaccounted for/);
  });

  it("a tensor dropped from the header (its bytes a gap) is refused", () => {
    const { n, json } = header(seed);
    delete (json as Record<string, unknown>).a;
    const text = Buffer.from(JSON.stringify(json));
    const len = Buffer.alloc(8);
    len.writeBigUInt64LE(BigInt(text.length));
    const f = write("gap.safetensors", Buffer.concat([len, text, seed.subarray(8 + n)]));
    expect(() => readSafetensorsHeader(f)).toThrow(/b\.data_offsets[\s\S]*begin 0/);
  });

  it("a header length shortened into its space padding (every tensor shifted) is refused", () => {
    const { n } = header(seed);
    const text = seed.toString("utf8", 8, 8 + n);
    const pad = text.length - text.trimEnd().length;
    expect(pad).toBeGreaterThan(0); // the writer pads to a multiple of 8
    const b = Buffer.from(seed);
    b.writeBigUInt64LE(BigInt(n - pad));
    expect(() => readSafetensorsHeader(write("shifted.safetensors", b))).toThrow(/not exactly covered/);
  });
});

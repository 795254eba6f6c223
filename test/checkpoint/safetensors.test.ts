import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { encodeSafetensors, f16ToF32, readSafetensorsHeader, readTensorF32, writeSafetensors } from "../../src/checkpoint/safetensors.js";
import { CheckpointError } from "../../src/util/errors.js";
import { f32ToF16 } from "../support/family-checkpoints.js";

const root = fs.mkdtempSync(path.join(os.tmpdir(), "fs-st-"));
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

/** A file laid out by hand (not by our writer): header, then tensors at known offsets. */
function handMade(file: string, header: object, data: Buffer, pad = true) {
  let json = JSON.stringify(header);
  if (pad) json += " ".repeat((8 - (json.length % 8)) % 8);
  const len = Buffer.alloc(8);
  len.writeBigUInt64LE(BigInt(json.length));
  fs.writeFileSync(file, Buffer.concat([len, Buffer.from(json), data]));
}

describe("safetensors reader", () => {
  it("reads a hand-laid file: offsets, dtypes, metadata, odd (unaligned) data offsets", () => {
    const file = path.join(root, "hand.safetensors");
    const data = Buffer.alloc(3 + 8 + 4 + 4);
    data.writeUInt8(7, 0); // U8 [3] first, so the next tensor starts at an odd offset
    data.writeFloatLE(1.5, 3);
    data.writeFloatLE(-2.25, 7);
    data.writeUInt16LE(0x3fc0, 11); // bf16 1.5
    data.writeUInt16LE(0xc010, 13); // bf16 -2.25
    data.writeUInt16LE(0x3e00, 15); // f16 1.5
    data.writeUInt16LE(0xc080, 17); // f16 -2.25
    handMade(
      file,
      {
        __metadata__: { format: "pt" },
        u: { dtype: "U8", shape: [3], data_offsets: [0, 3] },
        a: { dtype: "F32", shape: [2], data_offsets: [3, 11] },
        b: { dtype: "BF16", shape: [1, 2], data_offsets: [11, 15] },
        h: { dtype: "F16", shape: [2], data_offsets: [15, 19] },
      },
      data,
    );
    const hdr = readSafetensorsHeader(file);
    expect(hdr.metadata).toEqual({ format: "pt" });
    const byName = new Map(hdr.tensors.map((t) => [t.name, t]));
    expect(byName.get("a")).toMatchObject({ dtype: "F32", shape: [2], byteOffset: hdr.dataStart + 3, byteLength: 8 });
    expect(byName.get("a")!.byteOffset % 2).toBe(1); // padded header → data starts 8-aligned, +3
    expect(readTensorF32(byName.get("a")!)).toEqual(new Float32Array([1.5, -2.25]));
    expect(readTensorF32(byName.get("b")!)).toEqual(new Float32Array([1.5, -2.25]));
    expect(readTensorF32(byName.get("h")!)).toEqual(new Float32Array([1.5, -2.25]));
    expect(() => readTensorF32(byName.get("u")!)).toThrow(CheckpointError);
  });

  it("writer output is what the reader expects, atomically (no temp file left)", () => {
    const file = path.join(root, "w.safetensors");
    const x = new Float32Array([0, 1, -1, 3.5, 1e-3, 65504]);
    writeSafetensors(file, { x: { dtype: "F32", shape: [2, 3], data: x } }, { k: "v" });
    expect(fs.readdirSync(root).filter((f) => f.includes(".tmp-"))).toEqual([]);
    const hdr = readSafetensorsHeader(file);
    expect(readTensorF32(hdr.tensors[0])).toEqual(x);
    expect((hdr.dataStart - 8) % 8).toBe(0);
    expect(() => encodeSafetensors({ x: { dtype: "F32", shape: [4], data: x } })).toThrow(CheckpointError);
  });

  it("f16 decode matches IEEE half (subnormal, max, inf, nan)", () => {
    expect(f16ToF32(0x0001)).toBe(2 ** -24);
    expect(f16ToF32(0x7bff)).toBe(65504);
    expect(f16ToF32(0xfc00)).toBe(-Infinity);
    expect(f16ToF32(0x7e00)).toBeNaN();
    for (const v of [0.5, -3, 1024, 2 ** -20]) expect(f16ToF32(f32ToF16(v))).toBe(v);
  });

  it("rejects files too short, hostile header lengths and prototype-named dtypes", () => {
    const tiny = path.join(root, "tiny.safetensors");
    fs.writeFileSync(tiny, Buffer.from([1, 2, 3]));
    expect(() => readSafetensorsHeader(tiny)).toThrow(/too short/);
    const f = path.join(root, "len.safetensors");
    const len = Buffer.alloc(8);
    len.writeBigUInt64LE(2n ** 63n);
    fs.writeFileSync(f, Buffer.concat([len, Buffer.from("{}")]));
    const e = (() => {
      try {
        readSafetensorsHeader(f);
      } catch (err) {
        return err as CheckpointError;
      }
    })()!;
    expect(e.field).toBe("header length");
    const g = path.join(root, "proto.safetensors");
    handMade(g, { t: { dtype: "constructor", shape: [1], data_offsets: [0, 4] } }, Buffer.alloc(4));
    expect(() => readSafetensorsHeader(g)).toThrow(/one of F64/);
    expect(() => readSafetensorsHeader(path.join(root, "missing.safetensors"))).toThrow(CheckpointError);
  });
});

/**
 * The checks the library's model opening does for every caller (CLI, samplers, notebooks):
 * createEngine scans the weights for NaN/Inf unless told not to, and forward refuses inputs whose
 * positions exceed max_position_embeddings (counted from the attention mask, so left padding
 * does not count).
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { readSafetensorsHeader } from "../../src/checkpoint/safetensors.js";
import { createEngine } from "../../src/runtime/engine.js";
import { CheckpointError, SettingsError } from "../../src/util/errors.js";

const root = path.resolve(import.meta.dirname, "..", "..");
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "fs-open-checks-"));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

describe("createEngine", () => {
  it("refuses weights with an Inf by default, naming the tensor; scanWeights: false opens them", async () => {
    const dir = path.join(tmp, "inf");
    fs.cpSync(path.join(root, "models/tiny-qwen"), dir, { recursive: true });
    const file = path.join(dir, "model.safetensors");
    const t = readSafetensorsHeader(file).tensors.find((x) => x.name === "model.norm.weight")!;
    const fd = fs.openSync(file, "r+");
    fs.writeSync(fd, Buffer.from([0x00, 0x00, 0x80, 0xff]), 0, 4, t.byteOffset); // −Inf, F32 little-endian
    fs.closeSync(fd);
    const err = await createEngine(dir, { probes: {} }).catch((e) => e);
    expect(err).toBeInstanceOf(CheckpointError);
    expect(err.field).toBe("model.norm.weight");
    expect(err.message).toMatch(/0 NaN, 1 Inf, first at flat index 0/);
    const engine = await createEngine(dir, { probes: {}, scanWeights: false });
    await engine.dispose();
  });

  it("forward refuses more positions than max_position_embeddings; left padding does not count", async () => {
    const engine = await createEngine(path.join(root, "models/tiny-llama"), { probes: {}, threads: 1 });
    try {
      expect(engine.spec.maxPositionEmbeddings).toBe(512);
      const err = await engine.forward({ ids: new Int32Array(513).fill(5), batch: 1, seq: 513 }).catch((e) => e);
      expect(err).toBeInstanceOf(SettingsError);
      expect(err.message).toMatch(/at most 512 positions[\s\S]*513 positions/);
      // 513 slots, the first one padding: positions 0..511
      const mask = new Uint8Array(513).fill(1);
      mask[0] = 0;
      const out = await engine.forward({
        ids: new Int32Array(513).fill(5),
        batch: 1,
        seq: 513,
        attentionMask: mask,
        logitRows: Int32Array.of(512),
      });
      expect(out.logitRows).toEqual(Int32Array.of(512));
    } finally {
      await engine.dispose();
    }
  });
});

/**
 * openModel: the one way to open a model. Checked against the pieces it bundles (the checkpoint's own
 * config and tokenizer files, the presets module) and against a corrupted copy for the weight scan.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openCheckpoint } from "../../src/checkpoint/checkpoint.js";
import { openModel, openModelFiles } from "../../src/model/open.js";
import { tinyPreset } from "../../src/model/presets.js";
import { CheckpointError } from "../../src/util/errors.js";
import { probeName } from "../../src/util/probes.js";

const TINY = path.resolve(__dirname, "../../models/tiny-llada");
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "fs-open-"));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

describe("openModel", () => {
  it("returns checkpoint, spec, family, tokenizer, default preset and an engine with the probes asked for", async () => {
    const config = JSON.parse(fs.readFileSync(path.join(TINY, "config.json"), "utf8"));
    let asked = -1;
    const probes = (spec: { numLayers: number }) => {
      asked = spec.numLayers;
      return { received: true, pattern: { layers: [spec.numLayers - 1] } };
    };
    const m = await openModel(TINY, { threads: 1, probes });
    try {
      expect(m.name).toBe("tiny-llada");
      expect(m.family).toBe("llada");
      expect(m.spec.numLayers).toBe(config.n_layers);
      expect(asked).toBe(config.n_layers);
      expect(m.checkpoint.dir).toBe(openCheckpoint(TINY).dir);
      expect(m.preset).toEqual(tinyPreset(m.spec));
      // the tokenizer is the checkpoint's own: every word of tokenizer.json's vocabulary maps to its id
      const vocab = JSON.parse(fs.readFileSync(path.join(TINY, "tokenizer.json"), "utf8")).model.vocab as Record<string, number>;
      const [word, id] = Object.entries(vocab)[10];
      expect(m.tokenizer.tokenToId(word)).toBe(id);
      const ids = Int32Array.from([1, 5, 9, 12]);
      const out = await m.engine.forward({ ids, batch: 1, seq: 4 });
      expect([...out.probes.keys()].sort()).toEqual(
        [...Array.from({ length: m.spec.numLayers }, (_, l) => probeName.received(l)), probeName.pattern(m.spec.numLayers - 1)].sort(),
      );
    } finally {
      await m.dispose();
    }
  });

  it("refuses weights holding NaN by default (naming the tensor), and opens them with scanWeights: false", () => {
    const copy = path.join(tmp, "nan-llada");
    fs.cpSync(TINY, copy, { recursive: true });
    const t =
      openCheckpoint(copy).tensors.get("model.norm.weight") ?? [...openCheckpoint(copy).tensors.values()].find((x) => x.dtype === "F32")!;
    const fd = fs.openSync(t.file, "r+");
    const nan = Buffer.alloc(4);
    nan.writeUInt32LE(0x7fc00000);
    fs.writeSync(fd, nan, 0, 4, t.byteOffset + 4);
    fs.closeSync(fd);
    let err: unknown;
    try {
      openModelFiles(copy);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(CheckpointError);
    expect((err as CheckpointError).field).toBe(t.name);
    expect((err as CheckpointError).found).toMatch(/1 NaN, 0 Inf, first at flat index 1\)/);
    expect(openModelFiles(copy, { scanWeights: false }).spec.family).toBe("llada");
  });

  it("a checkpoint without tokenizer.json: a CheckpointError, or tokenizer undefined when optional", () => {
    const copy = path.join(tmp, "no-tok");
    fs.cpSync(TINY, copy, { recursive: true });
    fs.rmSync(path.join(copy, "tokenizer.json"));
    expect(() => openModelFiles(copy)).toThrow(CheckpointError);
    const files = openModelFiles(copy, { tokenizer: "optional" });
    expect(files.tokenizer).toBeUndefined();
    expect(files.preset.promptFormat).not.toBe("tiny-world"); // without a tokenizer nothing says "tiny world"
  });
});

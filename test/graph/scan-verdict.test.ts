/**
 * assertFiniteWeights' verdict cache: a clean verdict on a checkpoint's files is remembered (keyed by
 * each file's real path, size and mtime), so the next check of the same files reads nothing
 * (`cached: true`); a rewritten file is scanned again and its NaN refused; a refusal is never
 * remembered.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openCheckpoint } from "../../src/checkpoint/checkpoint.js";
import { resolveModelSpec } from "../../src/graph/adapters/index.js";
import { assertFiniteWeights } from "../../src/graph/scan-weights.js";
import { CheckpointError } from "../../src/util/errors.js";
import { writeTinyCheckpoint } from "../support/family-checkpoints.js";

const root = fs.mkdtempSync(path.join(os.tmpdir(), "fs-verdict-"));
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

describe("assertFiniteWeights: the clean-verdict cache", () => {
  it("skips a second scan of the same files, scans a rewritten file again and refuses its NaN every time", () => {
    const dir = path.join(root, "model");
    const cache = path.join(root, "cache");
    writeTinyCheckpoint(dir, "llama", { dtype: "F32", layers: 2 });
    const check = () => {
      const ck = openCheckpoint(dir);
      return assertFiniteWeights(ck, resolveModelSpec(ck), { verdictCache: cache });
    };
    const first = check();
    expect(first.cached).toBeUndefined();
    expect(first.bytesScanned).toBeGreaterThan(0);
    const second = check();
    expect(second.cached).toBe(true);
    expect(second.bytesScanned).toBe(0);
    expect(second.tensorsScanned).toBe(first.tensorsScanned);

    // a NaN written in place (the file's mtime changes): scanned again, refused, and not remembered
    const ck = openCheckpoint(dir);
    const norm = ck.tensors.get("model.norm.weight")!;
    const fd = fs.openSync(norm.file, "r+");
    fs.writeSync(fd, Buffer.from(Uint32Array.of(0x7fc00001).buffer), 0, 4, norm.byteOffset);
    fs.closeSync(fd);
    const later = new Date(Date.now() + 5000);
    fs.utimesSync(norm.file, later, later);
    expect(check).toThrow(CheckpointError);
    expect(check).toThrow(/NaN/);
    // without a cache folder nothing is remembered at all
    const ck2 = openCheckpoint(dir);
    expect(() => assertFiniteWeights(ck2, resolveModelSpec(ck2))).toThrow(/NaN/);
  });
});

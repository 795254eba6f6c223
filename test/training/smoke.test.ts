/**
 * `training/train.py --smoke`: a few steps of all four tiny models, saved in their real formats.
 * Needs Debian's python3-torch under /usr/bin/python3 (CI installs it only if asked: see
 * training/README.md); without it the test is skipped and says why.
 */
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { openCheckpoint } from "../../src/checkpoint/checkpoint.js";
import { resolveModelSpec } from "../../src/graph/adapters/index.js";

const ROOT = path.resolve(import.meta.dirname, "../..");
const PY = "/usr/bin/python3";

function torchAvailable(): boolean {
  if (!fs.existsSync(PY)) return false;
  const r = spawnSync(PY, ["-c", "import torch, numpy"], { encoding: "utf8", timeout: 60_000 });
  return r.status === 0;
}
const HAS_TORCH = torchAvailable();
const reason = HAS_TORCH ? "" : " (skipped: /usr/bin/python3 cannot import torch — apt-get install python3-torch python3-numpy)";

describe(`training/train.py --smoke${reason}`, () => {
  it.skipIf(!HAS_TORCH)(
    "trains a few steps of each model and saves all four real formats",
    () => {
      const out = fs.mkdtempSync(path.join(os.tmpdir(), "tiny-smoke-"));
      try {
        const r = spawnSync(PY, ["training/train.py", "--smoke", "--out", out], {
          cwd: ROOT,
          encoding: "utf8",
          timeout: 170_000,
          env: { ...process.env, OMP_NUM_THREADS: "1" },
        });
        expect(r.status, r.stderr.slice(-2000)).toBe(0);
        const want: Record<string, { family: string; causal: boolean; logitShift: number }> = {
          "tiny-llama": { family: "llama", causal: true, logitShift: 0 },
          "tiny-qwen": { family: "qwen2", causal: true, logitShift: 0 },
          "tiny-llada": { family: "llada", causal: false, logitShift: 0 },
          "tiny-dream": { family: "dream", causal: false, logitShift: 1 },
        };
        for (const [name, w] of Object.entries(want)) {
          const run = path.join(out, name);
          const spec = resolveModelSpec(openCheckpoint(path.join(run, "final")));
          expect(spec.family, name).toBe(w.family);
          expect(spec.causal, name).toBe(w.causal);
          expect(spec.logitShift, name).toBe(w.logitShift);
          // Losses are logged, finite, and the validation loss (fixed batches and masks) went down.
          const train = fs
            .readFileSync(path.join(run, "metrics.csv"), "utf8")
            .trim()
            .split("\n")
            .slice(1)
            .map((l) => Number(l.split(",")[4]));
          expect(train.length, name).toBeGreaterThanOrEqual(2);
          for (const v of train) expect(Number.isFinite(v), name).toBe(true);
          const val = fs
            .readFileSync(path.join(run, "eval.csv"), "utf8")
            .trim()
            .split("\n")
            .slice(1)
            .map((l) => Number(l.split(",")[3]));
          expect(val.length, name).toBe(2);
          expect(val[1], name).toBeLessThan(val[0]);
          const summary = JSON.parse(fs.readFileSync(path.join(run, "summary.json"), "utf8"));
          expect(summary.steps, name).toBe(6);
        }
        // tiny-dream starts from tiny-qwen's final weights.
        const dream = JSON.parse(fs.readFileSync(path.join(out, "tiny-dream/summary.json"), "utf8"));
        expect(dream.init_from).toBe("tiny-qwen");
      } finally {
        fs.rmSync(out, { recursive: true, force: true });
      }
    },
    180_000,
  );

  it.skipIf(!HAS_TORCH)("copy batches repeat a run of words; MDMs mask only the second run, ARMs learn the whole sequence", () => {
    const code = `
import sys, json
sys.path.insert(0, "training")
import train, world, tokenizer
w = world.World(1234); tok = tokenizer.Tokenizer(w.words())
hp = dict(train.DEFAULTS); hp["p_copy"] = 1.0
out = {}
for kind in ("arm", "llada"):
    b = train.make_batch(w, tok, hp, 2000, kind)
    rows = []
    for ids, reg in zip(b["ids"].tolist(), b["region"].tolist()):
        ids = [i for i in ids if i != tok.pad_id]
        n = (len(ids) - 2) // 2
        rows.append({"bos": ids[0] == tok.bos_id, "eos": ids[-1] == tok.eos_id, "repeat": ids[1:1 + n] == ids[1 + n:1 + 2 * n],
                     "masked_from": reg.index(1), "n": n, "special": any(i < train.FIRST_WORD_ID for i in ids[1:-1])})
    out[kind] = rows
hp["p_copy"] = 0.0; hp["copy_warmup"] = 10
def repeated(step):
    ids = [i for i in train.make_batch(w, tok, hp, step, "arm")["ids"][0].tolist() if i != tok.pad_id]
    n = (len(ids) - 2) // 2
    return ids[1:1 + n] == ids[1 + n:1 + 2 * n]
out["warmup"] = [repeated(s) for s in (0, 5, 9, 10, 50)]
print(json.dumps(out))
`;
    const r = spawnSync(PY, ["-c", code], { cwd: ROOT, encoding: "utf8", timeout: 60_000 });
    expect(r.status, r.stderr.slice(-2000)).toBe(0);
    const o = JSON.parse(r.stdout);
    for (const kind of ["arm", "llada"]) {
      expect(o[kind]).toHaveLength(32);
      for (const row of o[kind]) {
        expect(row.bos && row.eos && row.repeat, kind).toBe(true);
        expect(row.special).toBe(false);
        expect(row.n).toBeGreaterThanOrEqual(6);
        expect(row.n).toBeLessThanOrEqual(24);
        expect(row.masked_from).toBe(kind === "arm" ? 1 : 1 + row.n);
      }
    }
    // inside the warm-up (steps < 10) every batch is a copy batch; after it, with p_copy 0, none is
    expect(o.warmup).toEqual([true, true, true, false, false]);
  });
});

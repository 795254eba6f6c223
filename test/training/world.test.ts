/**
 * The committed world files (models/world) are exactly what `training/world.py` regenerates from the
 * seed — on any Python 3.10+ (the generator uses the standard library only) and under any hash seed.
 */
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import * as zlib from "node:zlib";
import { describe, expect, it } from "vitest";

const ROOT = path.resolve(import.meta.dirname, "../..");
const PY = ["python3", "/usr/bin/python3"].find((p) => spawnSync(p, ["-c", "import sys; assert sys.version_info >= (3, 10)"]).status === 0);

describe(`training/world.py${PY ? "" : " (skipped: no python3 ≥ 3.10 on PATH)"}`, () => {
  it.skipIf(!PY)("regenerates the content of models/world exactly, independent of PYTHONHASHSEED", () => {
    for (const hashSeed of ["1", "2"]) {
      const out = fs.mkdtempSync(path.join(os.tmpdir(), "tiny-world-"));
      try {
        const r = spawnSync(PY!, ["training/world.py", "--out", out], {
          cwd: ROOT,
          encoding: "utf8",
          timeout: 60_000,
          env: { ...process.env, PYTHONHASHSEED: hashSeed },
        });
        expect(r.status, r.stderr).toBe(0);
        for (const f of ["eval-heldout.jsonl.gz", "split.json.gz", "world.json"]) {
          // Compare content, not gzip bytes (zlib builds may compress differently).
          const read = (p: string) => (p.endsWith(".gz") ? zlib.gunzipSync(fs.readFileSync(p)) : fs.readFileSync(p));
          expect(read(path.join(out, f)).equals(read(path.join(ROOT, "models/world", f))), f).toBe(true);
        }
      } finally {
        fs.rmSync(out, { recursive: true, force: true });
      }
    }
  });

  it.skipIf(!PY)("fresh training people are never held-out people, and their facts change between examples", () => {
    const code = `
import random, sys, json
sys.path.insert(0, "training")
import world
w = world.World(1234)
held = set(w.val) | set(w.test)
rng = random.Random(5)
seen, clash, leaks, missing = {}, 0, 0, 0
for i in range(2000):
    r = w.qa_example(rng, "train", rng.randint(0, 9), fresh=True)
    gold = [c for c in r["ctxs"] if c["isgold"]][0]
    missing += r["answers"][0] not in gold["text"]
    leaks += any(c["title"] in held for c in r["ctxs"])
    key = (r["subject"], r["relation"])
    if key in seen and seen[key] != r["answers"][0]:
        clash += 1
    seen[key] = r["answers"][0]
doc = w.lm_document(random.Random(1), fresh=True)
print(json.dumps({"missing": missing, "leaks": leaks, "clash": clash, "doc_held": any(n in doc for n in held)}))
`;
    const r = spawnSync(PY!, ["-c", code], { cwd: ROOT, encoding: "utf8", timeout: 60_000 });
    expect(r.status, r.stderr).toBe(0);
    const o = JSON.parse(r.stdout);
    expect(o.missing).toBe(0);
    expect(o.leaks).toBe(0);
    expect(o.doc_held).toBe(false);
    // 120 × 160 name pairs, so a few subjects recur; when they do, the attribute was drawn anew
    expect(o.clash).toBeGreaterThan(0);
  });
});

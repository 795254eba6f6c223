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
          cwd: ROOT, encoding: "utf8", timeout: 60_000, env: { ...process.env, PYTHONHASHSEED: hashSeed },
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
});

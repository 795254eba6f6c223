/**
 * CLAIMS.md at the repository's root is rendered from the committed large runs (findings/*.findings.json) by
 * scripts/large-runs.sh. It must be exactly what `scripts/render-claims.ts findings` prints from them, so the
 * committed document cannot drift from the committed data (a verdict edited by hand, or findings re-run and
 * committed without rendering CLAIMS.md again).
 */
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";

const ROOT = path.resolve(__dirname, "../..");
const TMP = fs.mkdtempSync(path.join(os.tmpdir(), "claims-md-"));
afterAll(() => fs.rmSync(TMP, { recursive: true, force: true }));

function renderClaims(args: string[]): string {
  const r = spawnSync(process.execPath, ["--import", "tsx", path.join(ROOT, "scripts", "render-claims.ts"), ...args], {
    cwd: ROOT,
    encoding: "utf8",
    timeout: 60_000,
  });
  expect(r.status, r.stderr).toBe(0);
  return r.stdout;
}

/** Where `<root>/CLAIMS.md` first differs from `render-claims <root>/findings` (line number and both lines), or null when equal. */
function drift(root: string): string | null {
  const want = renderClaims([path.join(root, "findings")]);
  const have = fs.readFileSync(path.join(root, "CLAIMS.md"), "utf8");
  if (have === want) return null;
  const [a, b] = [have.split("\n"), want.split("\n")];
  const i = a.findIndex((line, k) => line !== b[k]);
  const at = i === -1 ? a.length : i;
  return `line ${at + 1}: CLAIMS.md has ${JSON.stringify(a[at] ?? "(end)")}, render-claims gives ${JSON.stringify(b[at] ?? "(end)")}`;
}

describe("CLAIMS.md from the committed findings", () => {
  it("the check finds a CLAIMS.md that differs from its findings (a scratch copy with one verdict edited)", () => {
    const sink = (model: string, value: number, ci95: [number, number]) => ({
      claim: "sink-fixed-arm",
      model,
      family: "llama",
      tier: "tiny",
      quantity: "top-1 key at position 0, % of (step, layer) cells",
      value,
      ci95,
      n: 100,
    });
    fs.mkdirSync(path.join(TMP, "findings"));
    fs.writeFileSync(
      path.join(TMP, "findings", "claims.findings.json"),
      JSON.stringify({ notebook: "grid claims", findings: [sink("tiny-llama", 75, [70, 80])], provenance: { grid: "claims" }, report: {} }),
    );
    renderClaims([path.join(TMP, "findings"), "--out", path.join(TMP, "CLAIMS.md")]);
    expect(drift(TMP)).toBeNull();
    const md = fs.readFileSync(path.join(TMP, "CLAIMS.md"), "utf8");
    expect(md).toContain("tiny: reproduced");
    fs.writeFileSync(path.join(TMP, "CLAIMS.md"), md.replace("tiny: reproduced", "tiny: not reproduced"));
    expect(drift(TMP)).toMatch(/^line \d+: CLAIMS\.md has ".*tiny: not reproduced.*", render-claims gives ".*tiny: reproduced/);
  });

  const committed = fs.existsSync(path.join(ROOT, "CLAIMS.md"));
  it.skipIf(!committed)(
    `the root CLAIMS.md is exactly render-claims findings${committed ? "" : " (skipped: there is no CLAIMS.md at the root yet; scripts/large-runs.sh renders it after the large runs)"}`,
    () => {
      expect(drift(ROOT)).toBeNull();
    },
  );
});

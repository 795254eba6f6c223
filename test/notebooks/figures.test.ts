/**
 * The figure notebooks (notebooks/01–07): executed headless on the embedded tiny models through
 * `scripts/reproduce.sh` (what `npm run reproduce` runs), then every saved .ipynb is read back.
 *
 * Checked per notebook: no error and no stderr output; the expected figure MIME bundles, each with
 * a static image (PNG or SVG) and text/plain, so the notebook reads on GitHub; figure payloads that
 * agree with the model they came from (layer counts, region names, value ranges); and the generated
 * "what we see" markdown. A second block checks the committed copies (outputs present, sizes small).
 *
 * Skips, with a message, only when setup has not run or the tiny models are not in models/ yet
 * (`FLOATSCOPE_MODELS` points elsewhere, as in the notebooks).
 */
import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT, setupMissing } from "../kernel/env.js";

const run = promisify(execFile);

const NOTEBOOKS = [
  "01-temporal-drift",
  "02-absorption",
  "03-qk-decomposition",
  "04-retrieval-heads",
  "05-region-rollout",
  "06-qa-rag",
  "07-floating-token-types",
] as const;
type Name = (typeof NOTEBOOKS)[number];

const V = (kind: string) => `application/vnd.floatscope.${kind}.v1+json`;
/** Figure MIME type and the least number of such outputs each notebook shows. */
const EXPECTED: Record<Name, [string, number][]> = {
  "01-temporal-drift": [[V("drift"), 4], [V("scrubber"), 1]],
  "02-absorption": [[V("absorption"), 2]],
  "03-qk-decomposition": [[V("qk"), 6]],
  "04-retrieval-heads": [[V("retrieval"), 2]],
  "05-region-rollout": [[V("rollout"), 4]],
  "06-qa-rag": [[V("heatmap"), 1]],
  "07-floating-token-types": [[V("token-types"), 6]],
};

interface Output {
  output_type: string;
  name?: string;
  text?: string | string[];
  data?: Record<string, unknown>;
}
interface Notebook {
  cells: { cell_type: string; source: string | string[]; outputs?: Output[] }[];
  metadata: { kernelspec?: { name?: string } };
}
const join1 = (v: unknown) => (Array.isArray(v) ? v.join("") : typeof v === "string" ? v : "");
const outputsOf = (nb: Notebook) => nb.cells.flatMap((c) => c.outputs ?? []);
const figures = (nb: Notebook, mime: string) => outputsOf(nb).filter((o) => o.data && mime in o.data);

const MODELS = resolve(ROOT, "notebooks", process.env.FLOATSCOPE_MODELS ?? "../models");
const TINY = ["tiny-llama", "tiny-qwen", "tiny-llada", "tiny-dream"];
const config = (m: string) => JSON.parse(readFileSync(join(MODELS, m, "config.json"), "utf8")) as { num_hidden_layers?: number; n_layers?: number; num_attention_heads?: number; n_heads?: number };
const layersOf = (m: string) => { const c = config(m); return (c.num_hidden_layers ?? c.n_layers)!; };
const headsOf = (m: string) => { const c = config(m); return (c.num_attention_heads ?? c.n_heads)!; };

function skipReason(): string | null {
  const s = setupMissing();
  if (s) return s;
  const absent = TINY.filter((m) => !existsSync(join(MODELS, m, "config.json")));
  return absent.length ? `tiny models not in ${MODELS} yet (${absent.join(", ")}): training publishes them there` : null;
}
const missing = skipReason();
if (missing) console.warn(`[figure notebook tests skipped] ${missing}`);

describe.skipIf(missing !== null)("npm run reproduce: the figure notebooks on the tiny models", () => {
  let dir = "";
  let log = "";
  const nbs = {} as Record<Name, Notebook>;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "floatscope-figures-"));
    const t0 = Date.now();
    try {
      const r = await run("bash", ["scripts/reproduce.sh", "--output-dir", dir, ...NOTEBOOKS.map((n) => `notebooks/${n}.ipynb`)], {
        cwd: ROOT,
        env: { ...process.env, FLOATSCOPE_SKIP_SETUP: "1" },
        timeout: 1_500_000,
        maxBuffer: 64 * 1024 * 1024,
      });
      log = r.stdout + r.stderr;
    } catch (e) {
      const err = e as { stdout?: string; stderr?: string };
      log = (err.stdout ?? "") + (err.stderr ?? "");
    }
    console.log(`[notebooks] figure notebooks executed in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
    for (const n of NOTEBOOKS) {
      const p = join(dir, `${n}.ipynb`);
      if (existsSync(p)) nbs[n] = JSON.parse(readFileSync(p, "utf8")) as Notebook;
    }
  }, 1_600_000);

  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("runs all seven notebooks without errors", () => {
    expect(log).toMatch(/7 of 7 notebooks ran without errors/);
    for (const n of NOTEBOOKS) {
      expect(nbs[n], n).toBeDefined();
      const outs = outputsOf(nbs[n]);
      expect(outs.filter((o) => o.output_type === "error"), n).toEqual([]);
      expect(outs.filter((o) => o.output_type === "stream" && o.name === "stderr").map((o) => join1(o.text)), n).toEqual([]);
      // every code cell ran (tslab sends no error message on failure: a failed cell stops the run)
      const code = nbs[n].cells.filter((c) => c.cell_type === "code");
      expect(code.every((c) => (c as { execution_count?: number | null }).execution_count != null), n).toBe(true);
    }
  });

  it.each(NOTEBOOKS.map((n) => [n]))("%s shows its figures as full bundles: our JSON, a static image, text/plain", (n) => {
    for (const [mime, least] of EXPECTED[n as Name]) {
      const outs = figures(nbs[n as Name], mime);
      expect(outs.length, `${n}: ${mime}`).toBeGreaterThanOrEqual(least);
      for (const o of outs) {
        expect(o.output_type).toBe("display_data");
        const data = o.data!;
        expect(typeof data[mime]).toBe("object");
        const png = join1(data["image/png"]);
        const svg = join1(data["image/svg+xml"]);
        expect(png.length > 100 || svg.startsWith("<svg"), `${n}: image fallback`).toBe(true);
        if (png) expect(Buffer.from(png, "base64").subarray(1, 4).toString("latin1")).toBe("PNG");
        expect(join1(data["text/plain"]).length).toBeGreaterThan(10);
      }
    }
  });

  it.each(NOTEBOOKS.map((n) => [n]))("%s ends with a generated 'what we see' text quoting its numbers", (n) => {
    const md = outputsOf(nbs[n as Name]).filter((o) => o.data && "text/markdown" in o.data).map((o) => join1(o.data!["text/markdown"]));
    expect(md.length).toBeGreaterThan(0);
    const last = md[md.length - 1];
    expect(last).toMatch(/tiny-(llama|qwen|llada|dream)/);
    expect(last).toMatch(/\d/);
  });

  it("02: one absorption line per model over every layer, percentages in [0, 100], bands from all samples", () => {
    const specs = figures(nbs["02-absorption"], V("absorption")).map((o) => o.data![V("absorption")] as { rule: string; series: { model: string; layers: number[]; mean: number[]; std: number[] }[] });
    expect(specs.map((s) => s.rule).join(" | ")).toMatch(/upstream/);
    for (const s of specs) {
      expect(s.series.map((x) => x.model).sort()).toEqual([...TINY].sort());
      for (const x of s.series) {
        expect(x.layers).toEqual(Array.from({ length: layersOf(x.model) }, (_, l) => l));
        for (const v of x.mean) expect(v >= 0 && v <= 100).toBe(true);
        for (const v of x.std) expect(v >= 0 && v <= 50).toBe(true);
      }
    }
  });

  it("01/03: drift views cover the shallow and the deep layer; QK panels are square over the sequence", () => {
    const drift = figures(nbs["01-temporal-drift"], V("drift")).map((o) => o.data![V("drift")] as { model: string; layers: number[]; steps: number[]; heat: { shape: number[] } });
    for (const m of ["tiny-llada", "tiny-dream"]) {
      const layers = drift.filter((d) => d.model === m).map((d) => d.layers[0]);
      expect(layers).toEqual([0, layersOf(m) - 1]);
    }
    for (const d of drift) expect(d.heat.shape[0]).toBe(d.steps.length);
    const qk = figures(nbs["03-qk-decomposition"], V("qk")).map((o) => o.data![V("qk")] as { tokens: string[]; panels: { score: { shape: number[] }; floating: number[] }[] });
    for (const q of qk) {
      for (const p of q.panels) {
        expect(p.score.shape).toEqual([q.tokens.length, q.tokens.length]);
        expect(p.floating.length).toBeGreaterThan(0); // the QK rule falls back to the argmax
      }
    }
  });

  it("04: retrieval heatmaps are layer × head of each MDM on [0, 1]", () => {
    const specs = figures(nbs["04-retrieval-heads"], V("retrieval")).map((o) => o.data![V("retrieval")] as { models: { model: string; scores: { shape: number[] } }[] });
    expect(specs.map((s) => s.models[0].model).sort()).toEqual(["tiny-dream", "tiny-llada"]);
    for (const s of specs) expect(s.models[0].scores.shape).toEqual([layersOf(s.models[0].model), headsOf(s.models[0].model)]);
  });

  it("05: rollouts for gold at 1/5/10 name the gold document; the ARM rollout carries the causal warning", () => {
    const specs = figures(nbs["05-region-rollout"], V("rollout")).map((o) => o.data![V("rollout")] as { model: string; regions: string[]; condition?: string; warnings?: string[]; stationary: number[] });
    const llada = specs.filter((s) => s.model === "tiny-llada");
    expect(llada.map((s) => s.condition)).toEqual(["gold doc at 1 of 10", "gold doc at 5 of 10", "gold doc at 10 of 10"]);
    llada.forEach((s, i) => {
      expect(s.regions.filter((r) => r.startsWith("Doc") || r === "Gold Doc")).toHaveLength(10);
      const docs = s.regions.filter((r) => r.startsWith("Doc") || r === "Gold Doc");
      expect(docs.indexOf("Gold Doc")).toBe([0, 4, 9][i]);
      expect(s.stationary.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 6);
    });
    const arm = specs.filter((s) => s.model === "tiny-llama");
    expect(arm.length).toBeGreaterThan(0);
    expect((arm[0].warnings ?? []).join(" ")).toMatch(/causal/);
  });

  it("06: the Table-1 heatmap has one row per model and Acc/F1 in percent", () => {
    const [h] = figures(nbs["06-qa-rag"], V("heatmap")).map((o) => o.data![V("heatmap")] as { yLabels: string[]; xLabels: string[]; values: (number | null)[][] });
    expect(h.yLabels).toEqual(TINY);
    expect(h.xLabels.slice(0, 4)).toEqual(["w/o RAG Acc", "w/o RAG F1", "RAG Acc", "RAG F1"]);
    for (const row of h.values) for (const v of row.slice(0, 4)) expect(v !== null && v >= 0 && v <= 100).toBe(true);
    const md = outputsOf(nbs["06-qa-rag"]).map((o) => join1(o.data?.["text/markdown"])).join("\n");
    expect(md).toMatch(/NQ-open (skipped|: \d+ questions)/);
  });

  it("07: token-type shares per band sum to 1 over the types", () => {
    const specs = figures(nbs["07-floating-token-types"], V("token-types")).map((o) => o.data![V("token-types")] as { bands: { count: number; shares: number[] }[] });
    for (const s of specs) for (const b of s.bands) if (b.count > 0) expect(b.shares.reduce((a, x) => a + x, 0)).toBeCloseTo(1, 9);
  });
});

describe("the committed figure notebooks", () => {
  it.each(NOTEBOOKS.map((n) => [n]))("%s uses the floatscope kernel, imports only floatscope (+ node:), and stays small", (n) => {
    const p = join(ROOT, "notebooks", `${n}.ipynb`);
    expect(statSync(p).size).toBeLessThan(2 * 1024 * 1024);
    const nb = JSON.parse(readFileSync(p, "utf8")) as Notebook;
    expect(nb.metadata.kernelspec?.name).toBe("floatscope");
    const code = nb.cells.filter((c) => c.cell_type === "code").map((c) => join1(c.source)).join("\n");
    const imports = [...code.matchAll(/from\s+"([^"]+)"/g)].map((m) => m[1]);
    expect(imports.length).toBeGreaterThan(0);
    for (const i of imports) expect(i === "floatscope" || i.startsWith("node:"), i).toBe(true);
    // the one model path, overridable from the environment
    expect(code).toContain('process.env.FLOATSCOPE_MODELS ?? "../models"');
    // committed with outputs (from a run on the tiny models), and none of them an error
    const outs = outputsOf(nb);
    if (outs.length > 0) {
      expect(outs.filter((o) => o.output_type === "error" || (o.output_type === "stream" && o.name === "stderr"))).toEqual([]);
      for (const [mime] of EXPECTED[n as Name]) expect(figures(nb, mime).length, `${n}: ${mime}`).toBeGreaterThan(0);
    }
  });
});

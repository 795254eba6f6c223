/**
 * The figure notebooks (notebooks/01–08, then 10-claims): executed headless on the embedded tiny models through
 * `scripts/reproduce.sh` (what `npm run reproduce` runs), then every saved .ipynb is read back.
 *
 * Checked per notebook: no error and no stderr output; the expected figure MIME bundles, each with
 * a static image (PNG or SVG) and text/plain, so the notebook reads on GitHub; figure payloads that
 * agree with the model they came from (layer counts, region names, value ranges); and the generated
 * "what we see" markdown. A second block checks the committed copies (outputs present, sizes small).
 *
 * The notebooks run on whichever of their models exist (`findModels`): every check below is made for
 * each model that is present, and for a missing one the notebook must say so (where it looked, how
 * to get it). A notebook with none of its models shows that note and stops without error, and
 * reproduce still exits 0. Skips, with a message, only when setup has not run. The model folder and
 * names follow the notebooks' environment (`FLOATSCOPE_MODELS`, `FLOATSCOPE_MODEL_NAMES`), so the
 * partial and empty cases can be run on purpose, e.g. with a folder holding only some smoke models.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findModels, MODEL_MISSING_MARK, NO_MODEL_MARK } from "../../src/notebook/models.js";
import { CLAIM_IDS, readFindings } from "../../src/display/findings.js";
import { untracedNumbers } from "../display/claims-trace.js";
import { ROOT, setupMissing } from "../kernel/env.js";
import { reproduce } from "./reproduce-run.js";
import { figures, join1, markdownOf, outputsOf, type Desc, type Notebook } from "./nb-outputs.js";
import { bpeMarkersShown } from "./token-labels.js";


const NOTEBOOKS = [
  "01-temporal-drift",
  "02-absorption",
  "03-qk-decomposition",
  "04-retrieval-heads",
  "05-region-rollout",
  "06-qa-rag",
  "07-floating-token-types",
  "08-robustness",
] as const;
type Name = (typeof NOTEBOOKS)[number];

const V = (kind: string) => `application/vnd.floatscope.${kind}.v1+json`;
/** Run after the figure notebooks: it reads their findings and writes CLAIMS.md. */
const CLAIMS_NOTEBOOK = "10-claims";

// Which models are there, exactly as the notebooks decide it (they resolve FLOATSCOPE_MODELS from notebooks/).
const MODELS = resolve(ROOT, "notebooks", process.env.FLOATSCOPE_MODELS ?? "../models");
const FOUND = findModels(MODELS, ["llama", "qwen2", "llada", "dream"], JSON.parse(process.env.FLOATSCOPE_MODEL_NAMES ?? "{}") as Record<string, string>);
const NAME = FOUND.names;                                          // family → folder, present only
const ARMS = ["llama", "qwen2"].filter((f) => f in NAME).map((f) => NAME[f]);
const MDMS = ["llada", "dream"].filter((f) => f in NAME).map((f) => NAME[f]);
const ALL = ["llama", "qwen2", "llada", "dream"].filter((f) => f in NAME).map((f) => NAME[f]);   // the notebooks' order
/** The model families each notebook compares (its FAMILIES). */
const FAMILIES: Record<Name, string[]> = {
  "01-temporal-drift": ["llada", "dream"],
  "02-absorption": ["llama", "qwen2", "llada", "dream"],
  "03-qk-decomposition": ["llada", "dream"],
  "04-retrieval-heads": ["llada", "dream"],
  "05-region-rollout": ["llada", "llama", "dream", "qwen2"],
  "06-qa-rag": ["llama", "qwen2", "llada", "dream"],
  "07-floating-token-types": ["llama", "qwen2", "llada", "dream"],
  "08-robustness": ["llama", "qwen2", "llada", "dream"],
};
/** The claims each notebook's findings are evidence for (05's rollout is a picture of attention flow, evidence for none). */
const CLAIMS: Record<Name, string[]> = {
  "01-temporal-drift": ["anchors-float-mdm"],
  "02-absorption": ["absorption-arm-vs-mdm", "sink-fixed-arm"],
  "03-qk-decomposition": ["angle-vs-norm"],
  "04-retrieval-heads": ["retrieval-heads-deep"],
  "05-region-rollout": [],
  "06-qa-rag": ["rag-gain-mdm-vs-arm"],
  "07-floating-token-types": ["shallow-structural-deep-content"],
  "08-robustness": ["robust-distractors", "robust-position"],
};
const presentIn = (n: Name) => FAMILIES[n].filter((f) => f in NAME);
const runsOn = (n: Name) => presentIn(n).length > 0;
/** 05's two roles: the MDM of the figure and the ARM of the causal caveat (first present of each kind). */
const ROLLOUT_MDM = MDMS[0] as string | undefined;
const ROLLOUT_ARM = ARMS[0] as string | undefined;

/** Figure MIME type and the least number of such outputs each notebook shows, given the models present. */
const EXPECTED: Record<Name, [string, number][]> = {
  "01-temporal-drift": [[V("drift"), 2 * MDMS.length], [V("scrubber"), 1]],
  "02-absorption": [[V("absorption"), 2]],
  "03-qk-decomposition": [[V("qk"), MDMS.length]], // one figure per model, its chosen layers together
  "04-retrieval-heads": [[V("retrieval"), MDMS.length]],
  "05-region-rollout": [[V("rollout"), (ROLLOUT_MDM ? 3 : 0) + (ROLLOUT_ARM ? 1 : 0)]],
  "06-qa-rag": [[V("heatmap"), 1]],
  "07-floating-token-types": [[V("token-types"), ALL.length + MDMS.length]],
  "08-robustness": [[V("distractor"), 2]],
};


const config = (m: string) => JSON.parse(readFileSync(join(MODELS, m, "config.json"), "utf8")) as { num_hidden_layers?: number; n_layers?: number; num_attention_heads?: number; n_heads?: number };
const layersOf = (m: string) => { const c = config(m); return (c.num_hidden_layers ?? c.n_layers)!; };
const headsOf = (m: string) => { const c = config(m); return (c.num_attention_heads ?? c.n_heads)!; };

const missing = setupMissing();
if (missing) console.warn(`[figure notebook tests skipped] ${missing}`);
if (!missing && FOUND.missing.length > 0) {
  console.warn(`[figure notebooks] running on ${FOUND.present.length} of 4 models; missing: ${FOUND.missing.map((m) => m.dir).join(", ")}`);
}

describe.skipIf(missing !== null)("npm run reproduce: the figure notebooks on the models present", () => {
  let dir = "";
  let log = "";
  let rc = -1;
  const nbs = {} as Record<Name, Notebook>;
  let claimsNb: Notebook | undefined;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "floatscope-figures-"));
    const t0 = Date.now();
    // …and the claims notebook last, which reads the others' findings and writes CLAIMS.md beside them.
    ({ log, rc } = await reproduce(dir, [...NOTEBOOKS.map((n) => `notebooks/${n}.ipynb`), `notebooks/${CLAIMS_NOTEBOOK}.ipynb`], {
      // The tiny tier only (unless FLOATSCOPE_TIERS says otherwise): the checks below are about the tiny models'
      // figures, and the real tiers (30-layer models) would add minutes per notebook to CI.
      env: { FLOATSCOPE_TIERS: process.env.FLOATSCOPE_TIERS ?? "tiny" },
      timeoutMs: 1_500_000,
    }));
    console.log(`[notebooks] figure notebooks executed in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
    for (const n of NOTEBOOKS) {
      const p = join(dir, `${n}.ipynb`);
      if (existsSync(p)) nbs[n] = JSON.parse(readFileSync(p, "utf8")) as Notebook;
    }
    const c = join(dir, `${CLAIMS_NOTEBOOK}.ipynb`);
    if (existsSync(c)) claimsNb = JSON.parse(readFileSync(c, "utf8")) as Notebook;
  }, 1_600_000);

  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("runs all the figure notebooks and the claims notebook without errors (reproduce exits 0, with or without models)", () => {
    expect(log).toContain(`${NOTEBOOKS.length + 1} of ${NOTEBOOKS.length + 1} notebooks ran without errors`);
    expect(rc).toBe(0);
    for (const n of NOTEBOOKS) {
      expect(nbs[n], n).toBeDefined();
      const outs = outputsOf(nbs[n]);
      expect(outs.filter((o) => o.output_type === "error"), n).toEqual([]);
      expect(outs.filter((o) => o.output_type === "stream" && o.name === "stderr").map((o) => join1(o.text)), n).toEqual([]);
      // every code cell ran (tslab sends no error message on failure: a failed cell stops the run) —
      // except after the no-model note, where the run stops on purpose
      const code = nbs[n].cells.filter((c) => c.cell_type === "code");
      const ran = code.filter((c) => c.execution_count != null).length;
      if (runsOn(n)) expect(ran, n).toBe(code.length);
      else expect(ran, n).toBeGreaterThan(0);
    }
  });

  // Token text reads as text: no byte-level BPE marker ("Ġ", "Ċ") in any table, static image, figure label or
  // legend of a freshly executed notebook (the real tiers, FLOATSCOPE_TIERS=tiny,real,real-base, bring SmolLM2's
  // byte-level vocabulary; the tiny models' word-level one has none to begin with).
  it.each(NOTEBOOKS.map((n) => [n]).filter(([n]) => runsOn(n)))("%s shows no Ġ/Ċ in any label, table or image", (n) => {
    expect(bpeMarkersShown(nbs[n as Name])).toEqual([]);
  });

  it.each(NOTEBOOKS.map((n) => [n]))("%s says which of its models are missing, where it looked, and how to get them", (n) => {
    const md = markdownOf(nbs[n as Name]).join("\n");
    const absent = FOUND.missing.filter((m) => FAMILIES[n as Name].includes(m.family));
    for (const m of absent) {
      expect(md, `${n}: ${m.name}`).toContain(`${MODEL_MISSING_MARK}** ${m.family} — looked for \`${join(process.env.FLOATSCOPE_MODELS ?? "../models", m.name)}\``);
    }
    if (absent.length > 0) expect(md).toMatch(/training\/run_all\.sh[\s\S]*FLOATSCOPE_MODELS[\s\S]*FLOATSCOPE_MODEL_NAMES/);
    else expect(md).not.toContain(MODEL_MISSING_MARK);
    if (runsOn(n as Name)) {
      expect(md).not.toContain(NO_MODEL_MARK);
    } else {
      // no model at all: the note, no figure, and reproduce's summary flags it
      expect(md).toContain(NO_MODEL_MARK);
      expect(outputsOf(nbs[n as Name]).filter((o) => Object.keys(o.data ?? {}).some((k) => k.startsWith("application/vnd.floatscope.")))).toEqual([]);
      expect(log).toMatch(new RegExp(`WARNING: \\d+ notebook\\(s\\) ran WITHOUT MODELS and show no figure: .*${n}`));
    }
  });

  it.each(NOTEBOOKS.map((n) => [n]).filter(([n]) => runsOn(n)))("%s shows its figures as full bundles: our JSON, a static image, text/plain", (n) => {
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

  it.each(NOTEBOOKS.map((n) => [n]).filter(([n]) => runsOn(n)))("%s ends with a generated 'what we see' text quoting its numbers, honest about missing models", (n) => {
    const md = markdownOf(nbs[n as Name]);
    expect(md.length).toBeGreaterThan(0);
    const last = md[md.length - 1];
    const here = presentIn(n as Name).map((f) => NAME[f]);
    expect(here.some((m) => last.includes(m)), `${n}: names a model present`).toBe(true);
    expect(last).toMatch(/\d/);
    const absent = FOUND.missing.filter((m) => FAMILIES[n as Name].includes(m.family));
    if (absent.length > 0) {
      expect(last).toContain("Not in this run (missing)");
      for (const m of absent) expect(last).toContain(m.name);
    } else {
      expect(last).not.toContain("Not in this run");
    }
  });

  it.runIf(ALL.length > 0)("02: one absorption line per model present over every layer, percentages in [0, 100], bands from all samples", () => {
    const specs = figures(nbs["02-absorption"], V("absorption")).map((o) => o.data![V("absorption")] as Desc);
    expect(specs.map((s) => s.subtitle.join(" ")).join(" | ")).toMatch(/upstream/);
    for (const s of specs) {
      const series = s.panels[0].series;
      expect(s.exportName.models!.sort()).toEqual([...ALL].sort());
      for (const x of series) {
        expect(x.x).toEqual(Array.from({ length: layersOf(x.name.replace(/ \((ARM|MDM)\)$/, "")) }, (_, l) => l));
        for (const v of x.y) expect(v !== null && v >= 0 && v <= 100).toBe(true);
        // the band is mean ± std: half its width is the std
        x.y.forEach((_, k) => expect((x.hi![k]! - x.lo![k]!) / 2).toBeLessThanOrEqual(50 + 1e-9));
      }
    }
    // the comparison sentence only when both kinds are there
    const last = markdownOf(nbs["02-absorption"]).at(-1)!;
    if (ARMS.length && MDMS.length) expect(last).toMatch(/ARM [\d.]+ vs MDM [\d.]+: (ARM higher, as in the paper|MDM as high or higher, unlike the paper)/);
    else expect(last).toMatch(/only (ARM|MDM) present \([\d.]+\): no (ARM|MDM) to compare with/);
  });

  it.runIf(MDMS.length > 0)("01/03: drift views cover the shallow and the deep layer; QK panels are square over the sequence", () => {
    const drift = figures(nbs["01-temporal-drift"], V("drift")).map((o) => o.data![V("drift")] as Desc);
    const modelOf = (d: Desc) => d.exportName.models![0];
    const layersOfDesc = (d: Desc) => [d.exportName.layer ?? []].flat();
    expect([...new Set(drift.map(modelOf))].sort()).toEqual([...MDMS].sort());
    for (const m of MDMS) {
      const layers = drift.filter((d) => modelOf(d) === m).map((d) => layersOfDesc(d)[0]);
      expect(layers).toEqual([0, layersOf(m) - 1]);
    }
    for (const d of drift) expect(d.panels[0].rows).toBe(d.panels[0].y.labels.length);
    const qk = figures(nbs["03-qk-decomposition"], V("qk")).map((o) => o.data![V("qk")] as Desc);
    for (const q of qk) {
      for (const p of q.panels.filter((x) => x.type === "heat")) {
        expect([p.rows, p.cols]).toEqual([p.x.labels.length, p.x.labels.length]);
        expect(p.columnMarks!.columns.length).toBeGreaterThan(0); // the QK rule falls back to the argmax
      }
    }
  });

  it.runIf(MDMS.length > 0)("04: retrieval heatmaps are layer × head of each MDM present on [0, 1]", () => {
    const specs = figures(nbs["04-retrieval-heads"], V("retrieval")).map((o) => o.data![V("retrieval")] as Desc);
    expect(specs.map((s) => s.exportName.models![0]).sort()).toEqual([...MDMS].sort());
    for (const s of specs) {
      const m = s.exportName.models![0];
      expect([s.panels[0].rows, s.panels[0].cols]).toEqual([layersOf(m), headsOf(m)]);
    }
  });

  it.runIf(ALL.length > 0)("05: rollouts for gold at 1/5/10 name the gold document; the ARM rollout carries the causal warning (each section skipped with a note when its kind is missing)", () => {
    const specs = figures(nbs["05-region-rollout"], V("rollout")).map((o) => {
      const d = o.data![V("rollout")] as Desc;
      const pi = [...(d.subtitle[1] ?? "").matchAll(/ (-?[\d.]+)(?=,|$)/g)].map((m) => Number(m[1]));
      return { model: d.exportName.models![0], regions: d.panels[0].x.labels, condition: /^(gold doc at \d+ of \d+);/.exec(d.subtitle[0])?.[1], warnings: d.warnings, stationary: pi };
    });
    const md = markdownOf(nbs["05-region-rollout"]).join("\n");
    if (ROLLOUT_MDM) {
      const mdm = specs.filter((s) => s.model === ROLLOUT_MDM);
      expect(mdm.map((s) => s.condition)).toEqual(["gold doc at 1 of 10", "gold doc at 5 of 10", "gold doc at 10 of 10"]);
      mdm.forEach((s, i) => {
        expect(s.regions.filter((r) => r.startsWith("Doc") || r === "Gold Doc")).toHaveLength(10);
        const docs = s.regions.filter((r) => r.startsWith("Doc") || r === "Gold Doc");
        expect(docs.indexOf("Gold Doc")).toBe([0, 4, 9][i]);
        expect(s.stationary.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 1); // printed to 2 decimals in the subtitle
      });
    } else {
      expect(md).toMatch(/No masked diffusion model .* the MDM rollout figure is skipped/);
    }
    if (ROLLOUT_ARM) {
      const arm = specs.filter((s) => s.model === ROLLOUT_ARM);
      expect(arm.length).toBeGreaterThan(0);
      expect((arm[0].warnings ?? []).join(" ")).toMatch(/causal/);
    } else {
      expect(md).toMatch(/No autoregressive model .* the causal caveat section is skipped/);
      expect(specs.filter((s) => (s.warnings ?? []).join(" ").match(/causal/))).toEqual([]);
    }
  });

  it.runIf(ALL.length > 0)("06: the Table-1 heatmap has one row per model present and Acc/F1 in percent", () => {
    const [h] = figures(nbs["06-qa-rag"], V("heatmap")).map((o) => {
      const p = (o.data![V("heatmap")] as Desc).panels[0];
      return { yLabels: p.y.labels, xLabels: p.x.labels, values: p.y.labels.map((_, r) => p.values.slice(r * p.cols, (r + 1) * p.cols)) };
    });
    expect(h.yLabels).toEqual(ALL);
    expect(h.xLabels.slice(0, 4)).toEqual(["w/o RAG Acc", "w/o RAG F1", "RAG Acc", "RAG F1"]);
    for (const row of h.values) for (const v of row.slice(0, 4)) expect(v !== null && v >= 0 && v <= 100).toBe(true);
    const md = markdownOf(nbs["06-qa-rag"]).join("\n");
    expect(md).toMatch(/NQ-open (skipped|: \d+ questions)/);
    if (!(ARMS.length && MDMS.length)) expect(md).toMatch(/only (ARM|MDM) present \([\d.-]+\): no (ARM|MDM) to compare with/);
  });

  it.each(NOTEBOOKS.map((n) => [n]))("%s emits its findings: one record, the claims it is evidence for, one finding set per model present", (n) => {
    const recs = readFindings(nbs[n as Name], n);
    if (!runsOn(n as Name)) return expect(recs).toEqual([]);
    expect(recs.map((r) => r.notebook)).toEqual([n]);
    const claims = new Set(recs[0].findings.map((f) => f.claim));
    expect([...claims]).toEqual(CLAIMS[n as Name]);
    const here = presentIn(n as Name).map((f) => NAME[f]);
    for (const f of recs[0].findings) {
      expect(here, `${n}: ${f.model}`).toContain(f.model);
      expect(NAME[f.family], `${n}: family word of ${f.model}`).toBe(f.model);
      if (f.ci95) expect(f.ci95[0] <= f.value + 1e-9 && f.value <= f.ci95[1] + 1e-9, `${n}: ${f.quantity}`).toBe(true);
    }
    // every model present reports (04 may have none when no sample passed its filter: then it still names the copy events)
    if (CLAIMS[n as Name].length) for (const m of here) expect(recs[0].findings.some((f) => f.model === m), `${n}: ${m}`).toBe(true);
  });

  it.runIf(ALL.length > 0)("08: accuracy vs k = 0…10 and vs every gold position, one line per model, inside its bootstrap band; findings for both robustness claims", () => {
    const [byK, byPos] = figures(nbs["08-robustness"], V("distractor")).map((o) => {
      const p = (o.data![V("distractor")] as Desc).panels[0];
      return {
        positions: p.series[0].x,
        xTitle: p.x.title,
        series: p.series.map((x) => ({ model: x.name, values: x.y as number[], lo: x.lo as number[], hi: x.hi as number[] })),
      };
    });
    expect(byK.positions).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(byK.xTitle).toBe("Number of distractors");
    expect(byPos.positions).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    for (const p of [byK, byPos]) {
      expect(p.series.map((x) => x.model).sort()).toEqual([...ALL].sort());
      for (const x of p.series) {
        x.values.forEach((v, i) => {
          expect(v >= 0 && v <= 100).toBe(true);
          expect(x.lo[i]).toBeLessThanOrEqual(v + 1e-9);
          expect(x.hi[i]).toBeGreaterThanOrEqual(v - 1e-9);
        });
      }
    }
    const recs = readFindings(nbs["08-robustness"], "08-robustness.ipynb");
    expect(recs).toHaveLength(1);
    for (const claim of ["robust-distractors", "robust-position"]) {
      const fs = recs[0].findings.filter((f) => f.claim === claim);
      expect(fs.map((f) => f.model).sort(), claim).toEqual([...ALL].sort());
      for (const f of fs) expect(f.ci95 && f.ci95[0] <= f.ci95[1] && f.n > 0).toBeTruthy();
    }
  });

  it("10: CLAIMS.md beside the executed notebooks, shown by the claims notebook; every number in it traces to a notebook output", () => {
    const file = join(dir, "CLAIMS.md");
    expect(existsSync(file)).toBe(true);
    const claims = readFileSync(file, "utf8");
    for (const id of CLAIM_IDS) expect(claims).toContain(`\`${id}\``);
    const executed = NOTEBOOKS.filter((n) => nbs[n]).map((n) => ({ file: `${n}.ipynb`, json: nbs[n] as unknown }));
    expect(untracedNumbers(claims, executed)).toEqual([]);
    // The claims notebook shows the same text it wrote (its first Markdown output; the committed large runs' section follows).
    expect(claimsNb).toBeDefined();
    expect(markdownOf(claimsNb!)[0]?.trim()).toBe(claims.trim());
    // With models present, the robustness claims are measured (by notebook 08).
    if (ARMS.length && MDMS.length) expect(claims).not.toMatch(/\| MDMs degrade less as distractors are added \| [^|]+ \| not measured \|/);
    // The shareable gallery: one page per executed notebook.
    expect(existsSync(join(dir, "html", "index.html"))).toBe(true);
    for (const n of NOTEBOOKS) expect(existsSync(join(dir, "html", `${n}.html`)), n).toBe(true);
  });

  it.runIf(ALL.length > 0)("07: token-type shares per band sum to 1 over the types", () => {
    const specs = figures(nbs["07-floating-token-types"], V("token-types")).map((o) => o.data![V("token-types")] as Desc);
    for (const s of specs) {
      const p = s.panels[0];
      p.x.labels.forEach((_, b) => {
        const total = p.stacks.reduce((a, x) => a + x.values[b], 0);
        if (total > 0) expect(total).toBeCloseTo(100, 6); // shares in percent, stacked
      });
    }
  });
});

/**
 * The real-base section at the paper's setting (src/notebook/paper-setting.ts): the settings its table must name
 * per model — the MDM at 32 tokens in 32 steps under both orders and at 64 in 64 on long answers, the twin greedily
 * (02 and 07 decode the pair, 03 the MDM only).
 */
const MDM_SETTINGS = ["32 tokens in 32 steps, LLaDA low-confidence order", "32 tokens in 32 steps, Dream entropy order", "long answers, 64 tokens in 64 steps, Dream entropy order"];
const TWIN_SETTINGS = ["up to 32 tokens, greedy (causal)", "long answers, up to 64 tokens, greedy (causal)"];
const PAPER_SECTION: Partial<Record<Name, Record<string, string[]>>> = {
  "02-absorption": { "smollm2-135m-dream-world": MDM_SETTINGS, "smollm2-135m-causal-world": TWIN_SETTINGS },
  "03-qk-decomposition": { "smollm2-135m-dream-world": MDM_SETTINGS },
  "07-floating-token-types": { "smollm2-135m-dream-world": MDM_SETTINGS, "smollm2-135m-causal-world": TWIN_SETTINGS },
};
/** The rows of the Markdown tables (`text/plain` of a shown table) of a notebook, as header → cell objects. */
function tableRows(nb: Notebook): Record<string, string>[] {
  return outputsOf(nb).flatMap((o) => {
    const text = join1(o.data?.["text/plain"]);
    if (!text.startsWith("Table:")) return [];
    const lines = text.split("\n").filter((l) => l.startsWith("|"));
    const cells = (l: string) => l.split("|").slice(1, -1).map((c) => c.trim());
    const head = cells(lines[0]);
    return lines.slice(2).map((l) => Object.fromEntries(cells(l).map((c, i) => [head[i], c])));
  });
}

describe("the committed figure notebooks", () => {
  it.each(Object.keys(PAPER_SECTION).map((n) => [n]))(
    "%s: its real-base section at the paper's setting names every setting per model, decoded at 32 (64) steps",
    (n) => {
      const nb = JSON.parse(readFileSync(join(ROOT, "notebooks", `${n}.ipynb`), "utf8")) as Notebook;
      const want = PAPER_SECTION[n as Name]!;
      const rows = tableRows(nb).filter((r) => r.setting !== undefined && r.model in want);
      if (rows.length === 0) {
        // executed without the real-base pair: the section says it was skipped, and why
        expect(markdownOf(nb).some((m) => m.includes("paper-setting") && m.includes("not set up here"))).toBe(true);
        return;
      }
      for (const [model, settings] of Object.entries(want))
        for (const setting of settings) {
          const mine = rows.filter((r) => r.model === model && r.setting.startsWith(setting));
          expect(mine.length, `${n}: ${model} · ${setting}`).toBeGreaterThan(0);
          for (const r of mine)
            for (const [col, v] of Object.entries(r)) {
              if (col === "model" || col === "setting" || v === "" || v === "null") continue;
              expect(Number.isFinite(Number(v)), `${n}: ${col} = ${v}`).toBe(true);
              if (col.includes("%") && !col.startsWith("angle share")) expect(Math.abs(Number(v)), `${n}: ${col}`).toBeLessThanOrEqual(100);
            }
        }
      // the MDM's decodes really ran one token per step: 32 steps for each order, 64 on the long answer
      const logs = outputsOf(nb).filter((o) => o.output_type === "stream").map((o) => join1(o.text)).join("");
      const steps = [...logs.matchAll(/smollm2-135m-dream-world: \d+ prompt\(s\), prompt \d+ tokens, (\d+) decoding steps/g)].map((m) => Number(m[1]));
      expect(steps.filter((s) => s === 32).length, n).toBeGreaterThanOrEqual(2);
      expect(steps, n).toContain(64);
    },
  );

  it("01-temporal-drift: the real-base MDM's panels are at 32 tokens in 32 steps, once under each unmasking order", () => {
    const nb = JSON.parse(readFileSync(join(ROOT, "notebooks", "01-temporal-drift.ipynb"), "utf8")) as Notebook;
    const logs = outputsOf(nb).filter((o) => o.output_type === "stream").map((o) => join1(o.text)).join("");
    const steps = [...logs.matchAll(/smollm2-135m-dream-world: \d+ prompt\(s\), prompt \d+ tokens, (\d+) decoding steps/g)].map((m) => Number(m[1]));
    if (steps.length === 0) return; // executed without the real-base tier (its tier note says so at the top)
    expect(steps).toEqual([32, 32]);
    // a titled shallow and deep panel per order, and the findings name each order
    const md = markdownOf(nb).join("\n");
    for (const order of ["LLaDA low-confidence order", "Dream entropy order"])
      for (const depth of ["shallow layer 0", "deep layer 29"]) {
        expect(md).toContain(`32 tokens in 32 steps, ${order}, 1 question(s) · ${depth}`);
        expect(md).toMatch(new RegExp(`distinct anchor positions \\(${depth}, 32 tokens in 32 steps, ${order}, 1 question\\(s\\)\\) \\d+ \\(n = 32\\)`));
      }
  });

  it.each(NOTEBOOKS.map((n) => [n]))("%s uses the floatscope kernel, imports only floatscope (+ node:), and stays small", (n) => {
    const p = join(ROOT, "notebooks", `${n}.ipynb`);
    // 3 MiB: notebook 03's real-tier QK figure (3 layers × 3 maps of 82 × 82) is ≈ 1 MB once nbformat indents its numbers.
    expect(statSync(p).size).toBeLessThan(3 * 1024 * 1024);
    const nb = JSON.parse(readFileSync(p, "utf8")) as Notebook;
    expect(nb.metadata.kernelspec?.name).toBe("floatscope");
    const code = nb.cells.filter((c) => c.cell_type === "code").map((c) => join1(c.source)).join("\n");
    const imports = [...code.matchAll(/from\s+"([^"]+)"/g)].map((m) => m[1]);
    expect(imports.length).toBeGreaterThan(0);
    for (const i of imports) expect(i === "floatscope" || i.startsWith("node:"), i).toBe(true);
    // the settings come from the environment through the library (FLOATSCOPE_MODELS, …), which decides which models are there
    expect(code).toContain(`notebookSettings({ families: [${FAMILIES[n as Name].map((f) => `"${f}"`).join(", ")}]`);
    // committed with outputs (from a run on the tiny models), and none of them an error
    const outs = outputsOf(nb);
    if (outs.length > 0) {
      expect(outs.filter((o) => o.output_type === "error" || (o.output_type === "stream" && o.name === "stderr"))).toEqual([]);
      for (const [mime] of EXPECTED[n as Name]) expect(figures(nb, mime).length, `${n}: ${mime}`).toBeGreaterThan(0);
    }
  });
});

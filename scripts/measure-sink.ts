/**
 * The sink claim measured on attention, on every tier present: each model decodes the same held-out questions
 * (gold passage among 4 distractors, as notebook 02), recording `received` at every step; the first-token sink
 * analysis gives, per layer, the share of attention on position 0 and how fixed the top-1 key is across the
 * steps; the findings decide `sink-fixed-arm` with the claims rule (src/display/claims.ts, docs/claims.md).
 *
 *   npx tsx scripts/measure-sink.ts                          # 3 questions per model, every tier present
 *   npx tsx scripts/measure-sink.ts --samples 2 --tiers tiny  # fewer, one tier
 *   npx tsx scripts/measure-sink.ts --out sink.findings.json # also write the findings file (with the tables and provenance)
 *
 * Prints per tier the per-layer sink table and the findings, then the claim's verdict per tier. The real tiers
 * (.cache/real-models/, fetched and merged by scripts/setup.sh) decode `--tokens` new tokens (default 8); the
 * tiny tier decodes with its models' own presets. Small n: a check that it runs end to end, not the large run.
 * `--out` writes a findings file — `{ notebook, findings, provenance, report }`, the findings record
 * scripts/render-claims.ts reads beside executed notebooks — with the commit, settings, machine and wall times.
 */
import * as path from "node:path";
import { parseArgs } from "node:util";
import { firstTokenSink } from "../src/analysis/first-token-sink.js";
import { judgeClaims } from "../src/display/claims.js";
import { sinkFindings, sinkLayerTable, type SinkLayer, type SinkSample } from "../src/display/findings-text.js";
import type { Finding } from "../src/display/findings.js";
import { decodeQa, loadQaSet, notebookSettings, type NotebookSettings } from "../src/notebook/notebook.js";
import { provenanceOf, ROOT, writeFindingsFile } from "./lib/findings-file.js";
const { values: args } = parseArgs({
  options: {
    samples: { type: "string", default: "3" },
    tokens: { type: "string", default: "8" },
    tiers: { type: "string", default: "tiny,real,real-base" },
    out: { type: "string" },
  },
});
const samples = Number(args.samples);
const tokens = Number(args.tokens);
for (const [name, v] of [
  ["--samples", samples],
  ["--tokens", tokens],
] as const) {
  if (!(Number.isInteger(v) && v >= 1)) {
    console.error(`measure-sink: ${name} needs an integer ≥ 1, got ${JSON.stringify(name === "--samples" ? args.samples : args.tokens)}`);
    process.exit(2);
  }
}
const tiers = args.tiers!.split(",").map((t) => t.trim());
const env = {
  ...process.env,
  FLOATSCOPE_MODELS: path.join(ROOT, "models"),
  FLOATSCOPE_REAL_MODELS: path.join(ROOT, ".cache/real-models"),
  FLOATSCOPE_DATA: process.env.FLOATSCOPE_DATA ?? path.join(ROOT, "models/world/eval-heldout.jsonl.gz"),
  FLOATSCOPE_SAMPLES: String(samples),
  FLOATSCOPE_REAL_SAMPLES: String(samples),
};
const settings: NotebookSettings[] = [];
if (tiers.includes("tiny")) settings.push(notebookSettings({ families: ["llama", "qwen2", "llada", "dream"], env }));
if (tiers.includes("real")) settings.push(notebookSettings({ families: ["llama"], tier: "real", env }));
if (tiers.includes("real-base")) settings.push(notebookSettings({ families: ["dream", "llama"], tier: "real-base", env }));

const t0 = Date.now();
const found: Finding[] = [];
const report: Record<string, { layers: SinkLayer[]; samples: SinkSample[]; seconds: Record<string, number> }> = {};
for (const S of settings) {
  if (!S.runs) {
    console.log(`tier ${S.tier}: skipped (${String(S.toMimeBundle()["text/plain"])})`);
    continue;
  }
  const qa = await loadQaSet(S, { distractors: 4 });
  const runs = await decodeQa(S, qa, {
    probes: { received: true },
    context: { distractors: 4, goldPosition: "cycle" },
    tokens: S.tier === "tiny" ? undefined : tokens,
    viewProbes: "none",
  });
  const r = firstTokenSink(Object.values(runs).flatMap((m) => m.traces));
  const layers = r.layers.objects();
  const perSample = r.samples.objects();
  const fs_ = sinkFindings(perSample, S.tier);
  found.push(...fs_);
  report[S.tier] = { layers, samples: perSample, seconds: Object.fromEntries(Object.values(runs).map((m) => [m.name, m.seconds])) };
  console.log(`\n## tier ${S.tier} (n = ${samples} question(s) per model)\n`);
  console.log(String(sinkLayerTable(layers).toMimeBundle()["text/plain"]));
  console.log("");
  for (const f of fs_)
    console.log(
      `${f.model}: ${f.quantity} = ${f.value.toFixed(1)}${f.ci95 ? ` [${f.ci95[0].toFixed(1)}, ${f.ci95[1].toFixed(1)}]` : ""} (n = ${f.n})`,
    );
  for (const w of r.warnings) console.log(`note: ${w}`);
}
const sink = judgeClaims(found.map((f) => ({ ...f, source: "measure-sink" }))).find((c) => c.claim === "sink-fixed-arm")!;
console.log("\n## sink-fixed-arm");
for (const v of sink.verdicts)
  console.log(`${v.tier}: ${v.verdict}${v.n ? ` (n = ${v.n[0] === v.n[1] ? v.n[0] : `${v.n[0]}–${v.n[1]}`})` : ""} — ${v.why}`);
if (args.out) {
  const provenance = provenanceOf(
    "scripts/measure-sink.ts",
    {
      samples,
      tokens,
      tiers,
      context: "gold among 4 distractors, gold position cycling",
      data: path.relative(ROOT, env.FLOATSCOPE_DATA),
    },
    t0,
  );
  writeFindingsFile(args.out, { notebook: "measure-sink", findings: found, provenance, report, verdicts: sink.verdicts });
  console.log(`\nwrote ${args.out}`);
}

/**
 * A merged grid's measures (src/grid/measures.ts) as a findings file: `{ notebook, findings, provenance,
 * report }`, the record scripts/render-claims.ts and notebook 10 read beside executed notebooks. The
 * findings are built by the same functions the notebooks and scripts/measure-sink.ts use (one per tier the
 * grid's models are filed under), so a claim decided on a sharded grid reads exactly like one decided in a
 * notebook. Everything in the file comes from the shards' rows and their shared manifest: the same grid
 * gives the same bytes whatever its sharding.
 *
 * Lives with the CLI because it joins two layers that do not import each other (grid, display).
 */
import type { MergeResult } from "../grid/merge.js";
import type { Finding } from "../display/findings.js";
import { meanFinding, sinkFindings } from "../display/findings-text.js";

export interface GridFindingsFile {
  notebook: string;
  findings: Finding[];
  /** What the numbers depend on (the manifest's key fields), never where or when they ran. */
  provenance: Record<string, unknown>;
  /** The per-layer tables behind the findings (e.g. `sink.layers`: the per-layer sink table of every model). */
  report: Record<string, unknown>;
}

/** The findings file of a merged grid that records measures (null when it records none). */
export function gridFindingsFile(r: Pick<MergeResult, "measures" | "progress" | "rows">): GridFindingsFile | null {
  const m = r.progress.manifest;
  if (!r.measures || !m.measures) return null;
  const tierOf = new Map(m.measures.models.map((x) => [x.name, x.tier]));
  const tiers = [...new Set(m.measures.models.map((x) => x.tier))];
  const findings: Finding[] = [];
  const report: Record<string, unknown> = {};
  const sink = r.measures.sink;
  if (sink) {
    for (const tier of tiers)
      findings.push(
        ...sinkFindings(
          sink.samples.filter((s) => tierOf.get(s.model) === tier),
          tier,
        ),
      );
    report.sink = { layers: sink.layers };
  }
  const absorption = r.measures.absorption;
  if (absorption) {
    // Notebook 02's findings: per sample the absorption averaged over layers, in percent, mean over samples.
    for (const model of m.measures.models) {
      const mine = absorption.samples.filter((s) => s.model === model.name);
      for (const rule of [...new Set(mine.map((s) => s.rule))]) {
        const base = { claim: "absorption-arm-vs-mdm" as const, model: model.name, family: model.family, tier: model.tier };
        findings.push(
          ...meanFinding(
            { ...base, quantity: `absorption, % (rule ${rule}, mean over layers)` },
            mine.filter((s) => s.rule === rule).map((s) => 100 * s.value),
          ),
        );
      }
    }
    report.absorption = { layers: absorption.layers };
  }
  const drift = r.measures.drift;
  if (drift) {
    // Notebook 01's quantities, per question and averaged over the questions, at the shallow and the deep layer.
    for (const model of m.measures.models) {
      const mine = drift.samples.filter((s) => s.model === model.name);
      if (mine.length === 0) continue;
      const base = { claim: "anchors-float-mdm" as const, model: model.name, family: model.family, tier: model.tier };
      const depths = ["shallow layer 0", `deep layer ${mine[0].deepLayer}`];
      depths.forEach((where, i) => {
        const q = (what: string) => ({ ...base, quantity: `${what} (${where}, mean over questions)` });
        findings.push(
          ...meanFinding(
            q("distinct anchor positions"),
            mine.map((s) => s.distinct[i]),
          ),
        );
        findings.push(
          ...meanFinding(
            q("longest anchor track, steps"),
            mine.map((s) => s.longest[i]),
          ),
        );
      });
    }
    report.drift = { layers: drift.layers };
  }
  const types = r.measures["token-types"];
  if (types) {
    // Notebook 07's quantity: per question the structural share of the band's anchors (questions whose band
    // has no anchor left out), in percent, mean over questions.
    for (const model of m.measures.models) {
      const base = { claim: "shallow-structural-deep-content" as const, model: model.name, family: model.family, tier: model.tier };
      for (const depth of ["shallow", "deep"] as const) {
        const mine = types.samples.filter((s) => s.model === model.name && s.depth === depth && s.anchors > 0);
        if (mine.length === 0) continue;
        findings.push(
          ...meanFinding(
            { ...base, quantity: `structural share of anchors, %, ${depth} band (${mine[0].band})` },
            mine.map((s) => (100 * s.structural) / s.anchors),
          ),
        );
      }
    }
    report["token-types"] = { layers: types.layers };
  }
  return {
    notebook: `grid ${m.grid}`,
    findings,
    provenance: {
      grid: m.grid,
      fingerprint: m.fingerprint,
      floatscope: m.floatscope,
      measures: m.measures.names,
      models: m.models.map((x) => ({ name: x.name, hash: x.hash, ...m.measures!.models.find((y) => y.name === x.name) })),
      datasets: m.datasets,
      settings: m.settings,
      seeds: m.seeds,
      questions: r.rows.length,
      note: "measures pool the plain (not intervened) units of every setting and seed; CLAIMS.md's rules read them per tier",
    },
    report,
  };
}

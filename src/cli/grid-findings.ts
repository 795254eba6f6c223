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
import type { MeasuredModel } from "../grid/measures.js";
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

type Aggregate = NonNullable<MergeResult["measures"]>;

/** The findings file of a merged grid that records measures (null when it records none). */
export function gridFindingsFile(r: Pick<MergeResult, "measures" | "progress" | "rows">): GridFindingsFile | null {
  const m = r.progress.manifest;
  if (!r.measures || !m.measures) return null;
  const models = m.measures.models;
  const a = r.measures;
  const findings = [
    ...(a.sink ? sinkPart(a.sink, models) : []),
    ...(a.absorption ? absorptionPart(a.absorption, models) : []),
    ...(a.drift ? driftPart(a.drift, models) : []),
    ...(a["token-types"] ? tokenTypesPart(a["token-types"], models) : []),
  ];
  // The per-layer tables behind the findings, one per measure.
  const report = Object.fromEntries(Object.entries(a).map(([name, v]) => [name, { layers: (v as { layers: unknown }).layers }]));
  return {
    notebook: `grid ${m.grid}`,
    findings,
    provenance: {
      grid: m.grid,
      fingerprint: m.fingerprint,
      floatscope: m.floatscope,
      measures: m.measures.names,
      models: m.models.map((x) => ({ name: x.name, hash: x.hash, ...models.find((y) => y.name === x.name) })),
      datasets: m.datasets,
      settings: m.settings,
      seeds: m.seeds,
      questions: r.rows.length,
      note: "measures pool the plain (not intervened) units of every setting and seed; CLAIMS.md's rules read them per tier",
    },
    report,
  };
}

/** What a finding of `model` is about, for `claim`. */
function baseOf(claim: Finding["claim"], model: MeasuredModel) {
  return { claim, model: model.name, family: model.family, tier: model.tier };
}

/** The sink claim's findings, by the function notebook 02 and scripts/measure-sink.ts use (per tier). */
function sinkPart(sink: NonNullable<Aggregate["sink"]>, models: readonly MeasuredModel[]): Finding[] {
  const tierOf = new Map(models.map((x) => [x.name, x.tier]));
  return [...new Set(models.map((x) => x.tier))].flatMap((tier) =>
    sinkFindings(
      sink.samples.filter((s) => tierOf.get(s.model) === tier),
      tier,
    ),
  );
}

/** Notebook 02's findings: per sample the absorption averaged over layers, in percent, mean over samples. */
function absorptionPart(absorption: NonNullable<Aggregate["absorption"]>, models: readonly MeasuredModel[]): Finding[] {
  return models.flatMap((model) => {
    const mine = absorption.samples.filter((s) => s.model === model.name);
    return [...new Set(mine.map((s) => s.rule))].flatMap((rule) =>
      meanFinding(
        { ...baseOf("absorption-arm-vs-mdm", model), quantity: `absorption, % (rule ${rule}, mean over layers)` },
        mine.filter((s) => s.rule === rule).map((s) => 100 * s.value),
      ),
    );
  });
}

/** Notebook 01's quantities at the shallow and the deep layer, per question, as means over the questions. */
function driftPart(drift: NonNullable<Aggregate["drift"]>, models: readonly MeasuredModel[]): Finding[] {
  return models.flatMap((model) => {
    const mine = drift.samples.filter((s) => s.model === model.name);
    if (mine.length === 0) return [];
    return ["shallow layer 0", `deep layer ${mine[0].deepLayer}`].flatMap((where, i) => {
      const q = (what: string) => ({ ...baseOf("anchors-float-mdm", model), quantity: `${what} (${where}, mean over questions)` });
      return [
        ...meanFinding(
          q("distinct anchor positions"),
          mine.map((s) => s.distinct[i]),
        ),
        ...meanFinding(
          q("longest anchor track, steps"),
          mine.map((s) => s.longest[i]),
        ),
      ];
    });
  });
}

/**
 * Notebook 07's quantity: per question the structural share of the band's anchors (a question whose band has
 * no anchor is left out), in percent, mean over questions; the shallow and the deep band.
 */
function tokenTypesPart(types: NonNullable<Aggregate["token-types"]>, models: readonly MeasuredModel[]): Finding[] {
  return models.flatMap((model) =>
    (["shallow", "deep"] as const).flatMap((depth) => {
      const mine = types.samples.filter((s) => s.model === model.name && s.depth === depth && s.anchors > 0);
      if (mine.length === 0) return [];
      return meanFinding(
        {
          ...baseOf("shallow-structural-deep-content", model),
          quantity: `structural share of anchors, %, ${depth} band (${mine[0].band})`,
        },
        mine.map((s) => (100 * s.structural) / s.anchors),
      );
    }),
  );
}

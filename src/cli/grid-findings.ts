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
import { pairScores, ragGains } from "../analysis/rag-gain.js";
import { distractorDrop, positionSpread, type Interval, type QaRow } from "../analysis/robustness.js";
import type { MeasuredModel } from "../grid/measures.js";
import type { GridRow, MergeResult } from "../grid/merge.js";
import type { Finding } from "../display/findings.js";
import { meanFinding, sinkFindings, valueFinding } from "../display/findings-text.js";

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
    ...(a.qk ? qkPart(a.qk, models) : []),
    ...(a.retrieval ? retrievalPart(a.retrieval, models) : []),
    ...accuracyFindings(r.rows, models),
  ];
  // The per-layer tables behind the findings, one per measure, and the accuracy per model and setting.
  const report: Record<string, unknown> = Object.fromEntries(
    Object.entries(a).map(([name, v]) => [name, { layers: (v as { layers: unknown }).layers }]),
  );
  if (a.retrieval) (report.retrieval as Record<string, unknown>).models = a.retrieval.models;
  report.accuracy = accuracyTable(r.rows);
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

/**
 * Notebook 03's findings: per question the angle share of the anchors' score advantage over its layers (%,
 * mean over questions; the rule reads it), and per layer cos θ and ‖q‖‖k‖ at the anchors minus elsewhere.
 */
function qkPart(qk: NonNullable<Aggregate["qk"]>, models: readonly MeasuredModel[]): Finding[] {
  return models.flatMap((model) => {
    const mine = qk.samples.filter((s) => s.model === model.name);
    if (mine.length === 0) return [];
    const base = baseOf("angle-vs-norm", model);
    const layers = [...new Set(mine.flatMap((s) => s.layers))].sort((x, y) => x - y);
    const at = (l: number, k: "cos" | "norm") => mine.filter((s) => s.layers.includes(l)).map((s) => s[k][s.layers.indexOf(l)]);
    return [
      ...meanFinding(
        { ...base, quantity: "angle share of the anchors' score advantage, %" },
        mine.map((s) => s.angleShare),
      ),
      ...layers.flatMap((l) => [
        ...meanFinding({ ...base, quantity: `layer ${l}: cos θ, anchors minus others` }, at(l, "cos")),
        ...meanFinding({ ...base, quantity: `layer ${l}: ‖q‖‖k‖, anchors minus others` }, at(l, "norm")),
      ]),
    ];
  });
}

/**
 * Notebook 04's findings: per question the retrieval score of the deep half of the layers minus the shallow
 * half, over the questions the ROUGE-1 filter kept (all of them when it kept none; the quantity says so), and
 * the copy events of all the model's questions.
 */
function retrievalPart(ret: NonNullable<Aggregate["retrieval"]>, models: readonly MeasuredModel[]): Finding[] {
  return models.flatMap((model) => {
    const info = ret.models.find((x) => x.model === model.name);
    if (!info) return [];
    const mine = ret.samples.filter((s) => s.model === model.name);
    const read = info.read === "kept" ? mine.filter((s) => s.kept) : mine;
    const base = baseOf("retrieval-heads-deep", model);
    const which = info.read === "kept" ? "" : " (every question: the ROUGE-1 filter kept none)";
    return [
      ...meanFinding(
        { ...base, quantity: `retrieval score, deep half minus shallow half${which}` },
        read.map((s) => s.gap),
      ),
      ...valueFinding(
        { ...base, quantity: "copy events" },
        mine.reduce((x, s) => x + s.events, 0),
        mine.length,
      ),
    ];
  });
}

/** The plain (not intervened), successful rows: what the accuracy findings read. */
function scored(rows: readonly GridRow[]): GridRow[] {
  return rows.filter((r) => r.intervention === "none" && r.error === null && typeof r.accuracy === "number");
}

const FIXED_POSITION = /^gold@\d+\//;
const CYCLING_POSITION = /^gold@cycle\//;

/**
 * The accuracy claims' findings, from the grid's rows, for every model with rows in the settings they need
 * (notebooks 06 and 08, by the same analyses):
 * - `rag-gain-mdm-vs-arm`: closed-book against each setting with the gold passage among k ≥ 1 distractors at
 *   a cycling position (notebook 06's RAG setting): per question the mean of the accuracy and F1 gains, in
 *   points, paired over questions (`pairScores`, `ragGains`), mean with its bootstrap interval;
 * - `robust-distractors`: accuracy at the smallest k minus at the largest (`distractorDrop`, paired bootstrap),
 *   over the distractor settings, a question's accuracy at one k being its mean over that k's gold positions;
 * - `robust-position`: per k with at least two fixed gold positions, best minus worst accuracy over them
 *   (`positionSpread`, paired bootstrap).
 * The rows come in grid order whatever the sharding, so the findings are the same bytes for any sharding.
 */
export function accuracyFindings(rows: readonly GridRow[], models: readonly MeasuredModel[]): Finding[] {
  const ok = scored(rows);
  return models.flatMap((model) => {
    const mine = ok.filter((r) => r.model === model.name);
    const settings = [...new Set(mine.map((r) => r.setting))];
    const out: Finding[] = [];
    if (settings.includes("closed-book"))
      for (const rag of settings.filter((s) => CYCLING_POSITION.test(s) && (mine.find((r) => r.setting === s)?.k ?? 0) >= 1)) {
        const p = pairScores(mine, model.name, "closed-book", rag);
        out.push(
          ...meanFinding(
            {
              ...baseOf("rag-gain-mdm-vs-arm", model),
              quantity: `RAG gain, points (mean of Acc and F1 gains; ${rag} vs closed-book, paired over questions)`,
            },
            ragGains(p),
          ),
        );
      }
    const withK = mine.filter((r) => r.k !== null);
    const ks = [...new Set(withK.map((r) => r.k!))].sort((a, b) => a - b);
    if (ks.length >= 2) {
      // One row per (question, k): the accuracy averaged over the gold positions (and seeds) at that k.
      const acc = new Map<string, { id: string; k: number; sum: number; n: number }>();
      for (const r of withK) {
        const key = `${r.k}\n${r.id}`;
        const a = acc.get(key) ?? { id: r.id, k: r.k!, sum: 0, n: 0 };
        a.sum += r.accuracy!;
        a.n++;
        acc.set(key, a);
      }
      const perK: QaRow[] = [...acc.values()].map((a) => ({ model: model.name, id: a.id, k: a.k, goldIndex: null, accuracy: a.sum / a.n }));
      const last = ks[ks.length - 1];
      const at = [...new Set(withK.filter((r) => r.k === last).map((r) => r.setting))].join(", ");
      out.push(
        interval(
          {
            ...baseOf("robust-distractors", model),
            quantity: `accuracy drop from ${ks[0]} to ${last} distractors (points; per question the mean over ${at})`,
          },
          distractorDrop(perK),
        ),
      );
    }
    for (const k of ks) {
      const fixed = withK.filter((r) => r.k === k && FIXED_POSITION.test(r.setting));
      const positions = [...new Set(fixed.map((r) => r.goldIndex!))].sort((a, b) => a - b);
      if (positions.length < 2) continue;
      out.push(
        interval(
          {
            ...baseOf("robust-position", model),
            quantity: `accuracy spread over gold positions ${positions.map((p) => p + 1).join(", ")} among ${k} distractors (best − worst, points)`,
          },
          positionSpread(fixed),
        ),
      );
    }
    return out;
  });
}

/** A robustness summary as a finding: its value, its paired-bootstrap 95 % interval and n. */
function interval(base: Omit<Finding, "value" | "ci95" | "n">, iv: Interval): Finding {
  return { ...base, value: iv.mean, ci95: [iv.lo, iv.hi], n: iv.n };
}

/** Accuracy and F1 (%) per model and setting, over the plain successful rows: the table behind the accuracy findings. */
function accuracyTable(rows: readonly GridRow[]): { model: string; setting: string; n: number; accuracy: number; f1: number }[] {
  const out = new Map<string, { model: string; setting: string; n: number; accuracy: number; f1: number }>();
  for (const r of scored(rows)) {
    const key = `${r.model}\n${r.setting}`;
    const a = out.get(key) ?? { model: r.model, setting: r.setting, n: 0, accuracy: 0, f1: 0 };
    a.n++;
    a.accuracy += r.accuracy!;
    a.f1 += r.f1 ?? 0;
    out.set(key, a);
  }
  return [...out.values()].map((a) => ({ ...a, accuracy: (100 * a.accuracy) / a.n, f1: (100 * a.f1) / a.n }));
}

/**
 * The paper's Table 1 (also figs/overall.png of NEUIR/Attention-Floating): Acc / F1 in %, per model, without and with RAG (top-5 passages), on five datasets.
 * "Avg." is the plain mean of the row's 10 numbers, as printed (computed upstream from unrounded values,
 * so recomputing from these cells drifts by up to ±0.02).
 *
 * For comparison tables in notebooks: `paperTable1()` gives one long row per (model, rag, dataset, metric).
 */
import * as aq from "arquero";
import type { ColumnTable } from "arquero";

export const TABLE1_DATASETS = ["NQ", "TQA", "MarcoQA", "HotpotQA", "T-REx"] as const;
export type Table1Dataset = (typeof TABLE1_DATASETS)[number];

export interface Table1Row {
  model: "Llama" | "Qwen" | "Dream" | "Llada";
  rag: boolean;
  /** [Acc, F1] per dataset, %. */
  cells: Record<Table1Dataset, [number, number]>;
  /** As printed. */
  avg: number;
}

const row = (model: Table1Row["model"], rag: boolean, v: number[], avg: number): Table1Row => ({
  model,
  rag,
  avg,
  cells: Object.fromEntries(TABLE1_DATASETS.map((d, i) => [d, [v[2 * i], v[2 * i + 1]]])) as Table1Row["cells"],
});

export const PAPER_TABLE1: readonly Table1Row[] = [
  row("Llama", false, [15.69, 32.07, 61.52, 70.78, 0.3, 16.78, 10.61, 23.83, 23.28, 34.01], 28.89),
  row("Llama", true, [35.92, 50.63, 74.84, 81.15, 0.9, 15.15, 20.93, 29.8, 24.6, 28.61], 36.25),
  row("Qwen", false, [14.95, 27.2, 52.58, 59.14, 0.2, 11.2, 19.05, 27.75, 31.2, 37.65], 28.09),
  row("Qwen", true, [34.16, 50.07, 72.61, 80.35, 0.5, 16.11, 24.5, 34.05, 30.02, 34.97], 37.74),
  row("Dream", false, [17.48, 27.13, 47.81, 53.37, 0.53, 13.36, 16.96, 24.3, 27.54, 33.22], 26.16),
  row("Dream", true, [38.66, 53.22, 76.39, 82.32, 0.9, 19.25, 24.23, 34.17, 29.46, 35.42], 39.39),
  row("Llada", false, [11.77, 21.47, 37.11, 42.88, 0.7, 11.48, 15.18, 22.55, 28.92, 33.26], 22.52),
  row("Llada", true, [55.3, 59.78, 84.9, 85.89, 2.33, 30.52, 35.79, 39.4, 43.02, 45.09], 48.2),
];

/** Long table: model, rag, dataset, metric ("accuracy" | "f1"), value (%). */
export function paperTable1(): ColumnTable {
  const rows: { model: string; rag: boolean; dataset: string; metric: string; value: number }[] = [];
  for (const r of PAPER_TABLE1) {
    for (const d of TABLE1_DATASETS) {
      rows.push({ model: r.model, rag: r.rag, dataset: d, metric: "accuracy", value: r.cells[d][0] });
      rows.push({ model: r.model, rag: r.rag, dataset: d, metric: "f1", value: r.cells[d][1] });
    }
  }
  return aq.from(rows);
}

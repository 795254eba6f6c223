/** Reading an executed notebook's outputs (nbformat 4) in the notebook tests. */
export interface Output {
  output_type: string;
  name?: string;
  text?: string | string[];
  data?: Record<string, unknown>;
}
export interface Notebook {
  cells: { cell_type: string; source: string | string[]; outputs?: Output[]; execution_count?: number | null }[];
  metadata: { kernelspec?: { name?: string } };
}
export const join1 = (v: unknown) => (Array.isArray(v) ? v.join("") : typeof v === "string" ? v : "");
export const outputsOf = (nb: Notebook) => nb.cells.flatMap((c) => c.outputs ?? []);
const MIME_FIGURE = "application/vnd.floatscope.figure.v1+json";
/**
 * The outputs showing `mime`. Every figure but the scrubber is a figure description under MIME_FIGURE
 * whose `figure` names its kind: `application/vnd.floatscope.<kind>.v1+json` selects those, with the
 * description also put under that name.
 */
export const figures = (nb: Notebook, mime: string): Output[] => {
  const kind = /^application\/vnd\.floatscope\.(.+)\.v1\+json$/.exec(mime)?.[1];
  if (!kind || kind === "scrubber" || kind === "figure") return outputsOf(nb).filter((o) => o.data && mime in o.data);
  return outputsOf(nb)
    .filter((o) => (o.data?.[MIME_FIGURE] as { figure?: string } | undefined)?.figure === kind)
    .map((o) => ({ ...o, data: { ...o.data, [mime]: o.data![MIME_FIGURE] } }));
};

/** The parts of a figure description the notebook tests read (src/protocol/figure.ts). */
export interface Desc {
  figure: string;
  title: string;
  subtitle: string[];
  warnings: string[];
  exportName: { models?: string[]; layer?: number | number[] };
  panels: {
    type: string;
    title?: string;
    rows: number;
    cols: number;
    values: (number | null)[];
    x: { title: string; labels: string[]; ticks: number[] };
    y: { title: string; labels: string[] };
    columnMarks?: { columns: number[] };
    series: { name: string; x: number[]; y: (number | null)[]; lo?: (number | null)[]; hi?: (number | null)[] }[];
    stacks: { name: string; values: number[] }[];
  }[];
}
export const markdownOf = (nb: Notebook) => outputsOf(nb).filter((o) => o.data && "text/markdown" in o.data).map((o) => join1(o.data!["text/markdown"]));

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
export const figures = (nb: Notebook, mime: string) => outputsOf(nb).filter((o) => o.data && mime in o.data);
export const markdownOf = (nb: Notebook) => outputsOf(nb).filter((o) => o.data && "text/markdown" in o.data).map((o) => join1(o.data!["text/markdown"]));

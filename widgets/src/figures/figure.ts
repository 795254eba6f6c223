/**
 * The widget of every figure but the scrubber: it draws the kernel's `FigureDescription` with the
 * same renderer the kernel used for the static image (src/protocol/draw.ts, compiled into this
 * bundle), at the width of its cell, and adds what only a live view can: redrawing when the cell
 * resizes, a read-out of the cell under the mouse for dense heatmaps (small ones and every label
 * carry their full text as SVG tooltips), and exports — the SVG as drawn, PNG at 2× or 300 dpi —
 * under file names that say figure, model(s), layer(s), head and step.
 */
import { download, el } from "../dom.js";
import {
  displayLabels,
  drawFigureWithGeometry,
  exportStem,
  formatValue,
  PayloadError,
  type CategoryAxis,
  type FigureDescription,
  type HeatGeometry,
  type Raster,
} from "../protocol.js";

/** A canvas-backed raster (the browser's own PNG encoder); undefined where there is no canvas (jsdom). */
function canvasRaster(): Raster | undefined {
  let ctx: CanvasRenderingContext2D | null;
  try {
    ctx = document.createElement("canvas").getContext("2d");
  } catch {
    ctx = null;
  }
  if (!ctx) return undefined;
  return (rgb, width, height) => {
    const c = document.createElement("canvas");
    c.width = width;
    c.height = height;
    const g = c.getContext("2d")!;
    const img = g.createImageData(width, height);
    for (let i = 0, p = 0; i < width * height; i++, p += 4) {
      img.data[p] = rgb[i * 3];
      img.data[p + 1] = rgb[i * 3 + 1];
      img.data[p + 2] = rgb[i * 3 + 2];
      img.data[p + 3] = 255;
    }
    g.putImageData(img, 0, 0);
    return c.toDataURL("image/png");
  };
}

function check(d: FigureDescription): void {
  if (!d || d.kind !== "figure" || !Array.isArray(d.panels) || d.panels.length === 0 || typeof d.title !== "string") {
    throw new PayloadError('expected a figure description (kind "figure" with panels)', "panels");
  }
}

/**
 * The description with its category labels as readers see them (protocol/token-text.ts: byte-level
 * "Ġhelpful" → "·helpful", "Ċ" → "↵"). Kernels decode token text before they send it, but outputs
 * saved before they did (and shared since) still carry raw tokens: decoding again when drawing
 * cleans those, and leaves decoded or plain labels (layer names, "doc 3") as they are.
 */
export function readableFigure(d: FigureDescription): FigureDescription {
  const axis = (a: CategoryAxis): CategoryAxis => (Array.isArray(a.labels) ? { ...a, labels: displayLabels(a.labels.map(String)) } : a);
  const panels = d.panels.map((p) => {
    if (p.type === "heat") return { ...p, x: axis(p.x), y: axis(p.y) };
    if (p.type === "bars") return { ...p, x: axis(p.x) };
    return p;
  });
  return { ...d, panels };
}

/** The PNG scales the export buttons offer: 2× (screen) and 300 dpi (print; CSS px are 1/96 in). */
export const PNG_EXPORTS = [
  { label: "PNG 2×", scale: 2, suffix: "" },
  { label: "PNG 300 dpi", scale: 300 / 96, suffix: "_300dpi" },
] as const;

export class FigureView {
  readonly root: HTMLElement;
  readonly canvas: HTMLElement;
  readonly readout: HTMLElement;
  /** The SVG markup currently shown (what the SVG export writes). */
  svg = "";
  private geometry: HeatGeometry[] = [];
  private width = 0;
  private readonly raster = canvasRaster();
  private observer: ResizeObserver | null = null;

  private constructor(
    private readonly host: HTMLElement,
    readonly description: FigureDescription,
  ) {
    const bar = el("div", { className: "fs-controls" });
    this.canvas = el("div", { className: `fs-figure-canvas fs-${description.figure}` });
    this.readout = el("div", { className: "fs-readout fs-hover", text: "" });
    const buttons = [
      this.button("SVG", () => download(new Blob([this.svg], { type: "image/svg+xml" }), `${this.fileStem()}.svg`)),
      ...PNG_EXPORTS.map((p) =>
        this.button(p.label, async () => {
          const blob = await this.exportPng(p.scale);
          if (blob) download(blob, `${this.fileStem()}${p.suffix}.png`);
        }),
      ),
    ];
    bar.append(el("span", { className: "fs-export-group" }, buttons), this.readout);
    this.root = el("div", { className: "fs-figure" }, [bar, this.canvas]);
    host.appendChild(this.root);
    this.canvas.addEventListener("mousemove", (e) => this.hover(e));
    this.canvas.addEventListener("mouseleave", () => (this.readout.textContent = ""));
    this.redraw();
    if (typeof ResizeObserver !== "undefined") {
      this.observer = new ResizeObserver(() => this.resize());
      this.observer.observe(host);
    }
  }

  static mount(host: HTMLElement, d: FigureDescription): FigureView {
    check(d);
    return new FigureView(host, readableFigure(d));
  }

  /** "floatscope_<figure>_<models>_layer…" — what an export is called. */
  fileStem(): string {
    return exportStem(this.description.exportName ?? { figure: this.description.figure });
  }

  private button(text: string, onClick: () => void | Promise<void>): HTMLButtonElement {
    const b = el("button", { className: "fs-export", text, title: `download as ${text}` });
    b.addEventListener("click", () => void onClick());
    return b;
  }

  /** The width to draw at: the cell's, or 720 px where layout gives none (jsdom, hidden cells). */
  private cellWidth(): number {
    const w = Math.floor(this.host.clientWidth || 0);
    return w >= 320 ? w - 4 : 720;
  }

  private redraw(): void {
    this.width = this.cellWidth();
    const { svg, heat } = drawFigureWithGeometry(this.description, { width: this.width, raster: this.raster });
    this.svg = svg;
    this.geometry = heat;
    const doc = new DOMParser().parseFromString(svg, "image/svg+xml");
    this.canvas.replaceChildren(document.importNode(doc.documentElement, true));
  }

  /** Redraw when the cell's width changed (the renderer also calls this on Lumino resizes). */
  resize(): void {
    if (Math.abs(this.cellWidth() - this.width) > 8) this.redraw();
  }

  /** The heat cell under the mouse, by the geometry the renderer reported. */
  private hover(e: MouseEvent): void {
    const svg = this.canvas.firstElementChild as SVGSVGElement | null;
    if (!svg) return;
    const box = svg.getBoundingClientRect();
    const sx = box.width ? this.width / box.width : 1;
    const x = (e.clientX - box.left) * sx;
    const y = (e.clientY - box.top) * sx;
    this.readout.textContent = this.cellAt(x, y) ?? "";
  }

  /** Text of the heat cell at figure coordinates (x, y), or null outside every heatmap. */
  cellAt(x: number, y: number): string | null {
    for (const g of this.geometry) {
      if (x < g.x || y < g.y || x >= g.x + g.width || y >= g.y + g.height) continue;
      const p = this.description.panels[g.panel];
      if (p.type !== "heat") continue;
      const c = Math.floor(((x - g.x) / g.width) * p.cols);
      const r = Math.floor(((y - g.y) / g.height) * p.rows);
      const v = p.values[r * p.cols + c];
      return `${p.title ? `${p.title} · ` : ""}${p.y.title} ${p.y.labels[r] ?? r} · ${p.x.title} ${p.x.labels[c] ?? c}: ${v === null || v === undefined ? "missing" : formatValue(v)}`;
    }
    return null;
  }

  /** The shown SVG rasterised by the browser at `scale` (null where there is no canvas). */
  async exportPng(scale = 2): Promise<Blob | null> {
    const svg = this.canvas.firstElementChild as SVGSVGElement | null;
    const w = Number(svg?.getAttribute("width") ?? this.width);
    const h = Number(svg?.getAttribute("height") ?? 0);
    const c = document.createElement("canvas");
    c.width = Math.round(w * scale);
    c.height = Math.round(h * scale);
    const g = c.getContext("2d");
    if (!g) return null;
    const url = URL.createObjectURL(new Blob([this.svg], { type: "image/svg+xml" }));
    try {
      const img = new Image();
      await new Promise<void>((ok, fail) => {
        img.onload = () => ok();
        img.onerror = () => fail(new Error("the browser could not rasterise the figure"));
        img.src = url;
      });
      g.fillStyle = "#fff";
      g.fillRect(0, 0, c.width, c.height);
      g.drawImage(img, 0, 0, c.width, c.height);
    } finally {
      URL.revokeObjectURL(url);
    }
    return new Promise((ok) => c.toBlob((b) => ok(b), "image/png"));
  }

  dispose(): void {
    this.observer?.disconnect();
    this.root.remove();
  }
}

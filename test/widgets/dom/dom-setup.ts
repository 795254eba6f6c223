/**
 * jsdom gaps the widgets hit: @lumino/dragdrop needs DragEvent at import time, and jsdom has no
 * canvas. The canvas stub records every call so tests can assert what was drawn (and that a
 * slider move changes it) without a rasteriser. Import this module before any widget module.
 */
export interface CanvasCall {
  canvas: HTMLCanvasElement;
  op: string;
  args: unknown[];
  fillStyle: string;
  strokeStyle: string;
}

export const canvasCalls: CanvasCall[] = [];

const g = globalThis as unknown as { DragEvent?: unknown; MouseEvent: typeof MouseEvent };
if (typeof g.DragEvent === "undefined") g.DragEvent = class DragEvent extends g.MouseEvent {};

class StubContext {
  fillStyle = "#000";
  strokeStyle = "#000";
  lineWidth = 1;
  font = "10px sans-serif";
  imageSmoothingEnabled = true;
  constructor(readonly canvas: HTMLCanvasElement) {}
  private rec(op: string, args: unknown[]): void {
    canvasCalls.push({ canvas: this.canvas, op, args, fillStyle: this.fillStyle, strokeStyle: this.strokeStyle });
  }
  createImageData(w: number, h: number) {
    return { width: w, height: h, data: new Uint8ClampedArray(w * h * 4) };
  }
  putImageData(img: unknown, x: number, y: number) {
    this.rec("putImageData", [img, x, y]);
  }
  drawImage(...a: unknown[]) {
    this.rec("drawImage", a);
  }
  fillRect(...a: unknown[]) {
    this.rec("fillRect", a);
  }
  strokeRect(...a: unknown[]) {
    this.rec("strokeRect", a);
  }
  clearRect(...a: unknown[]) {
    this.rec("clearRect", a);
  }
  fillText(...a: unknown[]) {
    this.rec("fillText", a);
  }
  beginPath() {
    this.rec("beginPath", []);
  }
  moveTo(...a: unknown[]) {
    this.rec("moveTo", a);
  }
  lineTo(...a: unknown[]) {
    this.rec("lineTo", a);
  }
  stroke() {
    this.rec("stroke", []);
  }
  scale(...a: unknown[]) {
    this.rec("scale", a);
  }
}

const contexts = new WeakMap<HTMLCanvasElement, StubContext>();
HTMLCanvasElement.prototype.getContext = function (this: HTMLCanvasElement, kind: string) {
  if (kind !== "2d") return null;
  let c = contexts.get(this);
  if (!c) contexts.set(this, (c = new StubContext(this)));
  return c;
} as unknown as HTMLCanvasElement["getContext"];
HTMLCanvasElement.prototype.toDataURL = function () {
  return "data:image/png;base64,iVBORw0KGgo=";
};
HTMLCanvasElement.prototype.toBlob = function (cb: BlobCallback) {
  cb(new Blob([new Uint8Array([137, 80, 78, 71])], { type: "image/png" }));
};

/** Calls recorded on one canvas since `from`. */
export function callsOn(canvas: HTMLCanvasElement, from = 0): CanvasCall[] {
  return canvasCalls.slice(from).filter((c) => c.canvas === canvas);
}

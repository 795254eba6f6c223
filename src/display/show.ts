/**
 * `show(x)`: display `x` in the notebook as one output carrying a full MIME bundle.
 *
 * tslab prints a cell's last expression as text (util.inspect) and never sends rich results,
 * so rich output always goes through an explicit `show()`. It returns nothing on purpose: a
 * returned object would be printed under the figure.
 */
import { DisplayError } from "../util/errors.js";
import { mimeBundleOf } from "./format.js";
import { currentSink, newDisplayId, type DisplayMessage } from "./sink.js";

/** Per-output metadata, keyed by MIME type (e.g. `{ "image/png": { width: 400 } }`). */
export type DisplayMetadata = Record<string, unknown>;

export interface ShowOptions {
  metadata?: DisplayMetadata;
}

/**
 * Display `x` as one output. `x` may be a figure spec (`heatmap({...})`), an arquero table,
 * text, or any object with `toMimeBundle()`.
 *
 * @example
 *   import { heatmap, show } from "floatscope";
 *   show(heatmap({ title: "received", xLabels: ["a", "b"], yLabels: ["L0"], values: [[0.2, 0.8]] }));
 */
export function show(x: unknown, options: ShowOptions = {}): void {
  const data = mimeBundleOf(x);
  const sink = currentSink("show()");
  sink(message(data, newDisplayId(), options.metadata), false);
}

/** A display that can be replaced in place (what `progress()` uses; also handy for live figures). */
export interface DisplayHandle {
  readonly displayId: string;
  /** First call creates the output; later calls replace it (`update_display_data`). */
  show(x: unknown, options?: ShowOptions): void;
}

/**
 * A display handle with its own display_id.
 *
 * @example
 *   const live = newDisplay();
 *   for (const step of steps) live.show(heatmap(frame(step)));   // one output, redrawn
 */
export function newDisplay(): DisplayHandle {
  const displayId = newDisplayId();
  let shown = false;
  return {
    displayId,
    show(x: unknown, options: ShowOptions = {}): void {
      const data = mimeBundleOf(x);
      const sink = currentSink("newDisplay().show()");
      sink(message(data, displayId, options.metadata), shown);
      shown = true;
    },
  };
}

function message(data: DisplayMessage["data"], displayId: string, metadata: DisplayMetadata | undefined): DisplayMessage {
  if (metadata !== undefined && (typeof metadata !== "object" || metadata === null || Array.isArray(metadata))) {
    throw new DisplayError("show() metadata must be an object keyed by MIME type", {
      field: "metadata",
      expected: "{ [mimeType]: {...} }",
      found: typeof metadata,
    });
  }
  return { data, metadata: metadata ?? {}, transient: { display_id: displayId } };
}

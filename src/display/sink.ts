/**
 * Where displays go: the running tslab kernel, or an injected sink (tests, scripts).
 *
 * tslab's public `display.raw()` sends one MIME type per output, so a full bundle goes through
 * tslab's internal `lastWriteDisplayData(content, update)` (tslab 1.0.22's converter). tslab
 * re-sets that function at every execute_request, and the copy that matters is the kernel's
 * own: a library that `require`s its own tslab would see `null`. So we never import tslab; we
 * look through `require.cache` for the loaded `tslab/dist/jupyter.js` whose function is live,
 * and we look again at every emission (the function changes from cell to cell).
 */
import { createRequire } from "node:module";
import { setSliceEmitter } from "../figures/scrubber.js";
import { DisplayError } from "../util/errors.js";
import type { MimeBundle } from "./mime.js";

/** What one display (or display update) carries, in Jupyter's `display_data` shape. */
export interface DisplayMessage {
  data: MimeBundle;
  metadata: Record<string, unknown>;
  transient: { display_id: string };
}

/** Receives displays. `update` true means "replace the output with this display_id". */
export type DisplaySink = (message: DisplayMessage, update: boolean) => void;

type WriteDisplayData = (content: DisplayMessage, update: boolean) => void;

let injected: DisplaySink | null = null;
const nodeRequire = createRequire(import.meta.url);

/**
 * Send displays to `sink` instead of the kernel (tests, scripts, other frontends).
 * Pass `null` to go back to the kernel. Returns the previously injected sink.
 */
export function setDisplaySink(sink: DisplaySink | null): DisplaySink | null {
  if (sink !== null && typeof sink !== "function") {
    throw new DisplayError("setDisplaySink() needs a function or null", {
      field: "sink",
      expected: "(message, update) => void",
      found: typeof sink,
    });
  }
  const previous = injected;
  injected = sink;
  return previous;
}

/** A capturing sink for tests: every message lands in `messages`; `restore()` uninstalls it. */
export interface DisplayCapture {
  messages: { message: DisplayMessage; update: boolean }[];
  restore(): void;
}

/** Install a sink that records every display; the usual way to test code that calls `show()`. */
export function captureDisplays(): DisplayCapture {
  const messages: DisplayCapture["messages"] = [];
  const previous = setDisplaySink((message, update) => {
    messages.push({ message, update });
  });
  return { messages, restore: () => void setDisplaySink(previous) };
}

/** The live kernel writer, if this process is a tslab kernel running a cell; else null. */
export function findKernelWriter(): WriteDisplayData | null {
  const cache = nodeRequire.cache;
  for (const key of Object.keys(cache)) {
    if (!key.replace(/\\/g, "/").endsWith("/tslab/dist/jupyter.js")) continue;
    const fn = (cache[key]?.exports as { lastWriteDisplayData?: unknown } | undefined)?.lastWriteDisplayData;
    if (typeof fn === "function") return fn as WriteDisplayData;
  }
  return null;
}

/** True when running inside a tslab kernel (ours or plain tslab), whether or not a cell is live. */
export function inKernel(): boolean {
  if ((globalThis as Record<symbol, unknown>)[Symbol.for("floatscope.kernel")] !== undefined) return true;
  return Object.keys(nodeRequire.cache).some((k) => k.replace(/\\/g, "/").endsWith("/tslab/dist/jupyter.js"));
}

/**
 * The sink to use now: an injected one, else the kernel's. Throws a DisplayError that says what
 * to do when neither exists (instead of tslab's bare "Not ready").
 */
export function currentSink(caller = "show()"): DisplaySink {
  if (injected) return injected;
  const write = findKernelWriter();
  if (write) return (message, update) => write(message, update);
  if (inKernel()) {
    throw new DisplayError(`${caller}: the kernel has no running cell to display into`, {
      hint: "call it from inside a cell (output produced after a cell finished cannot be attributed)",
    });
  }
  throw new DisplayError(`${caller} needs a Jupyter kernel or a display sink`, {
    expected: 'a notebook running the "TypeScript (floatscope)" kernel',
    found: "plain Node.js (no tslab kernel in this process)",
    hint: "open the notebook in JupyterLab (npm start), or call setDisplaySink(fn) / captureDisplays() in scripts and tests",
  });
}

/** True if a display can be sent right now (used by progress() to choose kernel vs stderr). */
export function hasSink(): boolean {
  return injected !== null || findKernelWriter() !== null;
}

let counter = 0;
/** A fresh display id (unique per process; Jupyter only needs uniqueness within a session). */
export function newDisplayId(): string {
  counter += 1;
  return `floatscope-${process.pid.toString(36)}-${Date.now().toString(36)}-${counter}`;
}

// A live scrubber's on-demand (step, layer) slices go out as displays through the sink in force when the
// widget asks (figures/scrubber.ts cannot import this layer, so the emitter is installed from here).
setSliceEmitter((data) =>
  currentSink("scrubber slice")({ data: data as MimeBundle, metadata: {}, transient: { display_id: newDisplayId() } }, false),
);

/**
 * On-demand scrubber data from the live kernel. A payload built in a running kernel carries a
 * `live` key; for a (step, layer) whose maps were not embedded, the view asks the kernel of the
 * notebook it sits in to display that slice (`liveSliceCode`), and reads the reply off the kernel's
 * IOPub channel: the reply never becomes a notebook output, so saved notebooks stay small.
 *
 * The JupyterLab plugin (plugin.ts) installs the resolver that finds the kernel of the notebook or
 * console holding a DOM node; without it (tests, a saved notebook in another frontend) nothing is
 * fetched and the view says that the rest needs a live session.
 */
import { liveSliceCode, MIME_SCRUBBER_SLICE, type ScrubberSlice } from "../protocol.js";

/** The subset of a Jupyter kernel connection this module uses. */
export interface LiveKernel {
  requestExecute(
    content: { code: string; silent?: boolean; store_history?: boolean; allow_stdin?: boolean },
    disposeOnDone?: boolean,
  ): {
    onIOPub: (msg: { header: { msg_type: string }; content: Record<string, unknown> }) => void;
    done: Promise<unknown>;
  };
}

export type KernelResolver = (node: HTMLElement) => LiveKernel | null;

const RESOLVER = Symbol.for("floatscope.widgets.kernelResolver");
type Holder = { [RESOLVER]?: KernelResolver };

/** Install the function that finds the kernel behind a DOM node (plugin.ts). */
export function setKernelResolver(r: KernelResolver | null): void {
  (globalThis as Holder)[RESOLVER] = r ?? undefined;
}

export function kernelFor(node: HTMLElement): LiveKernel | null {
  const r = (globalThis as Holder)[RESOLVER];
  try {
    return r ? r(node) : null;
  } catch {
    return null;
  }
}

/** Ask `kernel` for one slice; resolves to the slice, or to an error slice naming what went wrong. */
export async function fetchSlice(
  kernel: LiveKernel,
  key: string,
  run: number,
  stepIndex: number,
  layerIndex: number,
): Promise<ScrubberSlice> {
  let slice: ScrubberSlice | null = null;
  let err = "";
  const future = kernel.requestExecute({ code: liveSliceCode(key, run, stepIndex, layerIndex), silent: false, store_history: false }, true);
  future.onIOPub = (msg) => {
    const t = msg.header.msg_type;
    const data = msg.content.data as Record<string, unknown> | undefined;
    if ((t === "display_data" || t === "execute_result") && data && data[MIME_SCRUBBER_SLICE])
      slice = data[MIME_SCRUBBER_SLICE] as ScrubberSlice;
    else if (t === "error") err = `${String(msg.content.ename)}: ${String(msg.content.evalue)}`;
    else if (t === "stream" && msg.content.name === "stderr") err += String(msg.content.text ?? "");
  };
  await future.done;
  return slice ?? { key, run, stepIndex, layerIndex, error: err.trim() || "the kernel sent no data (run the cell again)" };
}

/** Whether a resolver is installed (inside JupyterLab / Notebook 7). */
export function hasKernelResolver(): boolean {
  return typeof (globalThis as Holder)[RESOLVER] === "function";
}

/**
 * JupyterLab plugin beside the mime renderers:
 * - `.fstrace` files get a file type; double-clicking one (or "Open in floatscope scrubber" in the
 *   file browser's context menu) opens it straight into the scrubber in the main area. The trace
 *   is read and turned into a payload by a short-lived floatscope kernel (the same reader and
 *   builder a notebook uses; nothing is re-implemented in the browser), then the kernel shuts down.
 * - `floatscope:export-png` / `floatscope:export-svg` export the scrubber last clicked or focused
 *   (also in the scrubber's context menu).
 */
import type { JupyterFrontEnd, JupyterFrontEndPlugin } from "@jupyterlab/application";
import { Widget } from "@lumino/widgets";
import { download, el, errorBox } from "./dom.js";
import { MIME_SCRUBBER, type ScrubberPayload } from "./protocol.js";
import { ScrubberView } from "./scrubber/view.js";
import { activeScrubber } from "./scrubber/registry.js";
import { setKernelResolver, type LiveKernel } from "./scrubber/live.js";

export const TRACE_FILE_TYPE = "floatscope-trace";
const OPEN = "floatscope:open-trace";
const EXPORT_PNG = "floatscope:export-png";
const EXPORT_SVG = "floatscope:export-svg";
/** Name of the kernelspec `scripts/setup.sh` installs. */
const KERNEL = "floatscope";

/** Kernel code that reads a trace and shows its scrubber (the path is JSON-quoted, never spliced raw). */
export function openTraceCode(path: string): string {
  return [
    // (tslab mangles identifiers that start with "__", hence the plain name)
    `const floatscopeLib = require(require("path").join(process.env.FLOATSCOPE_ROOT || process.cwd(), "src"));`,
    `floatscopeLib.show(floatscopeLib.scrubber(floatscopeLib.readTrace(${JSON.stringify(path)}), { title: ${JSON.stringify(path)} }));`,
  ].join("\n");
}

type Kernels = {
  startNew(o: { name: string }): Promise<{
    requestExecute(c: { code: string; store_history?: boolean }): {
      onIOPub: (msg: { header: { msg_type: string }; content: Record<string, unknown> }) => void;
      done: Promise<{ content: { status: string } }>;
    };
    shutdown(): Promise<void>;
  }>;
};

/** A main-area widget showing one trace file in the scrubber. */
class TraceScrubber extends Widget {
  private view: ScrubberView | null = null;
  /** The kernel that read the trace: kept while the tab is open, so it serves every step on demand. */
  liveKernel: (LiveKernel & { shutdown(): Promise<void> }) | null = null;
  constructor(readonly path: string) {
    super();
    this.id = `floatscope-trace-${Math.random().toString(36).slice(2)}`;
    this.title.label = `${path.split("/").pop()} · scrubber`;
    this.title.caption = path;
    this.title.closable = true;
    this.addClass("fs-renderer");
    this.addClass("fs-trace-document");
    this.node.appendChild(el("div", { className: "fs-help", text: `reading ${path} with a floatscope kernel…` }));
  }

  showPayload(payload: ScrubberPayload): void {
    this.node.textContent = "";
    this.view = new ScrubberView(this.node, payload);
  }

  fail(message: string): void {
    this.node.textContent = "";
    this.node.appendChild(errorBox(message));
  }

  override dispose(): void {
    this.view?.dispose();
    void this.liveKernel?.shutdown().catch(() => undefined);
    this.liveKernel = null;
    super.dispose();
  }
}

async function openTrace(app: JupyterFrontEnd, path: string): Promise<void> {
  const w = new TraceScrubber(path);
  app.shell.add(w, "main");
  app.shell.activateById(w.id);
  const kernels = (app.serviceManager as unknown as { kernels: Kernels }).kernels;
  let kernel: Awaited<ReturnType<Kernels["startNew"]>> | null = null;
  try {
    kernel = await kernels.startNew({ name: KERNEL });
    let shown = false;
    let stderr = "";
    const future = kernel.requestExecute({ code: openTraceCode(path), store_history: false });
    future.onIOPub = (msg) => {
      const t = msg.header.msg_type;
      const data = msg.content.data as Record<string, unknown> | undefined;
      if ((t === "display_data" || t === "update_display_data") && data && data[MIME_SCRUBBER]) {
        w.showPayload(data[MIME_SCRUBBER] as ScrubberPayload);
        shown = true;
      } else if (t === "stream" && msg.content.name === "stderr") {
        stderr += String(msg.content.text ?? "");
      } else if (t === "error") {
        stderr += `${msg.content.ename}: ${msg.content.evalue}`;
      }
    };
    const reply = await future.done;
    if (!shown) w.fail(stderr.trim() || `the kernel could not read ${path} (status ${reply.content.status})`);
    else if (!w.isDisposed) {
      // keep it: the scrubber asks it for the steps its payload does not hold; closing the tab shuts it down
      w.liveKernel = kernel as unknown as LiveKernel & { shutdown(): Promise<void> };
      kernel = null;
    }
  } catch (e) {
    w.fail(`cannot start the "${KERNEL}" kernel to read ${path}: ${e instanceof Error ? e.message : String(e)} (run scripts/setup.sh)`);
  } finally {
    void kernel?.shutdown().catch(() => undefined);
  }
}

/** Folder the default file browser shows ("" at the server root). */
function browserDir(app: JupyterFrontEnd): string {
  for (const w of app.shell.widgets("left")) {
    const model = (w as unknown as { model?: { path?: unknown } }).model;
    if (w.id === "filebrowser" && typeof model?.path === "string") return model.path;
  }
  return "";
}

/** Server path of a file-browser row (its name in the browser's current folder). */
function rowPath(app: JupyterFrontEnd, row: Element): string | null {
  const name = row.querySelector(".jp-DirListing-itemText")?.textContent?.trim();
  if (!name) return null;
  const dir = browserDir(app);
  return dir ? `${dir}/${name}` : name;
}

function selectedPaths(app: JupyterFrontEnd): string[] {
  return Array.from(document.querySelectorAll(`.jp-DirListing-item.jp-mod-selected[data-file-type="${TRACE_FILE_TYPE}"]`))
    .map((r) => rowPath(app, r))
    .filter((p): p is string => p !== null);
}

const plugin: JupyterFrontEndPlugin<void> = {
  id: "@floatscope/widgets:plugin",
  description: "Open .fstrace files in the attention-step scrubber; export the current view as PNG or SVG.",
  autoStart: true,
  activate: (app: JupyterFrontEnd) => {
    // The scrubber asks the kernel of the notebook (or console) it sits in for the steps its output
    // does not hold (scrubber/live.ts): find the main-area widget around it and its session's kernel.
    setKernelResolver((node) => {
      for (const w of app.shell.widgets("main")) {
        if (w instanceof TraceScrubber && w.node.contains(node)) return w.liveKernel;
        const session = (w as unknown as { sessionContext?: { session?: { kernel?: LiveKernel | null } | null } }).sessionContext;
        if (session && w.node.contains(node)) return session.session?.kernel ?? null;
      }
      return null;
    });
    app.docRegistry.addFileType({
      name: TRACE_FILE_TYPE,
      displayName: "floatscope trace",
      extensions: [".fstrace"],
      mimeTypes: ["application/x-floatscope-trace"],
      fileFormat: "base64",
      contentType: "file",
    });
    app.commands.addCommand(OPEN, {
      label: "Open in floatscope scrubber",
      describedBy: { args: { type: "object", properties: { path: { type: "string" } } } },
      execute: async (args) => {
        const paths = typeof args.path === "string" ? [args.path] : selectedPaths(app);
        for (const p of paths) await openTrace(app, p);
      },
    });
    app.commands.addCommand(EXPORT_PNG, {
      label: "Export floatscope view as PNG",
      isEnabled: () => activeScrubber() !== null,
      execute: async () => {
        const v = activeScrubber();
        const blob = v ? await v.exportPng() : null;
        if (v && blob) download(blob, `${v.fileStem()}.png`);
      },
    });
    app.commands.addCommand(EXPORT_SVG, {
      label: "Export floatscope view as SVG",
      isEnabled: () => activeScrubber() !== null,
      execute: () => {
        const v = activeScrubber();
        if (v) download(new Blob([v.exportSvg()], { type: "image/svg+xml" }), `${v.fileStem()}.svg`);
      },
    });
    app.contextMenu.addItem({ command: OPEN, selector: '.jp-DirListing-item[data-file-type="floatscope-trace"]', rank: 1 });
    app.contextMenu.addItem({ command: EXPORT_PNG, selector: ".fs-scrubber", rank: 1 });
    app.contextMenu.addItem({ command: EXPORT_SVG, selector: ".fs-scrubber", rank: 2 });
    // Double-click on a trace in the file browser opens the scrubber instead of the binary editor.
    document.addEventListener(
      "dblclick",
      (ev) => {
        const row = (ev.target as HTMLElement | null)?.closest?.(`.jp-DirListing-item[data-file-type="${TRACE_FILE_TYPE}"]`);
        const path = row ? rowPath(app, row) : null;
        if (!path) return;
        ev.preventDefault();
        ev.stopPropagation();
        void app.commands.execute(OPEN, { path });
      },
      true,
    );
  },
};

export default plugin;

/**
 * @floatscope/widgets — JupyterLab 4 / Notebook 7 mime renderers for floatscope outputs.
 *
 * One extension per MIME type (`application/vnd.floatscope.<view>.v1+json`). Every factory is
 * `safe: true`: payloads are plain JSON we never execute, and all text is escaped, so views
 * render in untrusted notebooks too. Rank 0 wins over the PNG/SVG/text fallbacks the kernel
 * sends in the same bundle. No network: figures are drawn as SVG by the renderer the kernel uses.
 */
import type { IRenderMime } from "@jupyterlab/rendermime-interfaces";
import { MIME_FIGURE, MIME_SCRUBBER, type FigureDescription } from "./protocol.js";
import { FloatscopeRenderer, mountScrubber, type Mount } from "./renderer.js";
import { FigureView } from "./figures/figure.js";

/** File extension of a saved scrubber payload (opens from the file browser into the scrubber). */
export const SCRUBBER_FILE_EXTENSION = ".fscrub.json";

function extension(name: string, mimeType: string, mount: Mount, extra: Partial<IRenderMime.IExtension> = {}): IRenderMime.IExtension {
  return {
    id: `@floatscope/widgets:${name}`,
    description: `floatscope ${name} view`,
    rendererFactory: {
      safe: true,
      mimeTypes: [mimeType],
      defaultRank: 0,
      createRenderer: (options) => new FloatscopeRenderer(options.mimeType, mount),
    },
    rank: 0,
    dataType: "json",
    ...extra,
  };
}

const mountFigure: Mount = (host, p) => FigureView.mount(host, p as FigureDescription);

const extensions: IRenderMime.IExtension[] = [
  extension("scrubber", MIME_SCRUBBER, mountScrubber, {
    fileTypes: [
      {
        name: "floatscope-scrubber",
        displayName: "floatscope scrubber",
        mimeTypes: [MIME_SCRUBBER],
        extensions: [SCRUBBER_FILE_EXTENSION],
        fileFormat: "text",
      },
    ],
    documentWidgetFactoryOptions: {
      name: "floatscope scrubber",
      primaryFileType: "floatscope-scrubber",
      fileTypes: ["floatscope-scrubber"],
      defaultFor: ["floatscope-scrubber"],
    },
  }),
  // every other figure: one description, drawn by the same renderer as the static image
  extension("figure", MIME_FIGURE, mountFigure),
];

export default extensions;

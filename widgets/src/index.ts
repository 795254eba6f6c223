/**
 * @floatscope/widgets — JupyterLab 4 / Notebook 7 mime renderers for floatscope outputs.
 *
 * One extension per MIME type (`application/vnd.floatscope.<view>.v1+json`). Every factory is
 * `safe: true`: payloads are plain JSON we never execute, and all text is escaped, so views
 * render in untrusted notebooks too. Rank 0 wins over the PNG/SVG/text fallbacks the kernel
 * sends in the same bundle. No network: plotly is bundled and loaded lazily.
 */
import type { IRenderMime } from "@jupyterlab/rendermime-interfaces";
import {
  MIME_ABSORPTION,
  MIME_DISTRACTOR,
  MIME_DRIFT,
  MIME_HEATMAP,
  MIME_TOKEN_TYPES,
  MIME_QK,
  MIME_RETRIEVAL,
  MIME_ROLLOUT,
  MIME_SCRUBBER,
  type QkPayload,
} from "./protocol.js";
import { FloatscopeRenderer, mountScrubber, type Mount } from "./renderer.js";
import { QkView } from "./figures/qk.js";
import { ChartView } from "./figures/charts.js";

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

const mountQk: Mount = (host, p) => QkView.mount(host, p as QkPayload);
const mountChart: Mount = (host, p) => ChartView.mount(host, p);

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
  extension("qk", MIME_QK, mountQk),
  extension("absorption", MIME_ABSORPTION, mountChart),
  extension("retrieval", MIME_RETRIEVAL, mountChart),
  extension("rollout", MIME_ROLLOUT, mountChart),
  extension("distractor", MIME_DISTRACTOR, mountChart),
  extension("drift", MIME_DRIFT, mountChart),
  extension("token-types", MIME_TOKEN_TYPES, mountChart),
  extension("heatmap", MIME_HEATMAP, mountChart),
];

export default extensions;

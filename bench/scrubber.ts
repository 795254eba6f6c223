/**
 * Scrubber benchmark: redraw time per slider move in headless Chromium (Debian's, via
 * playwright-core) for a trace of 1024 tokens × 32 layers × 64 steps, and the payload size.
 *
 *   npx tsx bench/scrubber.ts            # writes the "## Widgets" section of BENCHMARKS.md
 *   npx tsx bench/scrubber.ts --quick    # 256 tokens, prints only
 *
 * The page loads the widget modules as tsc emits them (widgets/lib, plain ES modules) from a
 * localhost server — the same ScrubberView class the JupyterLab renderer mounts — and times:
 * - step move: one `input` on the step slider → state update + synchronous redraw of every canvas
 *   (temporal view with the step outline, token strip, full map when that step has one);
 * - step move per frame: one move per requestAnimationFrame over 256 frames → frames per second
 *   actually achieved (headless Chromium paces rAF at 60 Hz, so 60 is the ceiling);
 * - layer move: recolours the steps × positions image of the new layer (cached afterwards);
 * - first render: decode the payload + build the DOM + first draw.
 * A second, smaller payload times the per-head views (head view lines + layers × heads grid) on a
 * layer with per-head maps: at 1024 tokens one (step, layer) of 32 heads' maps is 32 MB, which no
 * payload cap holds, so that scenario is 256 tokens × 16 heads.
 * Medians over 5 repeats (each repeat sweeps all steps).
 *
 * Callable: `main(["--quick"])` from the bench runner, or run this file directly.
 */
import * as fs from "node:fs";
import * as http from "node:http";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";
import { scrubberPayload } from "../src/figures/scrubber.js";
import { describeSubsampling, payloadSize } from "../src/protocol/payloads.js";
import { syntheticTrace } from "../test/widgets/synthetic-trace.js";
import { CHROMIUM, CHROMIUM_ARGS } from "../test/widgets/browser/lab-server.js";
import { loadAverage, markdownTable, median as med, ROOT, benchmarkFile, writeBenchmarkSection, writesSection } from "./lib.js";
/** Run the benchmark; returns the markdown section body (also written to BENCHMARKS.md unless --quick). */
export async function main(argv: string[] = process.argv.slice(2)): Promise<string> {
  const quick = argv.includes("--quick");
  const N = quick ? 256 : 1024;
  const LAYERS = 32;
  const STEPS = 64;
  const REPEATS = 5;

  const LIB = path.join(ROOT, "widgets/lib");
  if (!fs.existsSync(path.join(LIB, "widgets/src/scrubber/view.js"))) {
    throw new Error("widgets/lib missing: run `npm run build -w @floatscope/widgets` first");
  }

  const t0 = performance.now();
  const trace = syntheticTrace({
    promptLength: N / 4,
    genLength: (3 * N) / 4,
    steps: STEPS,
    layers: LAYERS,
    heads: 32,
    mapLayers: [LAYERS - 1],
  });
  const tTrace = performance.now() - t0;
  const t1 = performance.now();
  const payload = scrubberPayload(trace, { title: `benchmark: ${N} tokens × ${LAYERS} layers × ${STEPS} steps` });
  const tBuild = performance.now() - t1;
  const json = JSON.stringify(payload);
  // Per-head views: 256 tokens × 8 layers × 16 steps × 16 heads, per-head maps at the last layer.
  const HN = 256;
  const headsTrace = syntheticTrace({
    promptLength: 64,
    genLength: HN - 64,
    steps: 16,
    layers: 8,
    heads: 16,
    perHead: true,
    mapLayers: [7],
    headMapLayers: [7],
  });
  const headsPayload = scrubberPayload(headsTrace, { title: "benchmark: per-head views" });
  const headsJson = JSON.stringify(headsPayload);
  const headMaps = headsPayload.runs[0].headMaps?.length ?? 0;
  const bytes = payloadSize(payload);
  const maps = payload.runs[0].maps.length;

  const page = `<!doctype html><meta charset="utf-8"><link rel="stylesheet" href="/style/base.css"><body>
  <div id="host"></div>
  <script type="module">
  import { ScrubberView } from "/lib/widgets/src/scrubber/view.js";
  const median = (a) => { const s = [...a].sort((x, y) => x - y); return s[Math.floor(s.length / 2)]; };
  window.runBench = async (repeats) => {
    const res = await fetch("/payload.json");
    const text = await res.text();
    const out = { firstRender: [], stepMove: [], stepMoveFlushed: [], idleFps: [], rafFps: [], layerMove: [], mapStepMove: [], mapStepMoveFirst: [] };
    for (let r = 0; r < repeats; r++) {
      const host = document.getElementById("host");
      host.textContent = "";
      const a = performance.now();
      const view = new ScrubberView(host, JSON.parse(text));
      out.firstRender.push(performance.now() - a);
      const S = view.extent.steps;
      const slider = view.root.querySelector('input[data-role="step"]');
      const move = (s) => { slider.value = String(s); slider.dispatchEvent(new Event("input")); };
      // warm the (layer 0, mean) image cache, then sweep the steps
      move(0);
      // Timer resolution is coarse (0.1 ms), so time whole sweeps and divide. "flushed" reads one
      // pixel back after each move, which forces the canvas to rasterise: the honest per-move cost.
      const canvas = view.panels[0].temporal.getContext("2d");
      let b = performance.now();
      for (let k = 0; k < 10; k++) for (let s = 0; s < S; s++) move(s);
      out.stepMove.push((performance.now() - b) / (10 * S));
      b = performance.now();
      for (let k = 0; k < 4; k++) for (let s = 0; s < S; s++) { move(s); canvas.getImageData(0, 0, 1, 1); }
      out.stepMoveFlushed.push((performance.now() - b) / (4 * S));
      // Frame pacing of this headless browser with nothing to draw (the ceiling for the next line).
      await new Promise((done) => {
        let f = 0; const start = performance.now();
        const tick = () => { f++; if (f < 256) requestAnimationFrame(tick); else { out.idleFps.push(256 / ((performance.now() - start) / 1000)); done(); } };
        requestAnimationFrame(tick);
      });
      // one move per animation frame
      await new Promise((done) => {
        let f = 0; const start = performance.now();
        const tick = () => { move(f % S); f++; if (f < 256) requestAnimationFrame(tick); else { out.rafFps.push(256 / ((performance.now() - start) / 1000)); done(); } };
        requestAnimationFrame(tick);
      });
      // layer moves (each new layer paints its steps × positions image once)
      const layer = view.root.querySelector('input[data-role="layer"]');
      b = performance.now();
      for (let l = 1; l < view.extent.layers; l++) { layer.value = String(l); layer.dispatchEvent(new Event("input")); canvas.getImageData(0, 0, 1, 1); }
      out.layerMove.push((performance.now() - b) / (view.extent.layers - 1));
      // on the map layer (last), step moves that also draw a full N×N map (first visit paints it)
      b = performance.now();
      for (let s = 0; s < S; s++) { move(s); canvas.getImageData(0, 0, 1, 1); }
      out.mapStepMoveFirst.push((performance.now() - b) / S);
      b = performance.now();
      for (let k = 0; k < 4; k++) for (let s = 0; s < S; s++) { move(s); canvas.getImageData(0, 0, 1, 1); }
      out.mapStepMove.push((performance.now() - b) / (4 * S));
      view.dispose();
    }
    return out;
  };
  window.runHeads = async (repeats) => {
    const text = await (await fetch("/heads.json")).text();
    const out = { selected: [], all: [], lines: [], thumbs: 0 };
    for (let r = 0; r < repeats; r++) {
      const host = document.getElementById("host");
      host.textContent = "";
      const view = new ScrubberView(host, JSON.parse(text));
      const p = view.panels[0];
      view.dispatch({ type: "layer", value: view.extent.layers - 1 });
      const steps = p.data.headMapSteps(view.extent.layers - 1);
      const ctx = p.headView.canvas.getContext("2d");
      const sweep = () => {
        const b = performance.now();
        for (let k = 0; k < 4; k++) for (const s of steps) { view.dispatch({ type: "step", value: s }); ctx.getImageData(0, 0, 1, 1); }
        return (performance.now() - b) / (4 * steps.length);
      };
      out.all.push(sweep());
      view.dispatch({ type: "select", position: 100 });
      out.selected.push(sweep());
      out.lines.push(p.headView.lines);
      out.thumbs = p.headGrid.count;
      view.dispose();
    }
    return out;
  };
  window.ready = true;
  </script>`;

  const server = http.createServer((req, res) => {
    const url = decodeURIComponent((req.url ?? "/").split("?")[0]);
    if (url === "/") return void res.writeHead(200, { "content-type": "text/html" }).end(page);
    if (url === "/payload.json") return void res.writeHead(200, { "content-type": "application/json" }).end(json);
    if (url === "/heads.json") return void res.writeHead(200, { "content-type": "application/json" }).end(headsJson);
    const base = url.startsWith("/lib/") ? LIB : url.startsWith("/style/") ? path.join(ROOT, "widgets/style") : null;
    const file = base ? path.join(base, url.replace(/^\/(lib|style)\//, "")) : null;
    if (!file || !file.startsWith(base!) || !fs.existsSync(file)) return void res.writeHead(404).end();
    res.writeHead(200, { "content-type": file.endsWith(".js") ? "text/javascript" : "text/css" }).end(fs.readFileSync(file));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const port = (server.address() as { port: number }).port;

  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
  const version = browser.version();
  const tab = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  await tab.goto(`http://127.0.0.1:${port}/`);
  // Page functions run in the browser; globalThis there is the window.
  await tab.waitForFunction(() => (globalThis as unknown as { ready?: boolean }).ready === true);
  const load = loadAverage()[0];
  const r = (await tab.evaluate(
    (n) => (globalThis as unknown as { runBench(n: number): Promise<Record<string, number[]>> }).runBench(n),
    REPEATS,
  )) as Record<string, number[]>;
  const h = (await tab.evaluate(
    (n) => (globalThis as unknown as { runHeads(n: number): Promise<Record<string, number[]>> }).runHeads(n),
    REPEATS,
  )) as Record<string, number[]> & { thumbs: number };
  await browser.close();
  server.close();

  const ms = (v: number) => v.toFixed(2);
  const stepMs = med(r.stepMoveFlushed);
  const fps = (v: number) => `${Math.floor(1000 / v)} fps bound`;
  const rows = [
    ["step move, rasterised (temporal view + step outline + token strip)", `${ms(stepMs)} ms`, fps(stepMs)],
    ["step move, JS only (draw calls queued)", `${ms(med(r.stepMove))} ms`, fps(med(r.stepMove))],
    [
      "step move once per animation frame, 256 frames",
      "—",
      `${med(r.rafFps).toFixed(1)} fps achieved (idle page: ${med(r.idleFps).toFixed(1)})`,
    ],
    ["step move on the map layer, maps cached (+ full map)", `${ms(med(r.mapStepMove))} ms`, fps(med(r.mapStepMove))],
    ["step move on the map layer, first visit (paints each map)", `${ms(med(r.mapStepMoveFirst))} ms`, fps(med(r.mapStepMoveFirst))],
    ["layer move (paints the layer's steps × positions image)", `${ms(med(r.layerMove))} ms`, fps(med(r.layerMove))],
    ["first render (parse + decode + DOM + draw)", `${ms(med(r.firstRender))} ms`, "—"],
    [
      `per-head views, ${HN} tokens × 16 heads: step move, no token selected (grid of ${h.thumbs} thumbnails; the head view's all-queries overview is drawn only up to 64 tokens, OVERVIEW_MAX_TOKENS in widgets/src/scrubber/heads.ts)`,
      `${ms(med(h.all))} ms`,
      fps(med(h.all)),
    ],
    [`per-head views: step move with a token selected (${med(h.lines)} lines)`, `${ms(med(h.selected))} ms`, fps(med(h.selected))],
  ];
  const note = describeSubsampling(payload.subsampled);
  const body = `Attention-step scrubber (\`bench/scrubber.ts\`), headless Chromium ${version} (Debian, playwright-core), 2 shared cores.
Synthetic MDM trace: ${N} tokens × ${LAYERS} layers × ${STEPS} steps, head-mean received attention, full maps recorded at layer ${LAYERS - 1};
median of ${REPEATS} repeats, each sweeping every step. Goal: ≥ 60 frames per second per slider move.
Load average when the run started: ${load.toFixed(1)} (the machine is shared; "achieved" fps is paced by the compositor of a
software-rendered headless browser, so compare it with the idle page, and read the per-move costs as the widget's own work).

${markdownTable(["operation", "per move (median of repeats)", "rate"], rows)}

Payload (default cap ${(8).toFixed(0)} MiB): **${(bytes / 1e6).toFixed(2)} MB** of JSON, ${maps} full ${N}×${N} map(s)${note ? `; ${note}` : ""}.
Per-head views payload: ${(payloadSize(headsPayload) / 1e6).toFixed(2)} MB, per-head maps at ${headMaps} (step, layer) pair(s) of 16 (${describeSubsampling(headsPayload.subsampled) || "nothing subsampled"}).
Built in ${(tBuild / 1000).toFixed(2)} s in the kernel (synthetic trace made in ${(tTrace / 1000).toFixed(1)} s, not counted).
`;
  console.log(body);
  if (writesSection(quick)) {
    writeBenchmarkSection("## Widgets", `## Widgets\n\n${body.trim()}\n`);
    fs.mkdirSync(path.join(ROOT, "bench/out"), { recursive: true });
    fs.writeFileSync(
      path.join(ROOT, "bench/out/scrubber.json"),
      JSON.stringify({ N, LAYERS, STEPS, bytes, maps, chromium: version, raw: r }, null, 1),
    );
    console.log("wrote " + benchmarkFile() + " (## Widgets)");
  }
  return body;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await main();

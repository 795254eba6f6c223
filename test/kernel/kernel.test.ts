/**
 * Kernel integration: start the "TypeScript (floatscope)" kernel exactly as the installed
 * kernelspec says (argv, env, {resource_dir}), with notebooks/ as cwd like JupyterLab, drive it
 * over ZMQ and check what reaches iopub.
 */
import { readFileSync } from "node:fs";
import { isAbsolute, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KernelClient, type JupyterMessage } from "./driver.js";
import { INSTALLED_KERNEL_JSON, NOTEBOOKS, ROOT, setupMissing } from "./env.js";

const missing = setupMissing();
if (missing) console.warn(`[kernel tests skipped] ${missing}`);

const HEATMAP_MIME = "application/vnd.floatscope.figure.v1+json"; // a heatmap shows as a figure description

function streamText(msgs: JupyterMessage[], name: "stdout" | "stderr"): string {
  return msgs
    .filter((m) => m.header.msg_type === "stream" && m.content.name === name)
    .map((m) => m.content.text)
    .join("");
}
function ofType(msgs: JupyterMessage[], type: string): JupyterMessage[] {
  return msgs.filter((m) => m.header.msg_type === type);
}

describe.skipIf(missing !== null)("floatscope kernel (installed kernelspec)", () => {
  let kernel: KernelClient;
  let startMs = 0;

  beforeAll(async () => {
    const t0 = Date.now();
    kernel = await KernelClient.start(INSTALLED_KERNEL_JSON, NOTEBOOKS);
    startMs = Date.now() - t0;
  }, 90_000);

  afterAll(async () => {
    if (kernel) {
      expect(kernel.badSignatures).toBe(0);
      await kernel.shutdown();
    }
  });

  async function ok(code: string) {
    const r = await kernel.execute(code);
    if (r.reply.content.status !== "ok") {
      throw new Error(`cell failed (${r.reply.content.status}):\n${code}\n--- stderr ---\n${streamText(r.iopub, "stderr")}`);
    }
    return r.iopub;
  }

  it("kernelspec: absolute node, our launcher and preload, raised heap", () => {
    const spec = JSON.parse(readFileSync(INSTALLED_KERNEL_JSON, "utf8"));
    expect(isAbsolute(spec.argv[0])).toBe(true);
    expect(spec.argv.slice(1)).toEqual(["--require", "{resource_dir}/preload.cjs", "{resource_dir}/launch.cjs", "{connection_file}"]);
    expect(spec.display_name).toBe("TypeScript (floatscope)");
    expect(spec.env.NODE_OPTIONS).toContain("--max-old-space-size=8192");
    expect(spec.env.FLOATSCOPE_ROOT).toBe(ROOT);
    console.log(`[kernel] started and answered kernel_info in ${startMs} ms`);
  });

  it("runs with the project's tslab, the preload and the raised V8 heap", async () => {
    const out = await ok(
      'const v8 = require("node:v8");\n' +
        "console.log(JSON.stringify({ tslab: process.env.FLOATSCOPE_TSLAB, cwd: process.cwd(),\n" +
        '  heapMiB: Math.round(v8.getHeapStatistics().heap_size_limit / 2 ** 20), flavour: (globalThis as any)[Symbol.for("floatscope.kernel")]?.flavour }));',
    );
    const info = JSON.parse(streamText(out, "stdout"));
    expect(info.tslab).toBe(join(ROOT, "node_modules", "tslab", "dist", "main.js"));
    expect(info.cwd).toBe(NOTEBOOKS);
    expect(info.heapMiB).toBeGreaterThanOrEqual(8000);
    expect(info.flavour).toBe("floatscope");
  });

  it("supports top-level await (and keeps the binding for later cells)", async () => {
    const out = await ok("const answer = await new Promise<number>((r) => setTimeout(() => r(21), 10));\nanswer * 2");
    expect(streamText(out, "stdout")).toBe("42\n");
    expect(streamText(await ok("answer + 1"), "stdout")).toBe("22\n");
  });

  it("a shorthand property naming an earlier cell's const works (tslab alone throws ReferenceError)", async () => {
    await ok('const tokenizer = { name: "tiny" };\nlet seen = "";');
    // object literal, nested literal, destructuring assignment with a default, and a destructuring
    // declaration (a binding pattern, which must stay as it is)
    const out = await ok(
      "const opts = { tokenizer, depth: { tokenizer } };\n" +
        '({ seen = "default" } = {} as { seen?: string });\n' +
        "const { depth } = opts;\n" +
        "console.log(JSON.stringify([opts.tokenizer.name, depth.tokenizer === tokenizer, seen]));",
    );
    expect(streamText(out, "stdout")).toBe('["tiny",true,"default"]\n');
    expect(streamText(await ok("seen"), "stdout")).toBe("default\n");
  });

  it("imports floatscope by package name; its .d.ts type-checks under tslab's TypeScript 5.0", async () => {
    const out = await ok(
      'import { show, heatmap, progress, newDisplay, captureDisplays, DisplayError, MIME_FIGURE, type HeatmapSpec, type MimeBundle, type Colormap } from "floatscope";\n' +
        'const cm: Colormap = "magma";\n' +
        'const typed: HeatmapSpec = heatmap({ title: "typed", xLabels: ["a"], yLabels: ["b"], values: [[1]], colormap: cm });\n' +
        'const b: MimeBundle = { "text/plain": typed.title };\n' +
        "console.log(typeof show, typeof progress, typeof newDisplay, typeof captureDisplays, DisplayError.name, MIME_FIGURE, b['text/plain']);",
    );
    expect(streamText(out, "stdout")).toBe(`function function function function DisplayError ${HEATMAP_MIME} typed\n`);
  });

  it("really type-checks cells against our declarations (a wrong type fails the cell)", async () => {
    const r = await kernel.execute('const wrong: number = heatmap({ title: "x", xLabels: ["a"], yLabels: ["b"], values: [[1]] });');
    expect(r.reply.content.status).toBe("error");
    expect(streamText(r.iopub, "stderr")).toMatch(/HeatmapSpec.*not assignable to type 'number'/);
  });

  it("show() sends one display_data carrying our MIME type, an SVG and text/plain", async () => {
    const out = await ok(
      'show(heatmap({ title: "smoke <b>&</b>", xLabels: ["<s>", "</svg>"], yLabels: ["L0", "L1"], values: [[0.1, 0.9], [0.5, 0.5]] }));',
    );
    const displays = ofType(out, "display_data");
    expect(displays).toHaveLength(1);
    const { data, metadata, transient } = displays[0].content;
    expect(Object.keys(data).sort()).toEqual([HEATMAP_MIME, "image/svg+xml", "text/plain"].sort());
    expect(data[HEATMAP_MIME]).toMatchObject({
      kind: "figure",
      figure: "heatmap",
      title: "smoke <b>&</b>",
      panels: [{ type: "heat", values: [0.1, 0.9, 0.5, 0.5] }],
    });
    expect(data["image/svg+xml"]).toMatch(/^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
    expect(data["image/svg+xml"]).toContain("smoke &lt;b&gt;&amp;&lt;/b&gt;");
    expect(data["image/svg+xml"]).not.toContain("<b>");
    expect(data["text/plain"]).toContain("2 rows × 2 columns");
    expect(metadata).toEqual({});
    expect(transient.display_id).toMatch(/^floatscope-/);
    expect(streamText(out, "stderr")).toBe("");
  });

  it("a progress loop updates one output in place, throttled", async () => {
    const t0 = Date.now();
    const out = await ok(
      'const bar = progress(30, { label: "loop" });\n' +
        "for (let i = 0; i < 30; i++) { await new Promise((r) => setTimeout(r, 20)); bar.tick(); }\n" +
        "bar.done();\n" +
        'console.log("loop finished");',
    );
    const elapsed = Date.now() - t0;
    const first = ofType(out, "display_data");
    const updates = ofType(out, "update_display_data");
    expect(first).toHaveLength(1);
    expect(updates.length).toBeGreaterThanOrEqual(2);
    // ≤ one update per 100 ms of loop time, plus the final one
    expect(updates.length).toBeLessThanOrEqual(Math.ceil(elapsed / 100) + 1);
    const id = first[0].content.transient.display_id;
    expect(updates.every((u) => u.content.transient.display_id === id)).toBe(true);
    for (const m of [...first, ...updates]) expect(Object.keys(m.content.data).sort()).toEqual(["text/html", "text/plain"]);
    expect(updates.at(-1)!.content.data["text/plain"]).toMatch(/^loop {2}30\/30 .* done in /);
    expect(streamText(out, "stdout")).toBe("loop finished\n");
  });

  it("an arquero table shows as HTML", async () => {
    const out = await ok('import * as aq from "arquero";\nshow(aq.table({ layer: [0, 1], anchor: ["<bos>", "&"] }));');
    const [d] = ofType(out, "display_data");
    expect(Object.keys(d.content.data).sort()).toEqual(["text/html", "text/plain"]);
    expect(d.content.data["text/html"]).toContain("&lt;bos&gt;");
    expect(d.content.data["text/plain"]).toMatch(/^Table: 2 rows × 2 columns/);
  });

  it("an unsupported value fails the cell with a DisplayError naming the type", async () => {
    const r = await kernel.execute("show(new Map([[1, 2]]));");
    expect(r.reply.content.status).toBe("error");
    const err = streamText(r.iopub, "stderr");
    expect(err).toContain("DisplayError: show() cannot display a Map");
    expect(ofType(r.iopub, "display_data")).toHaveLength(0);
  });
});

describe.skipIf(missing !== null)("floatscope kernel started outside the checkout", () => {
  it("falls back to the checkout's tslab (FLOATSCOPE_ROOT) and still displays", async () => {
    const { mkdtempSync, rmSync } = await import("node:fs");
    const { tmpdir } = await import("node:os");
    const dir = mkdtempSync(join(tmpdir(), "floatscope-nb-outside-"));
    const kernel = await KernelClient.start(INSTALLED_KERNEL_JSON, dir);
    try {
      const r = await kernel.execute(
        'const lib = require(process.env.FLOATSCOPE_ROOT + "/src/dist/index.js");\n' +
          'lib.show("hello from " + process.cwd());\n' +
          "console.log(process.env.FLOATSCOPE_TSLAB);",
      );
      expect(r.reply.content.status, streamText(r.iopub, "stderr")).toBe("ok");
      expect(streamText(r.iopub, "stdout")).toBe(join(ROOT, "node_modules", "tslab", "dist", "main.js") + "\n");
      const [d] = ofType(r.iopub, "display_data");
      expect(d.content.data).toEqual({ "text/plain": `hello from ${dir}` });
    } finally {
      await kernel.shutdown();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});

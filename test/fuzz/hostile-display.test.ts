// @vitest-environment jsdom
/**
 * The display half of the hostile-input checks: every hostile string of the shared corpus (hostile-strings.ts) through
 * every display function that writes Markdown, HTML or SVG, and through the widgets (jsdom). Each output is
 * rendered the way a trusting frontend would (JupyterLab treats a live output as trusted):
 *
 * - HTML and SVG are inserted into a jsdom document that runs scripts (`runScripts: "dangerously"`);
 * - Markdown goes through a worst-case renderer (below): raw HTML passes through, as marked and
 *   nbconvert pass it for trusted output, and every unescaped link or image becomes an element;
 * - widgets are mounted in jsdom and their live DOM is checked as it is, then rendered as HTML too.
 *
 * Then everything that could execute is made to: `<script>` elements are re-created (what JupyterLab's
 * evalInnerHTMLScriptTags does), every `on*` attribute's event is dispatched, `javascript:` URLs and
 * iframe `srcdoc` documents are evaluated. Each payload sets `window.__FS_PWNED__` if it runs. Two checks
 * per output: the marker stays unset, and structurally no executing element or attribute is present.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { JSDOM as TypedJSDOM } from "jsdom";
// saxes is jsdom's own XML parser: a fast well-formedness and structure pass over each SVG file.
import { SaxesParser } from "saxes";
import * as aq from "arquero";
import { BROWSER_MARK, HOSTILE_STRINGS } from "./hostile-strings.js";
import { findingsText, valueFinding } from "../../src/display/findings-text.js";
import { buildClaims } from "../../src/display/claims.js";
import { findings, MIME_FINDINGS } from "../../src/display/findings.js";
import { tableBundle } from "../../src/display/table.js";
import { progressBundle } from "../../src/display/progress.js";
import { findModels, modelsNote } from "../../src/notebook/models.js";
import { notebookSettings } from "../../src/notebook/notebook.js";
import { kindBundle } from "../../src/figures/registry.js";
import { scrubber } from "../../src/figures/scrubber.js";
import { MIME_FIGURE, MIME_SCRUBBER, PayloadError } from "../../src/protocol/payloads.js";
import { FloatscopeError } from "../../src/util/errors.js";
import { FIGURE_INPUTS } from "../figures/figure-inputs.js";
import { syntheticTrace } from "../widgets/synthetic-trace.js";

// The root tsconfig has no DOM library (the library never touches a DOM), so the few DOM shapes used here are typed by hand.
interface El {
  tagName: string;
  attributes: ArrayLike<{ name: string; value: string }>;
  textContent: string | null;
  innerHTML: string;
  outerHTML: string;
  getAttribute(name: string): string | null;
  querySelectorAll(sel: string): ArrayLike<El>;
  appendChild(e: El): El;
  replaceWith(e: El): void;
  remove(): void;
  dispatchEvent(e: unknown): boolean;
}
interface Win {
  document: { body: El; createElement(tag: string): El };
  DOMParser: new () => { parseFromString(s: string, type: string): { documentElement: El; querySelectorAll(sel: string): ArrayLike<El> } };
  Event: new (type: string) => unknown;
  eval(code: string): unknown;
  [BROWSER_MARK]?: unknown;
}
const JSDOM = TypedJSDOM as unknown as new (html: string, o: { runScripts: "dangerously" }) => { window: Win };

// ---------------------------------------------------------------------------------------------------
// Rendering as a trusting frontend would, and running whatever could run.

const win = new JSDOM("<!doctype html><html><head></head><body></body></html>", { runScripts: "dangerously" }).window;
const URL_ATTRS = new Set(["href", "src", "xlink:href", "action", "formaction", "data", "poster", "background", "srcset"]);
const EXECUTING_TAGS = new Set(["SCRIPT", "IFRAME", "FRAME", "FRAMESET", "OBJECT", "EMBED", "BASE", "META", "LINK"]);

/** Browsers drop ASCII whitespace and controls inside a URL's scheme ("jav\tascript:" is javascript:). */
function scriptUrl(v: string): string | null {
  const s = v.replace(/[\u0000-\u0020]/g, "");
  const m = /^(javascript|vbscript):(.*)$/is.exec(s);
  return m ? m[2] : /^data:text\/html/i.test(s) ? "" : null;
}

/** What could execute in a subtree, as "tag[attr]" strings (empty when inert). */
function executing(root: { querySelectorAll(sel: string): ArrayLike<El> }): string[] {
  const found: string[] = [];
  for (const el of Array.from(root.querySelectorAll("*"))) {
    const tag = el.tagName.toUpperCase();
    if (EXECUTING_TAGS.has(tag)) found.push(tag.toLowerCase());
    for (const a of Array.from(el.attributes)) {
      const name = a.name.toLowerCase();
      if (name.startsWith("on") || name === "srcdoc") found.push(`${tag.toLowerCase()}[${name}]`);
      else if (URL_ATTRS.has(name) && scriptUrl(a.value) !== null) found.push(`${tag.toLowerCase()}[${name}=${a.value.slice(0, 20)}]`);
    }
  }
  return found;
}

/** Run everything in `host` that a trusting frontend (or a click) would run. */
function runAll(host: El, depth = 0, document: Win["document"] = win.document): void {
  for (const s of Array.from(host.querySelectorAll("script"))) {
    const fresh = document.createElement("script");
    fresh.textContent = s.textContent;
    s.replaceWith(fresh); // a re-created script element runs (innerHTML-inserted ones do not)
  }
  for (const el of Array.from(host.querySelectorAll("*"))) {
    for (const a of Array.from(el.attributes)) {
      const name = a.name.toLowerCase();
      try {
        if (name.startsWith("on"))
          el.dispatchEvent(new (document === win.document ? win : (globalThis as unknown as Win)).Event(name.slice(2)));
        const code = URL_ATTRS.has(name) ? scriptUrl(a.value) : null;
        if (code) win.eval(decodeURIComponent(code));
        if (name === "srcdoc" && depth < 2) {
          const inner = document.createElement("div");
          inner.innerHTML = a.value;
          runAll(inner, depth + 1, document);
        }
      } catch {
        /* a payload that throws did not set the marker; the structural check still sees it */
      }
    }
  }
}

interface Verdict {
  ran: boolean;
  executing: string[];
}

/**
 * Parse `html` as a frontend would (an HTML fragment) and list what could execute; when anything could,
 * put it into the scripted document, run it, and read the marker. (An output whose parse shows nothing
 * executing is not run: runAll acts only on what `executing` lists. Parsing into an inert <template>
 * first keeps the 8 000 outputs affordable on a shared machine.)
 */
function renderHtml(html: string): Verdict {
  const inert = win.document.createElement("template") as El & { content: El };
  inert.innerHTML = html;
  const found = executing(inert.content);
  if (found.length === 0) return { ran: false, executing: found };
  const host = win.document.createElement("div");
  win.document.body.appendChild(host);
  host.innerHTML = html;
  runAll(host);
  const ran = win[BROWSER_MARK] !== undefined;
  delete win[BROWSER_MARK];
  host.remove();
  return { ran, executing: found };
}

/**
 * SVG is shown inline (JupyterLab and nbconvert put a trusted image/svg+xml into the page: rendered as
 * HTML here) and is also a file of its own, where a <script> or on* attribute would be live: checked as
 * XML too, which must also parse (a control character in a label must not break the file).
 */
function renderSvg(svg: string): Verdict {
  const asXml: string[] = [];
  const sax = new SaxesParser({ xmlns: false });
  sax.on("opentag", (t: { name: string; attributes: Record<string, string> }) => {
    const tag = t.name.toLowerCase();
    if (EXECUTING_TAGS.has(tag.toUpperCase())) asXml.push(`xml ${tag}`);
    for (const [name, value] of Object.entries(t.attributes)) {
      const n = name.toLowerCase();
      if (n.startsWith("on") || (URL_ATTRS.has(n) && scriptUrl(value) !== null)) asXml.push(`xml ${tag}[${n}]`);
    }
  });
  try {
    sax.write(svg).close();
  } catch (e) {
    asXml.push(`not well-formed XML: ${(e as Error).message.slice(0, 80)}`);
  }
  const asHtml = renderHtml(svg);
  return { ran: asHtml.ran, executing: [...asXml, ...asHtml.executing] };
}

const ENTITY = (c: string) => `&#${c.codePointAt(0)};`;

/**
 * Markdown as the most permissive renderer would show it: backslash escapes and code spans are honoured
 * (their text shown literally), every unescaped `![alt](src)` and `[text](href)` becomes an element with
 * the destination unescaped, and everything else (raw HTML included) passes through untouched.
 */
export function worstCaseMarkdown(md: string): string {
  let out = "";
  for (let i = 0; i < md.length;) {
    const ch = md[i];
    if (ch === "\\" && /[!-/:-@[-`{-~]/.test(md[i + 1] ?? "")) {
      out += ENTITY(md[i + 1]);
      i += 2;
    } else if (ch === "`") {
      const run = /^`+/.exec(md.slice(i))![0];
      const close = md.indexOf(run, i + run.length);
      let end = close;
      while (end >= 0 && md[end + run.length] === "`") end = md.indexOf(run, end + run.length + 1);
      if (end < 0) {
        out += run;
        i += run.length;
      } else {
        const body = md.slice(i + run.length, end);
        out += `<code>${body.replace(/[!-/:-@[-`{-~]/g, ENTITY)}</code>`; // literal: no tag, and no link below
        i = end + run.length;
      }
    } else {
      out += ch;
      i++;
    }
  }
  return out
    .replace(/!\[([^\]]*)\]\(([^)]*)\)/g, (_, alt: string, src: string) => `<img alt="${alt}" src="${src}">`)
    .replace(/\[([^\]]*)\]\(([^)]*)\)/g, (_, text: string, href: string) => `<a href="${href}">${text}</a>`);
}

function renderMarkdown(md: string): Verdict {
  return renderHtml(worstCaseMarkdown(md));
}

// ---------------------------------------------------------------------------------------------------
// The display paths: each takes one hostile string and returns a verdict.

type Path = { name: string; render: (s: string) => Verdict };

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "fs-hostile-display-"));
const md = (x: { toMimeBundle(): Record<string, unknown> }) => x.toMimeBundle()["text/markdown"] as string;
const row = (model: string, quantity = "absorption, %", family = "llada", tier = "tiny") =>
  valueFinding({ claim: "absorption-arm-vs-mdm", model, family, tier, quantity }, 0.5, 4);

/** Every string of a figure input replaced by hostile text (except the fields that name a choice). */
const CHOICES = new Set(["kind", "colormap"]);
function hostileInput(x: unknown, s: string, key = ""): unknown {
  if (typeof x === "string") return CHOICES.has(key) ? x : `${s}${x}`;
  if (Array.isArray(x)) return x.map((v) => hostileInput(v, s, key));
  if (x && typeof x === "object" && !ArrayBuffer.isView(x))
    return Object.fromEntries(Object.entries(x).map(([k, v]) => [k, hostileInput(v, s, k)]));
  return x;
}

interface WidgetModules {
  FigureView: { mount(host: unknown, d: unknown): { dispose(): void } };
  ScrubberView: new (host: unknown, payload: unknown) => { exportSvg(): string };
}
let widgets: WidgetModules;
const doc = () => (globalThis as unknown as { document: Win["document"] }).document;

/**
 * A widget mounted in the test's document (vitest's jsdom, which runs scripts): its live DOM is checked
 * and run as it stands (the widget builds it; nothing is re-parsed).
 */
function renderWidget(mount: (host: El) => { dispose?(): void } | void): Verdict {
  const host = doc().createElement("div");
  doc().body.appendChild(host);
  const g = globalThis as unknown as { window: Win };
  try {
    const view = mount(host);
    const found = executing(host);
    if (found.length) runAll(host, 0, doc()); // as in renderHtml: only what could execute is run
    const ran = g.window[BROWSER_MARK] !== undefined;
    delete g.window[BROWSER_MARK];
    view?.dispose?.();
    return { ran, executing: found };
  } finally {
    host.remove();
  }
}

/** Per hostile string, what several paths share (a figure's bundle, the scrubber): made once. */
const shared = new Map<string, unknown>();
function once<T>(key: string, make: () => T): T {
  if (!shared.has(key)) shared.set(key, make());
  return shared.get(key) as T;
}
const bundleOf = (kind: string, input: unknown, s: string) =>
  once(`figure ${kind}`, () => kindBundle(hostileInput(input, s) as { kind: string }) as Record<string, unknown>);

const scrubberOf = (s: string) => once("scrubber", () => scrubberBundle(s));
function scrubberBundle(s: string) {
  const trace = syntheticTrace({ promptLength: 3, genLength: 3, steps: 2, layers: 2, heads: 1, tokens: ["a", s, "c", "d", s, "f"] });
  trace.model.name = s;
  return scrubber([trace], { title: s }).toMimeBundle();
}

const PATHS: Path[] = [
  { name: "findingsText (model name)", render: (s) => renderMarkdown(md(findingsText(row(s)))) },
  {
    name: "findingsText (quantity, headline, paper, missing)",
    render: (s) => renderMarkdown(md(findingsText(row("m", s), { headline: s, paper: s, missing: [s] }))),
  },
  {
    name: "CLAIMS.md (buildClaims)",
    render: (s) => {
      const f = row(s, `rule upstream ${s}`, s, s)[0];
      const nb = {
        cells: [{ cell_type: "code", outputs: [{ data: { [MIME_FINDINGS]: findings("02", [f]).toMimeBundle()[MIME_FINDINGS] } }] }],
      };
      return renderMarkdown(buildClaims([{ file: `02-${s}.ipynb`, json: nb }]).markdown);
    },
  },
  {
    name: "missing-model note (findModels)",
    render: (s) => renderMarkdown(modelsNote(findModels(path.join(tmp, s), ["llada", "dream"], { llada: s }))),
  },
  {
    name: "notebook settings note",
    render: (s) =>
      renderMarkdown(
        md(
          notebookSettings({
            families: ["llada", "dream"],
            env: {
              FLOATSCOPE_MODELS: `${tmp}/${s}`,
              FLOATSCOPE_MODEL_NAMES: JSON.stringify({ llada: "present", dream: s }),
              FLOATSCOPE_DATA: s,
            },
          }),
        ),
      ),
  },
  {
    name: "table (arquero, text/html)",
    render: (s) => renderHtml(tableBundle(aq.table({ [s]: [s, "x"], n: [1, 2] }) as never)["text/html"] as string),
  },
  {
    name: "progress (text/html)",
    render: (s) => renderHtml(progressBundle({ label: s, value: 3, total: 10, elapsedMs: 1200, final: false })["text/html"] as string),
  },
  ...Object.entries(FIGURE_INPUTS).map(([kind, input]): Path => ({
    name: `figure ${kind} (image/svg+xml)`,
    render: (s) => renderSvg(bundleOf(kind, input, s)["image/svg+xml"] as string),
  })),
  { name: "scrubber (image/svg+xml)", render: (s) => renderSvg(scrubberOf(s)["image/svg+xml"] as string) },
  ...Object.entries(FIGURE_INPUTS).map(([kind, input]): Path => ({
    name: `widget figure ${kind} (DOM)`,
    render: (s) => {
      const d = JSON.parse(JSON.stringify(bundleOf(kind, input, s)[MIME_FIGURE])); // as it crosses the wire
      return renderWidget((host) => widgets.FigureView.mount(host, d));
    },
  })),
  {
    name: "widget scrubber (DOM)",
    render: (s) => {
      const payload = JSON.parse(JSON.stringify(scrubberOf(s)[MIME_SCRUBBER]));
      return renderWidget((host) => {
        new widgets.ScrubberView(host, payload);
      });
    },
  },
  {
    name: "widget scrubber export (SVG file)",
    render: (s) => {
      const payload = JSON.parse(JSON.stringify(scrubberOf(s)[MIME_SCRUBBER]));
      const host = doc().createElement("div");
      try {
        return renderSvg(new widgets.ScrubberView(host, payload).exportSvg());
      } finally {
        host.remove();
      }
    },
  },
];

// ---------------------------------------------------------------------------------------------------

describe("hostile strings through every display path", () => {
  beforeAll(async () => {
    // Typed loosely (see El): the widget sources are checked by their own tsconfig, with the DOM library.
    const load = (p: string) => import(/* @vite-ignore */ new URL(p, import.meta.url).href);
    await load("../widgets/dom/dom-setup.ts");
    fs.writeFileSync(path.join(tmp, "config.json"), "{}");
    fs.mkdirSync(path.join(tmp, "present"), { recursive: true });
    widgets = {
      FigureView: ((await load("../../widgets/src/figures/figure.ts")) as { FigureView: WidgetModules["FigureView"] }).FigureView,
      ScrubberView: ((await load("../../widgets/src/scrubber/view.ts")) as { ScrubberView: WidgetModules["ScrubberView"] }).ScrubberView,
    };
  });
  afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

  it("the harness would catch a payload: raw payloads run, and are flagged", () => {
    // Without this, a harness that never runs anything would pass everything.
    expect(renderHtml(`<script>window.${BROWSER_MARK}=1</script>`)).toEqual({ ran: true, executing: ["script"] });
    expect(renderHtml(`<img src=x onerror="window.${BROWSER_MARK}=2">`)).toEqual({ ran: true, executing: ["img[onerror]"] });
    expect(renderHtml(`<svg onload="window.${BROWSER_MARK}=3"></svg>`).ran).toBe(true);
    expect(renderMarkdown(`[a](javascript:window.${BROWSER_MARK}=9)`).ran).toBe(true);
    expect(renderMarkdown(`![a](x" onerror="window.${BROWSER_MARK}=10)`).ran).toBe(true);
    expect(renderMarkdown(`\`<script>window.${BROWSER_MARK}=1</script>\``)).toEqual({ ran: false, executing: [] }); // code span: literal
    expect(renderMarkdown(`\\<script>window.${BROWSER_MARK}=1</script>`).ran).toBe(false); // an escaped "<" starts no tag
    expect(renderMarkdown(`\`[a](javascript:window.${BROWSER_MARK}=9)\``)).toEqual({ ran: false, executing: [] }); // no link in code
  });

  it("no string runs a script or leaves an executing element in any path", () => {
    let runs = 0;
    const failures: string[] = [];
    for (const s of HOSTILE_STRINGS) {
      shared.clear();
      for (const p of PATHS) {
        let v: Verdict;
        try {
          v = p.render(s);
        } catch (e) {
          // A display function may refuse a value with its typed error (not markup); anything else is a crash.
          if (!(e instanceof FloatscopeError || e instanceof PayloadError))
            failures.push(`${p.name}: ${JSON.stringify(s)} threw ${String(e)}`);
          continue;
        }
        if (v.ran) runs++;
        if (v.ran || v.executing.length)
          failures.push(`${p.name}: ${JSON.stringify(s)} → ${v.ran ? "RAN, " : ""}${v.executing.join(", ")}`);
      }
    }
    expect(failures.slice(0, 20)).toEqual([]);
    expect(runs).toBe(0);
    console.log(`hostile-display: ${HOSTILE_STRINGS.length} strings × ${PATHS.length} display paths, ${runs} scripts run`);
  }, 1_200_000); // 590 s measured on 2 cores shared by other jobs (load ≈ 17): jsdom builds ~8 400 documents
});

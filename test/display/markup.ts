/**
 * Parse SVG/HTML produced by the display layer with a real parser (jsdom), so escaping is
 * checked the way a browser would see it, not by string matching.
 */
// jsdom ships no type declarations; test/types/jsdom.d.ts types the DOMParser we use.
import { JSDOM } from "jsdom";

export interface MarkupNode {
  nodeName: string;
  textContent: string | null;
  getAttribute(name: string): string | null;
  querySelectorAll(selector: string): ArrayLike<MarkupNode>;
}

export interface MarkupDoc {
  documentElement: MarkupNode;
  querySelectorAll(selector: string): ArrayLike<MarkupNode>;
}

const window = new JSDOM("").window;

/** Parse as XML (what an SVG file must be); a parse error leaves a <parsererror> element. */
export function parseSvg(svg: string): MarkupDoc {
  return new window.DOMParser().parseFromString(svg, "image/svg+xml") as MarkupDoc;
}

/** Parse as an HTML fragment (what JupyterLab/nbconvert do with text/html). */
export function parseHtml(html: string): MarkupDoc {
  return new window.DOMParser().parseFromString(`<!doctype html><body>${html}</body>`, "text/html") as MarkupDoc;
}

export function texts(doc: MarkupDoc, selector: string): string[] {
  return Array.from(doc.querySelectorAll(selector), (n) => n.textContent ?? "");
}

/** Markup that must come out as text, never as elements (tokens of a prompt can be anything). */
export const NASTY = ["<script>alert(1)</script>", "</svg>", 'say "hi"', "it's", "a & b", "x<y>z"];

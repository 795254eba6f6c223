/**
 * Small DOM helpers. Token text and prompts are untrusted (a prompt may contain `<script>`,
 * `</svg>` or quotes), so text only ever enters the DOM through `textContent` / attribute setters,
 * and the SVG exporter builds markup through `escapeXml`. Nothing here uses innerHTML.
 */

import { escapeMarkup } from "./protocol.js";

export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: { className?: string; text?: string; title?: string } = {},
  children: (Node | null | undefined)[] = [],
): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  if (attrs.className) e.className = attrs.className;
  if (attrs.text !== undefined) e.textContent = attrs.text;
  if (attrs.title !== undefined) e.title = attrs.title;
  for (const c of children) if (c) e.appendChild(c);
  return e;
}

/**
 * Escape text for XML/HTML element content and double- or single-quoted attribute values: the kernel's
 * rule (`escapeMarkup`, src/protocol/markup.ts), so a control character in a token (which XML forbids even
 * escaped) cannot make an exported SVG file unreadable.
 */
export function escapeXml(s: string): string {
  return escapeMarkup(s);
}

/** Show a token the way people read them: visible whitespace, clipped to `max` characters. */
export function tokenLabel(t: string, max = 24): string {
  const shown = String(t).replace(/\n/g, "↵").replace(/\t/g, "⇥").replace(/ /g, "·");
  return shown.length > max ? shown.slice(0, max - 1) + "…" : shown;
}

/** A labelled range input. */
export function slider(
  label: string,
  min: number,
  max: number,
  value: number,
  onInput: (v: number) => void,
): { root: HTMLLabelElement; input: HTMLInputElement; readout: HTMLSpanElement } {
  const input = document.createElement("input");
  input.type = "range";
  input.min = String(min);
  input.max = String(max);
  input.step = "1";
  input.value = String(value);
  input.setAttribute("aria-label", label);
  input.dataset.role = label;
  const readout = el("span", { className: "fs-readout" });
  input.addEventListener("input", () => onInput(Number(input.value)));
  const root = el("label", { className: "fs-slider" }, [el("span", { className: "fs-slider-label", text: label }), input, readout]);
  return { root, input, readout };
}

/** A readable error in place of a blank output. */
export function errorBox(message: string): HTMLElement {
  return el("div", { className: "fs-error", text: `floatscope: ${message}` });
}

/** Trigger a download of `blob` as `filename` (works inside JupyterLab and Notebook 7). */
export function download(blob: Blob, filename: string): void {
  const url = URL.createObjectURL(blob);
  const a = document.createElement("a");
  a.href = url;
  a.download = filename;
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

/**
 * Small helpers for writing SVG (and HTML) as strings, shared by the one figure renderer
 * (`draw.ts`) that the kernel and the widget both run, and by the kernel's other markup.
 *
 * Why strings and not a DOM: the kernel has no DOM, and a static fallback must be a plain
 * `image/svg+xml` string that GitHub, nbviewer and nbconvert can show. Everything a figure puts
 * into markup goes through `escapeMarkup` (text) or `attrs` (attributes): figure text comes from
 * prompts and tokens, which may contain `<script>`, `</svg>`, quotes or `&`.
 */

/**
 * Escape text for use in XML/HTML text content *and* quoted attribute values.
 *
 * Besides the five markup characters, characters that XML 1.0 forbids even when escaped
 * (C0 controls except tab/newline/CR, lone surrogates, U+FFFE/U+FFFF) are replaced, so that a
 * token such as "\x01" cannot make the whole SVG unparseable: C0 controls become their visible
 * Control Pictures (U+2400 + code, e.g. "␁"), the rest become U+FFFD.
 */
export function escapeMarkup(text: unknown): string {
  const s = String(text);
  let out = "";
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    switch (c) {
      case 0x26:
        out += "&amp;";
        continue;
      case 0x3c:
        out += "&lt;";
        continue;
      case 0x3e:
        out += "&gt;";
        continue;
      case 0x22:
        out += "&quot;";
        continue;
      case 0x27:
        out += "&#39;";
        continue;
    }
    if (c < 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) {
      out += String.fromCharCode(0x2400 + c);
    } else if (c >= 0xd800 && c <= 0xdbff) {
      const next = s.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        out += s[i] + s[i + 1];
        i++;
      } else {
        out += "\ufffd";
      }
    } else if ((c >= 0xdc00 && c <= 0xdfff) || c === 0xfffe || c === 0xffff) {
      out += "\ufffd";
    } else {
      out += s[i];
    }
  }
  return out;
}

/** Attribute values: strings are escaped, numbers formatted with `num`, undefined/false dropped. */
export type AttrValue = string | number | boolean | undefined | null;

/** Render ` name="value"` pairs; names must be plain identifiers (they are not user data). */
export function attrs(values: Record<string, AttrValue>): string {
  let out = "";
  for (const [name, v] of Object.entries(values)) {
    if (v === undefined || v === null || v === false) continue;
    if (!/^[A-Za-z_:][-A-Za-z0-9_:.]*$/.test(name)) throw new TypeError(`invalid attribute name ${JSON.stringify(name)}`);
    const text = v === true ? name : typeof v === "number" ? num(v) : escapeMarkup(v);
    out += ` ${name}="${text}"`;
  }
  return out;
}

/**
 * One element as a string. `children` are already-rendered markup strings (use `text()` to turn
 * user text into markup). Self-closes when there are no children.
 */
export function el(tag: string, attributes: Record<string, AttrValue> = {}, ...children: string[]): string {
  if (!/^[A-Za-z][A-Za-z0-9]*$/.test(tag)) throw new TypeError(`invalid tag ${JSON.stringify(tag)}`);
  const open = `<${tag}${attrs(attributes)}`;
  return children.length === 0 ? `${open}/>` : `${open}>${children.join("")}</${tag}>`;
}

/** User text as escaped markup (the only way text should enter `el` children). */
export function text(value: unknown): string {
  return escapeMarkup(value);
}

/**
 * A coordinate or length for SVG output: at most 2 decimals, no "-0", no exponent.
 * Keeps fallbacks compact and byte-stable across runs.
 */
export function num(v: number): string {
  if (!Number.isFinite(v)) return "0";
  const r = Math.round(v * 100) / 100;
  return Object.is(r, -0) ? "0" : String(r);
}

/**
 * A complete standalone SVG document (what goes into `image/svg+xml`). `title` becomes the
 * accessible <title>; `width`/`height` in CSS pixels, also used for the viewBox.
 */
export function svgDocument(width: number, height: number, body: string[], options: { title?: string } = {}): string {
  const head = options.title !== undefined ? el("title", {}, text(options.title)) : "";
  return (
    `<svg xmlns="http://www.w3.org/2000/svg"${attrs({
      width,
      height,
      viewBox: `0 0 ${num(width)} ${num(height)}`,
      "font-family": "system-ui, -apple-system, 'Segoe UI', Helvetica, Arial, sans-serif",
      "font-size": 11,
    })}>` +
    head +
    body.join("") +
    "</svg>"
  );
}

/**
 * A figure title cut to the pixels it has: SVG text does not wrap, so a long rule description would run
 * off the image. ~0.6 em per character of the default sans-serif; the full title stays in the document's
 * `<title>` (tooltip, accessibility).
 */
export function fitTitle(title: string, widthPx: number, fontPx: number): string {
  return truncate(title, Math.max(8, Math.floor(widthPx / (0.6 * fontPx))));
}

/** Shorten a label to `max` characters with an ellipsis (labels are tokens; some are long). */
export function truncate(label: string, max: number): string {
  const chars = Array.from(label);
  return chars.length <= max ? label : chars.slice(0, Math.max(1, max - 1)).join("") + "…";
}

/**
 * Format a number for a tick or a summary: 3 significant digits, exponent outside [1e-3, 1e5).
 */
export function formatValue(v: number): string {
  if (!Number.isFinite(v)) return String(v);
  if (v === 0) return "0";
  const a = Math.abs(v);
  if (a >= 1e5 || a < 1e-3) return v.toExponential(2);
  return String(Number(v.toPrecision(3)));
}

/**
 * Which of `n` labels to draw when each needs `need` pixels and `avail` are available:
 * returns a stride k (draw every k-th label), at least 1.
 */
export function labelStride(n: number, avail: number, need: number): number {
  if (n <= 0) return 1;
  return Math.max(1, Math.ceil((n * need) / Math.max(avail, 1)));
}

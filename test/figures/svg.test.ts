import { describe, expect, it } from "vitest";
import { attrs, el, escapeMarkup, fitTitle, formatValue, labelStride, num, truncate } from "../../src/figures/svg.js";
import { parseSvg } from "../display/markup.js";

describe("escapeMarkup", () => {
  it("escapes the five markup characters", () => {
    expect(escapeMarkup(`<a href="x">&'`)).toBe("&lt;a href=&quot;x&quot;&gt;&amp;&#39;");
  });

  it("replaces characters XML forbids, keeps tab/newline and surrogate pairs", () => {
    expect(escapeMarkup("a\u0001b\u0000")).toBe("a\u2401b\u2400");
    expect(escapeMarkup("t\tn\n")).toBe("t\tn\n");
    expect(escapeMarkup("😀")).toBe("😀");
    expect(escapeMarkup("x\ud800y\udc00")).toBe("x\ufffdy\ufffd");
  });

  it("produces text a real XML parser reads back unchanged", () => {
    const raw = "</svg><script>alert('x')</script> & \"q\" \u0007";
    const doc = parseSvg(`<svg xmlns="http://www.w3.org/2000/svg">${el("text", { "data-x": raw }, escapeMarkup(raw))}</svg>`);
    expect(doc.querySelectorAll("parsererror").length).toBe(0);
    expect(doc.querySelectorAll("script").length).toBe(0);
    const t = doc.querySelectorAll("text")[0];
    expect(t.textContent).toBe(raw.replace("\u0007", "\u2407"));
    expect(t.getAttribute("data-x")).toBe(raw.replace("\u0007", "\u2407"));
  });
});

describe("svg helpers", () => {
  it("attrs drops undefined/false, formats numbers, rejects odd names", () => {
    expect(attrs({ x: 1.234567, y: undefined, hidden: false, id: 'a"b' })).toBe(' x="1.23" id="a&quot;b"');
    expect(() => attrs({ "on click": "x" })).toThrow(/invalid attribute name/);
  });

  it("el self-closes without children and rejects odd tags", () => {
    expect(el("rect", { width: 2 })).toBe('<rect width="2"/>');
    expect(el("g", {}, "<x/>")).toBe("<g><x/></g>");
    expect(() => el("g onload", {})).toThrow(/invalid tag/);
  });

  it("num avoids -0, NaN and long decimals", () => {
    expect(num(-0.001)).toBe("0");
    expect(num(NaN)).toBe("0");
    expect(num(2 / 3)).toBe("0.67");
  });

  it("formatValue and truncate", () => {
    expect(formatValue(0.000012345)).toBe("1.23e-5");
    expect(formatValue(0.12345)).toBe("0.123");
    expect(formatValue(123456)).toBe("1.23e+5");
    expect(truncate("abcdef", 4)).toBe("abc…");
    expect(truncate("😀😀😀", 3)).toBe("😀😀😀");
  });

  it("labelStride thins labels that would overlap", () => {
    expect(labelStride(10, 200, 12)).toBe(1);
    expect(labelStride(100, 200, 12)).toBe(6);
  });
});

describe("fitTitle", () => {
  it("cuts a title to the pixels it has, with an ellipsis, and leaves short titles alone", () => {
    // 13 px font → ~7.8 px per character → 500 px hold 64 characters.
    const long = "Absorption rate per layer (upstream: first-token; upstream: rulli-eps (ε=3, mean scale), fallback top-1)";
    const cut = fitTitle(long, 500, 13);
    expect(Array.from(cut).length).toBe(64);
    expect(cut.endsWith("…")).toBe(true);
    expect(long.startsWith(cut.slice(0, -1))).toBe(true);
    expect(fitTitle("Absorption rate per layer", 500, 13)).toBe("Absorption rate per layer");
  });
});

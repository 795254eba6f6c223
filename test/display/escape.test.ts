/**
 * The escaping rule for user text in Markdown and HTML (src/display/escape.ts), with expected outputs
 * worked out by hand from CommonMark: what must be escaped, and what must stay as written.
 */
import { describe, expect, it } from "vitest";
import { escapeHtml, escapeMarkdown, markdownCode } from "../../src/display/escape.js";
import { HOSTILE_STRINGS } from "../fuzz/hostile-strings.js";

describe("escapeMarkdown", () => {
  it("leaves ordinary model names, paths and numbers as written", () => {
    for (const name of ["smollm2-135m-dream-world", "tiny_llada", "tiny-qwen", "LLaDA-8B-Instruct", "a.b", "x 2.5 %", "名前", "model-v2"]) {
      expect(escapeMarkdown(name)).toBe(name);
    }
    expect(escapeMarkdown("models/tiny-llada/config.json")).toBe("models/tiny-llada/config.json");
  });

  it("HTML: & < > become entities (no tag, comment or autolink can start)", () => {
    expect(escapeMarkdown("<script>window.x=1</script>")).toBe("&lt;script&gt;window.x=1&lt;/script&gt;");
    expect(escapeMarkdown(`<img src=x onerror="f()">`)).toBe(`&lt;img src=x onerror="f()"&gt;`);
    expect(escapeMarkdown("&lt;b&gt;")).toBe("&amp;lt;b&amp;gt;"); // an entity in the name is shown, not decoded
    expect(escapeMarkdown("<!-- x -->")).toBe("&lt;!-- x --&gt;");
  });

  it("links, images, emphasis, code, tables, strikethrough, math: backslash-escaped", () => {
    expect(escapeMarkdown("[click](javascript:f)")).toBe("\\[click\\](javascript:f)");
    expect(escapeMarkdown("![x](y)")).toBe("!\\[x\\](y)");
    expect(escapeMarkdown("(javascript:f)")).toBe("\\(javascript:f)"); // could follow a "]" of the surrounding text
    expect(escapeMarkdown("LLaDA (8B)!")).toBe("LLaDA (8B)!");
    expect(escapeMarkdown("*a* **b**")).toBe("\\*a\\* \\*\\*b\\*\\*");
    expect(escapeMarkdown("`code`")).toBe("\\`code\\`");
    expect(escapeMarkdown("| a | b |")).toBe("\\| a \\| b \\|");
    expect(escapeMarkdown("~~gone~~")).toBe("\\~\\~gone\\~\\~");
    // "\" and "$" as entities of "\\" and "\$": MathJax (JupyterLab) shows them as "\" and "$", never as math
    expect(escapeMarkdown("$x^2$")).toBe("&#92;&#36;x^2&#92;&#36;");
    expect(escapeMarkdown("back\\slash \\(x\\)")).toBe("back&#92;&#92;slash &#92;&#92;(x&#92;&#92;)");
  });

  it("underscores: escaped where they could open or close emphasis, kept between letters or digits", () => {
    expect(escapeMarkdown("_a_")).toBe("\\_a\\_");
    expect(escapeMarkdown("tiny_llada_2")).toBe("tiny_llada_2");
    expect(escapeMarkdown("a__b")).toBe("a\\_\\_b"); // each underscore has another underscore beside it
    expect(escapeMarkdown("x_")).toBe("x\\_");
  });

  it("line starts: headings, list items, setext underlines and ordered lists cannot start", () => {
    expect(escapeMarkdown("# title")).toBe("\\# title");
    expect(escapeMarkdown("- item")).toBe("\\- item");
    expect(escapeMarkdown("+ item")).toBe("\\+ item");
    expect(escapeMarkdown("===")).toBe("\\===");
    expect(escapeMarkdown("1. first")).toBe("1\\. first");
    expect(escapeMarkdown("  2) second")).toBe("  2\\) second");
    expect(escapeMarkdown("---")).toBe("\\---");
    expect(escapeMarkdown("-")).toBe("\\-");
    expect(escapeMarkdown("a - b + c = d 1. e")).toBe("a - b + c = d 1. e"); // not at the start: inert, left alone
    expect(escapeMarkdown("-rf")).toBe("-rf"); // "-" then a letter is not a list item
    expect(escapeMarkdown("1.5b-instruct")).toBe("1.5b-instruct"); // "1." then a digit is not a list item
  });

  it("line breaks and controls become visible symbols, so a name stays on its line", () => {
    expect(escapeMarkdown("x\ntouch y")).toBe("x␊touch y");
    expect(escapeMarkdown("x\r\ny")).toBe("x␍␊y");
    expect(escapeMarkdown("a\u2028b\u2029c\u0085d")).toBe("a␤b␤c␤d");
    expect(escapeMarkdown("\u001b[31mred")).toBe("␛\\[31mred");
    expect(escapeMarkdown("a\u0000b\u007fc")).toBe("a␀b␡c");
    expect(escapeMarkdown("a\tb")).toBe("a\tb");
    expect(escapeMarkdown("\ud800x")).toBe("\ufffdx");
    expect(escapeMarkdown("💥")).toBe("💥");
  });

  it("every hostile string comes out as one line with no raw markup character", () => {
    for (const s of HOSTILE_STRINGS) {
      const e = escapeMarkdown(s);
      expect(e).not.toMatch(/[<>$\n\r\u2028\u2029]/);
      // every Markdown-active character is an entity or preceded by a backslash (that is itself not escaped)
      const bare = e.replace(/&(#\d+|[a-z]+);/g, "").replace(/\\[`*[\]()|~#_.+=-]/g, "");
      expect(bare).not.toMatch(/[\\`*[\]|~#&]/);
      expect(e).not.toMatch(/^\(/);
    }
  });
});

describe("markdownCode", () => {
  it("a code span whose fence is longer than any backtick run inside; padded when the text starts or ends with ` or space", () => {
    expect(markdownCode("models/tiny-llada")).toBe("`models/tiny-llada`");
    expect(markdownCode("a`b")).toBe("``a`b``");
    expect(markdownCode("``x")).toBe("``` ``x ```");
    expect(markdownCode(" a")).toBe("`  a `");
    expect(markdownCode("<script>")).toBe("`<script>`"); // code spans are shown literally; the renderer escapes <
    expect(markdownCode("a\nb")).toBe("`a␊b`");
    expect(markdownCode("")).toBe("` `");
  });
});

describe("escapeHtml", () => {
  it("the figures' rule: five entities, controls as Control Pictures", () => {
    expect(escapeHtml(`<a href="x" title='y'>&</a>`)).toBe("&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;&lt;/a&gt;");
    expect(escapeHtml("a\u0001b")).toBe("a␁b");
    expect(escapeHtml("tiny_llada")).toBe("tiny_llada");
  });
});

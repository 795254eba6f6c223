/**
 * User text is data, never markup: the one escaping rule for every string that a user, a shared
 * file or a model can supply (model and trace names, paths, prompts, token text, notes) and that
 * floatscope places into Markdown or HTML. One function per target language:
 *
 * - `escapeHtml`     HTML/XML text content and quoted attribute values (figures, tables, progress);
 * - `escapeMarkdown` Markdown inline text (findingsText, CLAIMS.md, model notes);
 * - `markdownCode`   Markdown inline code (a path or token shown in monospace).
 *
 * Why it matters: a live notebook output is trusted by JupyterLab, so HTML inside a `text/markdown`
 * output runs (a model named `<script>…` executed in the reader's browser). The Python
 * side (model cards, the HTML gallery) follows the same rule in training/escape.py.
 */
import { escapeMarkup } from "../protocol/markup.js";

/**
 * HTML/XML text and quoted attribute values: `& < > " '` as entities, C0 controls as their visible
 * Control Pictures (U+2400 + code), lone surrogates as U+FFFD. The figures' rule (protocol/markup.ts),
 * under the name the display layer uses.
 */
export function escapeHtml(text: unknown): string {
  return escapeMarkup(text);
}

/**
 * Characters with a Markdown meaning anywhere in a line: backslash-escaped (CommonMark renders `\x` as `x`).
 * `(`, `)` and `!` are not among them: a link or image needs an unescaped `[…]` first, and `[`, `]` always
 * are; only a leading `(` is escaped, since it could follow a `]` of the surrounding Markdown.
 */
const MD_ACTIVE = new Set(["`", "*", "[", "]", "|", "~", "#"]);
/** Letters and digits: an underscore between two of them cannot open or close emphasis (CommonMark §6.2). */
const WORD = /[\p{L}\p{N}]/u;

/**
 * One line of Markdown that a reader sees as exactly `text`:
 * - `& < >` become entities, so no HTML tag, comment or autolink can start;
 * - `` ` * [ ] | ~ # `` are backslash-escaped: no emphasis, code span, link, image, table cell break,
 *   strikethrough or heading (a leading `(` too, see MD_ACTIVE);
 * - `\` and `$` are written `&#92;&#92;` and `&#92;&#36;`: the page then holds `\\` and `\$`, which
 *   MathJax (JupyterLab and nbconvert typeset `$…$`, `\(…\)`, `\begin…` in the rendered page) shows as
 *   `\` and `$` instead of starting math; without MathJax (e.g. GitHub) they show with a backslash before them;
 * - `_` is escaped unless it sits between two letters or digits (`tiny_llada` stays as written);
 * - a leading `- `, `+ `, `1. `, `1) `, `--`, `==` is escaped, so the text cannot start a list, rule or heading;
 * - line breaks (`\n`, `\r`, U+2028, U+2029, U+0085) and other C0 controls become visible Control
 *   Pictures (`\n` → `␊`), so a name cannot end its line and start a new block; lone surrogates → U+FFFD.
 *
 * @example escapeMarkdown("smollm2-135m-dream-world") // "smollm2-135m-dream-world"
 * @example escapeMarkdown("<img src=x onerror=f()>")   // "&lt;img src=x onerror=f()&gt;"
 */
export function escapeMarkdown(text: unknown): string {
  const s = String(text);
  let out = "";
  // The start of the text is treated as a line start (callers may put it there): escape the character
  // that would make it a list item ("- x", "1. x"), a thematic break or setext underline ("---", "==").
  const lead = /^ {0,3}(?:\d{1,9}(?=[.)](?:[ \t]|$))|[-+=](?=[ \t]|$|[-+=]))/.exec(s);
  const leadAt = lead ? lead[0].length - (/\d$/.test(lead[0]) ? 0 : 1) : -1; // the "." / ")" after digits, or the -+= itself
  for (let i = 0; i < s.length; i++) {
    const ch = s[i];
    const c = s.charCodeAt(i);
    if (ch === "&") out += "&amp;";
    else if (ch === "<") out += "&lt;";
    else if (ch === ">") out += "&gt;";
    else if (ch === "\\") out += "&#92;&#92;";
    else if (ch === "$") out += "&#92;&#36;";
    else if (MD_ACTIVE.has(ch)) out += "\\" + ch;
    else if (ch === "_") out += WORD.test(s[i - 1] ?? "") && WORD.test(s[i + 1] ?? "") ? "_" : "\\_";
    else if (i === leadAt || (i === 0 && ch === "(")) out += "\\" + ch;
    else if (c === 0x2028 || c === 0x2029 || c === 0x85)
      out += "\u2424"; // ␤: a line break the reader can see
    else if (c < 0x20 && c !== 0x09)
      out += String.fromCharCode(0x2400 + c); // \n → ␊, \r → ␍, ESC → ␛
    else if (c === 0x7f)
      out += "\u2421"; // ␡
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length && s.charCodeAt(i + 1) >= 0xdc00 && s.charCodeAt(i + 1) <= 0xdfff) {
      out += ch + s[i + 1];
      i++;
    } else if (c >= 0xd800 && c <= 0xdfff) out += "\ufffd";
    else out += ch;
  }
  return out;
}

/**
 * `text` as a Markdown code span (monospace, shown literally: Markdown renderers escape `<` and `&`
 * inside code themselves, so no entity here). The fence is one backtick longer than the longest run
 * of backticks inside; line breaks and C0 controls become Control Pictures as in `escapeMarkdown`.
 * Not for GFM table cells (a `|` would still split the cell there): use `escapeMarkdown` in tables.
 *
 * @example markdownCode("models/tiny-llada") // "`models/tiny-llada`"
 * @example markdownCode("a`b")               // "``a`b``"
 */
export function markdownCode(text: unknown): string {
  let body = "";
  const s = String(text);
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 0x2028 || c === 0x2029 || c === 0x85) body += "\u2424";
    else if (c < 0x20 && c !== 0x09) body += String.fromCharCode(0x2400 + c);
    else if (c === 0x7f) body += "\u2421";
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length && s.charCodeAt(i + 1) >= 0xdc00 && s.charCodeAt(i + 1) <= 0xdfff) {
      body += s[i] + s[i + 1];
      i++;
    } else if (c >= 0xd800 && c <= 0xdfff) body += "\ufffd";
    else body += s[i];
  }
  if (body === "") return "` `";
  const longest = Math.max(0, ...(body.match(/`+/g) ?? []).map((run) => run.length));
  const fence = "`".repeat(longest + 1);
  // CommonMark strips one space on each side when both are there; pad so a leading/trailing backtick
  // or space stays part of the text.
  const pad = /^[` ]|[` ]$/.test(body) ? " " : "";
  return `${fence}${pad}${body}${pad}${fence}`;
}

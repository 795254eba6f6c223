/**
 * The hostile-string family: names, paths and texts that a colleague's shared file (a grid, a trace, a checkpoint's
 * config, a notebook) can carry into floatscope. Each string is data; none may run as shell code, Markdown/HTML
 * markup or script, or escape the folder it names a file in. Used by the script-generator and display fuzz tests.
 *
 * Every payload that would *execute* something sets a marker the tests look for:
 * - shell payloads `touch` a file whose name contains MARK (the tests run scripts in a temporary folder with a fake
 *   PATH and check no file named like MARK appeared anywhere they can see);
 * - browser payloads set `window.__FS_PWNED__` (the browser test reads it after rendering).
 *
 * The set is built from families crossed with the places a payload can sit (alone, after a harmless prefix, before a
 * harmless suffix), so it stays readable while covering ≥ 200 strings.
 */

/** The marker a shell payload writes as a file name, and a browser payload as a global. */
export const MARK = "FSPWNED";
export const BROWSER_MARK = "__FS_PWNED__";

/** Shell injections: each, if executed by sh/bash, creates a file named `FSPWNED*` in the current folder. */
const SHELL: string[] = [
  `$(touch ${MARK}1)`,
  "`touch " + MARK + "2`",
  `'; touch ${MARK}3; '`,
  `"; touch ${MARK}4; "`,
  `x; touch ${MARK}5`,
  `x && touch ${MARK}6`,
  `x | touch ${MARK}7`,
  `x\ntouch ${MARK}8`,
  `x\rtouch ${MARK}9`,
  `\ntouch ${MARK}10\n`,
  `$(touch\t${MARK}11)`,
  `'$(touch ${MARK}12)'`,
  `"$(touch ${MARK}13)"`,
  `\\'$(touch ${MARK}14)`,
  `x'"'"'$(touch ${MARK}15)`,
  `\${IFS}$(touch\${IFS}${MARK}16)`,
  `$((1))$(touch ${MARK}17)`,
  `<(touch ${MARK}18)`,
  `>(touch ${MARK}19)`,
  `x&touch ${MARK}20&`,
  `#\ntouch ${MARK}21`,
  `x\n#SBATCH --wrap="touch ${MARK}22"`,
  `x\u0000touch ${MARK}23`,
  `-e touch ${MARK}24`,
  `--output=/tmp/x; touch ${MARK}25`,
  `x\`\`touch ${MARK}26\`\``,
  `$'\\x74ouch' ${MARK}27`,
  `{touch,${MARK}28}`,
  `x\\\ntouch ${MARK}29`,
  `"'\`$(touch ${MARK}30)\`'"`,
];

/** Markdown/HTML injections: each, if rendered as HTML, runs script that sets window.__FS_PWNED__. */
const MARKUP: string[] = [
  `<script>window.${BROWSER_MARK}=1</script>`,
  `<img src=x onerror="window.${BROWSER_MARK}=2">`,
  `<svg onload="window.${BROWSER_MARK}=3"></svg>`,
  `<svg><script>window.${BROWSER_MARK}=4</script></svg>`,
  `"><img src=x onerror=window.${BROWSER_MARK}=5>`,
  `'><img src=x onerror=window.${BROWSER_MARK}=6>`,
  `</title><img src=x onerror=window.${BROWSER_MARK}=7>`,
  `</text><foreignObject><img src=x onerror=window.${BROWSER_MARK}=8></foreignObject>`,
  `[click](javascript:window.${BROWSER_MARK}=9)`,
  `![x](x" onerror="window.${BROWSER_MARK}=10)`,
  `<a href="javascript:window.${BROWSER_MARK}=11">a</a>`,
  `<iframe srcdoc="<script>parent.${BROWSER_MARK}=12</script>"></iframe>`,
  `<details open ontoggle="window.${BROWSER_MARK}=13">`,
  `<body onload="window.${BROWSER_MARK}=14">`,
  `<style onload="window.${BROWSER_MARK}=15"></style>`,
  `<input autofocus onfocus="window.${BROWSER_MARK}=16">`,
  `<math><mtext><table><mglyph><style><img src=x onerror=window.${BROWSER_MARK}=17>`,
  `| a | <img src=x onerror=window.${BROWSER_MARK}=18> |`,
  `\`\`\`\n<script>window.${BROWSER_MARK}=19</script>\n\`\`\``,
  `<!--><img src=x onerror=window.${BROWSER_MARK}=20>-->`,
  `&lt;script&gt;window.${BROWSER_MARK}=21&lt;/script&gt;`,
  `<scr<script>ipt>window.${BROWSER_MARK}=22</script>`,
  `<object data="javascript:window.${BROWSER_MARK}=23"></object>`,
  `<video><source onerror="window.${BROWSER_MARK}=24"></video>`,
  `$<img src=x onerror=window.${BROWSER_MARK}=25>$`,
  `# title\n<img src=x onerror=window.${BROWSER_MARK}=26>`,
  `*a*<svg/onload=window.${BROWSER_MARK}=27>`,
  `\\<img src=x onerror=window.${BROWSER_MARK}=28>`,
  `<a href="jav&#x09;ascript:window.${BROWSER_MARK}=29">x</a>`,
  `<marquee onstart="window.${BROWSER_MARK}=30">`,
  // TeX links: JupyterLab typesets $…$ and \(…\) in rendered Markdown with MathJax, whose \href makes an <a>.
  `$\\href{javascript:window.${BROWSER_MARK}=31}{click}$`,
  `\\(\\href{javascript:window.${BROWSER_MARK}=32}{click}\\)`,
];

/** Paths that try to leave the folder they are joined to, or are not plain names. */
const PATHS: string[] = [
  "../x",
  "../../x",
  "../../../../../../tmp/" + MARK + "path",
  "/etc/passwd",
  "/tmp/" + MARK + "abs",
  "a/../../b",
  "./../x",
  "..",
  ".",
  "",
  " ",
  "a/b/c",
  "~/x",
  "x/..",
  "..\\..\\x",
  "C:\\x",
  "//server/share",
  "a\u0000b",
  "-rf",
  "--help",
];

/** Unicode and control characters that reorder, hide or break lines and columns. */
const UNICODE: string[] = [
  "a\u202eexe.txt", // right-to-left override
  "a\u2066b\u2069", // isolate
  "a\u200bb", // zero-width space
  "a\ufeffb", // byte-order mark
  "a\u2028b", // line separator
  "a\u2029b", // paragraph separator
  "a\u0085b", // next line
  "a\u001bb", // escape
  "\u001b[31mred\u001b[0m", // terminal colour
  "\u001b]0;title\u0007", // terminal title
  "a\u0007b", // bell
  "a\u0008b", // backspace
  "a\tb",
  "a\u000bb",
  "a\u000cb",
  "a\u007fb",
  "a\u0090b",
  "\ud800", // lone surrogate
  "é\u0301", // combining mark
  "名前",
  "ĠhelloĊ",
  "▁hello",
  "💥".repeat(3),
  "a".repeat(300),
  "%s%n%x",
  "{{7*7}}",
  "${7*7}",
  "null",
  "undefined",
  "__proto__",
  "constructor",
  "toString",
];

/** Harmless contexts a payload is embedded in, so "starts with" checks are not enough. */
const WRAPS: [string, string][] = [
  ["", ""],
  ["model-", ""],
  ["", "-v2"],
  ["my grid ", " run"],
];

function crossed(base: string[]): string[] {
  const out: string[] = [];
  for (const [pre, post] of WRAPS) for (const s of base) out.push(pre + s + post);
  return out;
}

/** All hostile strings, deduplicated, in a fixed order (≥ 200). */
export const HOSTILE_STRINGS: readonly string[] = Object.freeze([
  ...new Set([...crossed(SHELL), ...crossed(MARKUP), ...PATHS, ...UNICODE]),
]);

/** The families separately, for tests that only make sense for one of them. */
export const HOSTILE = Object.freeze({
  shell: Object.freeze(crossed(SHELL)),
  markup: Object.freeze(crossed(MARKUP)),
  paths: Object.freeze([...PATHS]),
  unicode: Object.freeze([...UNICODE]),
});

/**
 * Every place that put user text into Markdown unescaped. A live JupyterLab output is trusted,
 * so HTML in a text/markdown output runs; a model, trace or folder name must reach the reader as text.
 * Each test puts a hostile name through one place and checks the Markdown has no raw tag, link or
 * block break left, and that the name appears in its escaped form (hand-worked below).
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { findingsText, valueFinding } from "../../src/display/findings-text.js";
import { buildClaims } from "../../src/display/claims.js";
import { findings, MIME_FINDINGS } from "../../src/display/findings.js";
import { findModels, modelsNote } from "../../src/notebook/models.js";
import { notebookSettings } from "../../src/notebook/notebook.js";

const SCRIPT = "<script>window.__FS_PWNED__=1</script>";
const SVG = `<svg onload="window.__FS_PWNED__=3"></svg>`;
const LINK = "[click](javascript:window.__FS_PWNED__=9)";
// hand-worked escapeMarkdown of the three
const SCRIPT_MD = "&lt;script&gt;window.\\_\\_FS_PWNED\\_\\_=1&lt;/script&gt;";
const SVG_MD = `&lt;svg onload="window.\\_\\_FS_PWNED\\_\\_=3"&gt;&lt;/svg&gt;`;
const LINK_MD = "\\[click\\](javascript:window.\\_\\_FS_PWNED\\_\\_=9)";

/**
 * Raw HTML tags, comments, link or image openers that a Markdown renderer would act on, outside code
 * spans (whose text a renderer shows literally, escaping `<` itself).
 */
function activeMarkdown(md: string): string[] {
  const outsideCode = md.replace(/(`+)(?!`)[^\n]*?(?<!`)\1(?!`)/g, "");
  return outsideCode.match(/<[A-Za-z!/?]|(?<!\\)\]\(|(?<!\\)!\[/g) ?? [];
}

const md = (x: { toMimeBundle(): Record<string, unknown> }) => x.toMimeBundle()["text/markdown"] as string;
const plain = (x: { toMimeBundle(): Record<string, unknown> }) => x.toMimeBundle()["text/plain"] as string;
const row = (model: string, quantity = "absorption, %") =>
  valueFinding({ claim: "absorption-arm-vs-mdm", model, family: "llada", tier: "tiny", quantity }, 0.5, 4);

describe("findingsText: model names, quantities, headline, paper, missing models are text", () => {
  it("a hostile model name", () => {
    const out = md(findingsText([...row(SCRIPT), ...row(SVG)]));
    expect(activeMarkdown(out)).toEqual([]);
    expect(out).toContain(`- **${SCRIPT_MD}** (MDM): absorption, % 0.500 (n = 4)`);
    expect(out).toContain(`- **${SVG_MD}** (MDM)`);
  });

  it("a name cannot start a new block (newline + heading / HTML block)", () => {
    const out = md(findingsText(row(`x\n\n# big\n<img src=x onerror=f()>`)));
    expect(out.split("\n")).toHaveLength(1);
    expect(out).toBe("- **x␊␊\\# big␊&lt;img src=x onerror=f()&gt;** (MDM): absorption, % 0.500 (n = 4)");
  });

  it("quantity, headline, paper and missing names", () => {
    const out = md(findingsText(row("m", LINK), { headline: SCRIPT, paper: SVG, missing: [LINK, "tiny_dream"] }));
    expect(activeMarkdown(out)).toEqual([]);
    expect(out).toContain(`**${SCRIPT_MD}.**`);
    expect(out).toContain(`Paper: ${SVG_MD}`);
    expect(out).toContain(`- **m** (MDM): ${LINK_MD} 0.500 (n = 4)`);
    expect(out).toContain(`missing): ${LINK_MD}, tiny_dream —`);
  });

  it("text/plain shows the names as given (not the Markdown with its escapes)", () => {
    const out = plain(findingsText(row("tiny_llada"), { headline: "a*b" }));
    expect(out).toContain("tiny_llada (MDM)");
    expect(out).toContain("a*b.");
  });
});

describe("CLAIMS.md (buildClaims): model, family, tier, quantity and notebook names are text", () => {
  it("a hostile model name and notebook file name", () => {
    const f = { ...row(SCRIPT)[0], family: SVG, quantity: `rule upstream ${LINK}` };
    const nb = {
      cells: [{ cell_type: "code", outputs: [{ data: { [MIME_FINDINGS]: findings("02", [f]).toMimeBundle()[MIME_FINDINGS] } }] }],
    };
    const out = buildClaims([{ file: `02-${SVG}.ipynb`, json: nb }]).markdown;
    expect(activeMarkdown(out)).toEqual([]);
    expect(out).toContain(`| ${SCRIPT_MD} | ${SVG_MD} | tiny | rule upstream ${LINK_MD} | 0.500 |`);
    expect(out).toContain(`| 4 | 02-${SVG_MD}.ipynb |`); // the table's notebook column
    expect(out).toContain(`(\`02-${SVG}.ipynb\`)`); // the header's list: a code span, shown literally
  });
});

describe("missing-model notes (findModels, notebookSettings): folder names and paths are text", () => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "fs-hostile-"));
  afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

  it("a hostile model folder name and models folder", () => {
    const dir = path.join(tmp, "a`b");
    const found = findModels(dir, ["llada"], { llada: SCRIPT });
    const out = modelsNote(found);
    expect(activeMarkdown(out)).toEqual([]);
    // the path is shown in a code span whose fence is longer than the backtick inside it
    expect(out).toContain(`looked for \`\`${dir}/${SCRIPT}\`\`: no such folder.`);
    expect(out).toContain(`in \`\`${dir}\`\`, so it stops here`);
  });

  it("a model that is there but has a hostile name; the settings line with hostile paths", () => {
    const name = `<img src=x onerror=f()>`;
    fs.mkdirSync(path.join(tmp, name), { recursive: true });
    fs.writeFileSync(path.join(tmp, name, "config.json"), "{}");
    const s = notebookSettings({
      families: ["llada", "dream"],
      env: { FLOATSCOPE_MODELS: tmp, FLOATSCOPE_MODEL_NAMES: JSON.stringify({ llada: name, dream: SVG }), FLOATSCOPE_DATA: `x\n${SCRIPT}` },
    });
    const out = md(s);
    expect(activeMarkdown(out)).toEqual([]);
    expect(out).toContain("&lt;img src=x onerror=f()&gt; (llada)");
    expect(out).toContain(`data \`x␊${SCRIPT}\`.`);
  });
});

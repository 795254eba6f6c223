"use strict";
/**
 * Work-around for a tslab 1.0.x bug: a shorthand property that names a binding from an earlier
 * cell throws at run time.
 *
 *   cell 1:  const tokenizer = loadTokenizer(...);
 *   cell 2:  generate(engine, prompts, settings, { tokenizer });   // ReferenceError: tokenizer is not defined
 *
 * tslab turns every top-level binding into `exports.<name>` and rewrites later references to it,
 * but its rewrite asks the type checker for the symbol of each identifier, and for the name of a
 * shorthand property that is the *property*, not the variable, so `{ tokenizer }` is left as it is
 * and refers to a name that no longer exists. `{ tokenizer: tokenizer }` is rewritten correctly.
 *
 * So before tslab compiles a cell we expand every shorthand property assignment `{ a }` to
 * `{ a: a }` (and `{ a = 1 }` in an assignment pattern to `{ a: a = 1 }`), found with TypeScript's
 * own parser — the copy tslab compiles with. The expansion means the same thing in every place
 * a shorthand property can occur (object literals and destructuring *assignments*); destructuring
 * *declarations* (`const { a } = o`) are binding patterns, not shorthand properties, and are left
 * alone. Only the text after an expanded name on its line moves, so a type error reported on such
 * a line may point a few columns to the right.
 */
const path = require("node:path");
const { createRequire } = require("node:module");

/**
 * `src` with every shorthand property assignment expanded; `src` itself when it has none.
 * @param {string} src a cell's TypeScript source
 * @param {typeof import("typescript")} ts the TypeScript module to parse with
 */
function expandShorthand(src, ts) {
  const file = ts.createSourceFile("cell.ts", src, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const inserts = [];
  const visit = (node) => {
    if (ts.isShorthandPropertyAssignment(node)) inserts.push({ at: node.name.end, text: `: ${node.name.text}` });
    ts.forEachChild(node, visit);
  };
  visit(file);
  if (inserts.length === 0) return src;
  let out = src;
  for (const { at, text } of inserts.sort((a, b) => b.at - a.at)) out = out.slice(0, at) + text + out.slice(at);
  return out;
}

/**
 * Make every converter that tslab (whose `dist/` folder is `tslabDist`) creates from now on
 * expand shorthand properties before compiling a cell. Returns false, with a note on stderr,
 * when this tslab does not have the shape we patch (the kernel then runs unpatched).
 */
function install(tslabDist) {
  const req = createRequire(path.join(tslabDist, "converter.js"));
  let converter;
  let ts;
  try {
    converter = req("./converter.js");
    ts = req("@tslab/typescript-for-tslab");
  } catch (e) {
    process.stderr.write(`floatscope kernel: shorthand-property work-around not installed (${e.message})\n`);
    return false;
  }
  const original = converter.createConverter;
  if (typeof original !== "function" || original.floatscopeShorthand) return typeof original === "function";
  const patched = function createConverter(...args) {
    const conv = original.apply(this, args);
    const convert = conv.convert;
    conv.convert = (prevDecl, src) => convert.call(conv, prevDecl, expandShorthand(src, ts));
    return conv;
  };
  patched.floatscopeShorthand = true;
  converter.createConverter = patched;
  return true;
}

module.exports = { expandShorthand, install };

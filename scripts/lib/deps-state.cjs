#!/usr/bin/env node
"use strict";
/**
 * Small, fast checks that scripts/setup.sh uses to stay idempotent.
 *
 *   node scripts/lib/deps-state.cjs node-modules   exit 0 if node_modules matches package-lock.json
 *   node scripts/lib/deps-state.cjs src-hash       print a hash of everything `npm run build` reads
 *   node scripts/lib/deps-state.cjs version        exit 0 if this node is >= engines.node floor
 *
 * node_modules is "fresh" when npm's own record of what it installed
 * (node_modules/.package-lock.json) lists every non-optional package of package-lock.json at the
 * same version. That is what `npm ci` would produce, without its cost.
 */
const fs = require("node:fs");
const path = require("node:path");
const crypto = require("node:crypto");

const ROOT = path.resolve(__dirname, "..", "..");

function nodeModulesFresh() {
  const hiddenFile = path.join(ROOT, "node_modules", ".package-lock.json");
  if (!fs.existsSync(hiddenFile)) return "node_modules/ missing or never installed by npm";
  const wanted = JSON.parse(fs.readFileSync(path.join(ROOT, "package-lock.json"), "utf8")).packages ?? {};
  const have = JSON.parse(fs.readFileSync(hiddenFile, "utf8")).packages ?? {};
  for (const [key, meta] of Object.entries(wanted)) {
    if (!key.startsWith("node_modules/")) continue; // root and workspace folders
    const got = have[key];
    if (!got) {
      if (meta.optional) continue; // platform-specific extras (e.g. other OSes' esbuild)
      return `${key} not installed`;
    }
    if (got.version !== meta.version) return `${key} is ${got.version}, lock wants ${meta.version}`;
    if (!fs.existsSync(path.join(ROOT, key))) return `${key} listed but missing on disk`;
  }
  return null;
}

function srcHash() {
  const h = crypto.createHash("sha256");
  const files = [];
  const walk = (dir) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      if (e.name === "dist" || e.name === "node_modules") continue;
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (/\.(ts|json)$/.test(e.name)) files.push(p);
    }
  };
  walk(path.join(ROOT, "src"));
  files.push(path.join(ROOT, "tsconfig.json"));
  files.sort();
  for (const f of files) {
    h.update(path.relative(ROOT, f));
    h.update("\0");
    h.update(fs.readFileSync(f));
    h.update("\0");
  }
  return h.digest("hex").slice(0, 16);
}

function versionOk() {
  const floor = (JSON.parse(fs.readFileSync(path.join(ROOT, "package.json"), "utf8")).engines?.node ?? ">=20.19").replace(/^>=\s*/, "");
  const want = floor.split(".").map(Number);
  const have = process.versions.node.split(".").map(Number);
  for (let i = 0; i < 3; i++) {
    const a = have[i] ?? 0;
    const b = want[i] ?? 0;
    if (a !== b) return a > b ? null : `node ${process.versions.node} is older than ${floor}`;
  }
  return null;
}

const cmd = process.argv[2];
if (cmd === "node-modules") {
  const why = nodeModulesFresh();
  if (why) {
    console.log(why);
    process.exit(1);
  }
} else if (cmd === "src-hash") {
  console.log(srcHash());
} else if (cmd === "version") {
  const why = versionOk();
  if (why) {
    console.log(why);
    process.exit(1);
  }
} else {
  console.error("usage: deps-state.cjs node-modules|src-hash|version");
  process.exit(2);
}

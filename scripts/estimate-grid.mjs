// The wall time a grid will take, estimated from a small run of it (say `limit` 2 per model): per model and
// setting, the mean wall seconds per question from the rows' own `ms`, and the hours at the grid's own
// limit. Wall time follows the machine's load: the table carries the load of the small run's machine as the
// caller gives it, and means nothing on another load.
//
//   node scripts/estimate-grid.mjs <small-run-dir> <grid.json>
//
// A setting the small run did not reach takes the mean of the same model's other settings with the same
// number of distractors (marked *), else it is left out of the total (marked ?).
import * as fs from "node:fs";
import * as path from "node:path";

const [dir, gridFile] = process.argv.slice(2);
if (!dir || !gridFile) {
  console.error("usage: node scripts/estimate-grid.mjs <small-run-dir> <grid.json>");
  process.exit(2);
}
const grid = JSON.parse(fs.readFileSync(gridFile, "utf8"));
const limit = grid.datasets.reduce((a, d) => a + (d.limit ?? 0), 0);
let settings = [];
const sums = new Map(); // model → setting → [seconds, count]
for (const f of fs.readdirSync(dir).filter((n) => /^shard-.*\.jsonl$/.test(n))) {
  for (const line of fs.readFileSync(path.join(dir, f), "utf8").split("\n")) {
    if (!line.startsWith("{")) continue;
    const r = JSON.parse(line);
    if (r.manifest) {
      settings = r.manifest.settings;
      continue;
    }
    if (typeof r.ms !== "number") continue;
    const m = sums.get(r.model) ?? new Map();
    const [s, n] = m.get(r.setting) ?? [0, 0];
    m.set(r.setting, [s + r.ms / 1000, n + 1]);
    sums.set(r.model, m);
  }
}
const kOf = (setting) => (/\/k(\d+)/.exec(setting) ?? [])[1] ?? setting;
const fmt = (x) => (x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2));
console.log(`| model | ${settings.join(" | ")} | n = ${limit}, h |`);
console.log(`|---|${settings.map(() => "---|").join("")}---|`);
let total = 0;
for (const [model, m] of sums) {
  let hours = 0;
  const cells = settings.map((s) => {
    const got = m.get(s);
    if (got) {
      hours += ((got[0] / got[1]) * limit) / 3600;
      return fmt(got[0] / got[1]);
    }
    const same = [...m].filter(([t]) => kOf(t) === kOf(s)).map(([, [x, n]]) => x / n);
    if (!same.length) return "?";
    const mean = same.reduce((a, b) => a + b, 0) / same.length;
    hours += (mean * limit) / 3600;
    return `${fmt(mean)}*`;
  });
  total += hours;
  console.log(`| ${model} | ${cells.join(" | ")} | ${hours.toFixed(2)} |`);
}
console.log(`\nTotal: ${total.toFixed(1)} h of wall time at the small run's load (seconds per question: mean of its rows' \`ms\`).`);

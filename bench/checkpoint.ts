/**
 * Checkpoint-side benchmark (not a test): what character offsets cost on top of the tokenizer
 * library's own encode, and how fast `scanWeights` streams through weights.
 *
 * - encode: hand-made Llama-3-style byte-level BPE (test/support/tokenizer-files.ts), English
 *   text with some unicode, at 1k / 10k / 50k characters; library `encode` (ids only) against our
 *   `encode` (ids + offsets). Median of repeats after one warm-up.
 * - scanWeights: one F32 and one BF16 tensor file of 256 MiB each, 16 MiB chunks; MB/s of tensor
 *   bytes (the first pass may read from disk, the median is mostly page cache).
 *
 *   npx tsx bench/checkpoint.ts            # writes the "## Checkpoint and tokenizer" section of BENCHMARKS.md
 *   npx tsx bench/checkpoint.ts --quick    # smaller, prints only
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { Tokenizer } from "@huggingface/tokenizers";
import { readTokenizerFiles } from "../src/checkpoint/checkpoint.js";
import { writeSafetensors, readSafetensorsHeader } from "../src/checkpoint/safetensors.js";
import { loadTokenizer } from "../src/checkpoint/tokenizer.js";
import type { Checkpoint } from "../src/checkpoint/types.js";
import { scanWeights } from "../src/graph/scan-weights.js";
import { byteLevelBpe, writeTokenizerDir } from "../test/support/tokenizer-files.js";

const quick = process.argv.includes("--quick");
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "fs-bench-ckpt-"));

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

/** [median, min] ms over `repeats` runs after one warm-up (min shows the cost without contention). */
function time(f: () => void, repeats: number): [number, number] {
  f();
  const ts: number[] = [];
  for (let i = 0; i < repeats; i++) {
    const t = performance.now();
    f();
    ts.push(performance.now() - t);
  }
  return [median(ts), Math.min(...ts)];
}

const SAMPLE = "Query: who wrote the book about the capital of France?\n\nPassages:\n[1] She wrote it in 1999 — the café on the straße, naïve 🤗 reviewers said. ";

function encodeRows(): string[] {
  const dir = path.join(tmp, "tok");
  writeTokenizerDir(dir, byteLevelBpe({ style: "llama3", specials: ["<|begin_of_text|>", "<|mdm_mask|>"], bos: "<|begin_of_text|>" }));
  const files = readTokenizerFiles(dir)!;
  const lib = new Tokenizer(files.json, files.config);
  const ours = loadTokenizer(files);
  const rows: string[] = [];
  for (const chars of quick ? [1000, 10000] : [1000, 10000, 50000]) {
    const text = SAMPLE.repeat(Math.ceil(chars / SAMPLE.length)).slice(0, chars);
    const repeats = chars >= 50000 ? 9 : 31;
    const tokens = lib.encode(text).ids.length;
    const libMs = time(() => lib.encode(text), repeats);
    const oursMs = time(() => ours.encode(text), repeats);
    const exact = ours.encode(text).offsetsExact;
    rows.push(`| ${chars} | ${tokens} | ${libMs[0].toFixed(1)} (${libMs[1].toFixed(1)}) | ${oursMs[0].toFixed(1)} (${oursMs[1].toFixed(1)}) | ${(oursMs[0] / libMs[0]).toFixed(2)} (${(oursMs[1] / libMs[1]).toFixed(2)}) | ${exact ? "yes" : "no"} |`);
  }
  return rows;
}

function scanRows(): string[] {
  const rows: string[] = [];
  const mib = quick ? 32 : 256;
  for (const dtype of ["F32", "BF16"] as const) {
    const file = path.join(tmp, `${dtype}.safetensors`);
    const bytes = mib * 1024 * 1024;
    const n = bytes / (dtype === "F32" ? 4 : 2);
    const data = dtype === "F32" ? new Float32Array(n).fill(0.5) : new Uint16Array(n).fill(0x3f00);
    writeSafetensors(file, { w: { dtype, shape: [n], data } });
    const hdr = readSafetensorsHeader(file);
    const ck: Checkpoint = { dir: tmp, config: {}, tensors: new Map(hdr.tensors.map((t) => [t.name, t])) };
    const rss0 = process.memoryUsage().rss;
    let peak = rss0;
    const [ms] = time(() => {
      scanWeights(ck, undefined, { onProgress: () => { peak = Math.max(peak, process.memoryUsage().rss); } });
      peak = Math.max(peak, process.memoryUsage().rss);
    }, 3);
    rows.push(`| ${dtype} | ${mib} | ${ms.toFixed(0)} | ${(bytes / 1e6 / (ms / 1000)).toFixed(0)} | ${((peak - rss0) / 1e6).toFixed(0)} |`);
    fs.rmSync(file);
  }
  return rows;
}

const load0 = os.loadavg();
const enc = encodeRows();
const scan = scanRows();
const load1 = os.loadavg();
fs.rmSync(tmp, { recursive: true, force: true });

const body = `## Checkpoint and tokenizer

\`npx tsx bench/checkpoint.ts\` — ${new Date().toISOString().slice(0, 16)}Z, ${os.cpus().length} cores (${os.cpus()[0]?.model.trim()}), Node ${process.version}.
Load average ${load0.map((x) => x.toFixed(2)).join(" / ")} before and ${load1.map((x) => x.toFixed(2)).join(" / ")} after (1/5/15 min): the machine is shared; treat small differences as noise.

Tokenizer encode with character offsets: \`loadTokenizer(files).encode(text)\` (ids + offsets, by replaying the
pipeline) against \`@huggingface/tokenizers\` \`encode\` alone (ids only), hand-made Llama-3-style byte-level BPE
(80 merges, so most words split into several tokens), English text with some unicode; median (min) of 31 runs (9 at 50k)
after one warm-up.

| characters | tokens | library encode ms | encode + offsets ms | ratio | offsets exact |
|---|---|---|---|---|---|
${enc.join("\n")}

\`scanWeights\` (NaN/Inf scan by bit pattern, 16 MiB chunks), one ${quick ? 32 : 256} MiB tensor per dtype, median of 3 after a warm-up;
RSS growth is the peak during the scan over the RSS before it (the data written for the test is not counted).

| dtype | MiB | ms | MB/s | RSS growth MB |
|---|---|---|---|---|
${scan.join("\n")}
`;

if (quick) {
  console.log(body);
} else {
  const file = path.join(path.dirname(fileURLToPath(import.meta.url)), "..", "BENCHMARKS.md");
  replaceSection(file, "## Checkpoint and tokenizer", body);
  console.log(body);
  console.log("wrote BENCHMARKS.md (## Checkpoint and tokenizer)");
}

function replaceSection(file: string, heading: string, text: string): void {
  const old = fs.existsSync(file) ? fs.readFileSync(file, "utf8") : "# Benchmarks\n";
  const start = old.indexOf(`\n${heading}\n`);
  let next: string;
  if (start < 0) {
    next = old.trimEnd() + "\n\n" + text;
  } else {
    const rest = old.slice(start + 1 + heading.length + 1);
    const m = /\n## /.exec(rest);
    const after = m ? rest.slice(m.index + 1) : "";
    next = old.slice(0, start + 1) + text + (after ? "\n" + after : "");
  }
  const tmpFile = `${file}.tmp-${process.pid}`;
  fs.writeFileSync(tmpFile, next.trimEnd() + "\n");
  fs.renameSync(tmpFile, file);
}

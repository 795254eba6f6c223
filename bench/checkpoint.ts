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
import { Tokenizer } from "@huggingface/tokenizers";
import { readTokenizerFiles } from "../src/checkpoint/checkpoint.js";
import { writeSafetensors, readSafetensorsHeader } from "../src/checkpoint/safetensors.js";
import { loadTokenizer } from "../src/checkpoint/tokenizer.js";
import type { Checkpoint } from "../src/checkpoint/types.js";
import { scanWeights } from "../src/graph/scan-weights.js";
import { byteLevelBpe, writeTokenizerDir } from "../test/support/tokenizer-files.js";
import {
  loadAverage,
  loadSentence,
  machineStamp,
  markdownTable,
  ratio,
  timeRepeats as time,
  benchmarkFile,
  writeBenchmarkSection,
  writesSection,
} from "./lib.js";

const quick = process.argv.includes("--quick");
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "fs-bench-ckpt-"));

const SAMPLE =
  "Query: who wrote the book about the capital of France?\n\nPassages:\n[1] She wrote it in 1999 — the café on the straße, naïve 🤗 reviewers said. ";

function encodeRows(): (string | number)[][] {
  const dir = path.join(tmp, "tok");
  writeTokenizerDir(dir, byteLevelBpe({ style: "llama3", specials: ["<|begin_of_text|>", "<|mdm_mask|>"], bos: "<|begin_of_text|>" }));
  const files = readTokenizerFiles(dir)!;
  const lib = new Tokenizer(files.json, files.config);
  const ours = loadTokenizer(files);
  const rows: (string | number)[][] = [];
  for (const chars of quick ? [1000, 10000] : [1000, 10000, 50000]) {
    const text = SAMPLE.repeat(Math.ceil(chars / SAMPLE.length)).slice(0, chars);
    const repeats = chars >= 50000 ? 9 : 31;
    const tokens = lib.encode(text).ids.length;
    const libMs = time(() => lib.encode(text), repeats);
    const oursMs = time(() => ours.encode(text), repeats);
    const exact = ours.encode(text).offsetsExact;
    rows.push([
      chars,
      tokens,
      `${libMs[0].toFixed(1)} (${libMs[1].toFixed(1)})`,
      `${oursMs[0].toFixed(1)} (${oursMs[1].toFixed(1)})`,
      `${ratio(oursMs[0], libMs[0])} (${ratio(oursMs[1], libMs[1])})`,
      exact ? "yes" : "no",
    ]);
  }
  return rows;
}

function scanRows(): (string | number)[][] {
  const rows: (string | number)[][] = [];
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
      scanWeights(ck, undefined, {
        onProgress: () => {
          peak = Math.max(peak, process.memoryUsage().rss);
        },
      });
      peak = Math.max(peak, process.memoryUsage().rss);
    }, 3);
    rows.push([dtype, mib, ms.toFixed(0), (bytes / 1e6 / (ms / 1000)).toFixed(0), ((peak - rss0) / 1e6).toFixed(0)]);
    fs.rmSync(file);
  }
  return rows;
}

const load0 = loadAverage();
const enc = encodeRows();
const scan = scanRows();
const load1 = loadAverage();
fs.rmSync(tmp, { recursive: true, force: true });

const body = `## Checkpoint and tokenizer

\`npx tsx bench/checkpoint.ts\` — ${machineStamp()}, Node ${process.version}.
${loadSentence(load0, load1)}

Tokenizer encode with character offsets: \`loadTokenizer(files).encode(text)\` (ids + offsets, by replaying the
pipeline) against \`@huggingface/tokenizers\` \`encode\` alone (ids only), hand-made Llama-3-style byte-level BPE
(80 merges, so most words split into several tokens), English text with some unicode; median (min) of 31 runs (9 at 50k)
after one warm-up.

${markdownTable(["characters", "tokens", "library encode ms", "encode + offsets ms", "ratio", "offsets exact"], enc)}

\`scanWeights\` (NaN/Inf scan by bit pattern, 16 MiB chunks), one ${quick ? 32 : 256} MiB tensor per dtype, median of 3 after a warm-up;
RSS growth is the peak during the scan over the RSS before it (the data written for the test is not counted).

${markdownTable(["dtype", "MiB", "ms", "MB/s", "RSS growth MB"], scan)}
`;

if (!writesSection(quick)) {
  console.log(body);
} else {
  writeBenchmarkSection("## Checkpoint and tokenizer", body);
  console.log(body);
  console.log("wrote " + benchmarkFile() + " (## Checkpoint and tokenizer)");
}

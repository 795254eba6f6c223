/**
 * `floatscope inspect <model-dir>`: what the checkpoint is (family, sizes, special ids, weight
 * dtypes) and what a forward pass would cost in memory at a few sequence lengths, with the
 * default probes and with full attention maps for every layer.
 */
import { openCheckpoint } from "../checkpoint/checkpoint.js";
import { resolveModelSpec } from "../graph/adapters/index.js";
import { describeCheckpoint, type CheckpointDescription } from "../graph/describe.js";
import { estimateMemory, formatBytes } from "../runtime/memory.js";
import { DEFAULT_PROBES } from "../util/probes.js";
import { assertFiniteWeights } from "../graph/scan-weights.js";
import { flagHelp, flagSpec, intList, optionalInt, parseFlags, UsageError, type CliIO, type FlagRow } from "./args.js";
import { checkpointPath, type CliCommand } from "./command-types.js";
import { checkpointInput } from "./inputs.js";

/** The flags of `floatscope inspect`: the parse options and the help both come from here. */
const INSPECT_ROWS: FlagRow[] = [
  {
    name: "seq",
    type: "string",
    value: "<list>",
    help: [
      "sequence lengths for the memory table, each 1 … max_position_embeddings",
      "(default 256,1024,4096, those the model has, and at least its maximum)",
    ],
  },
  { name: "batch", type: "string", value: "<n>", help: "batch size for the memory table", default: "1" },
  { name: "scan-weights", type: "boolean", help: "also read every weight and report NaN/Inf by tensor (exit 1 if any)" },
  { name: "json", type: "boolean", help: "print one JSON object instead of text" },
];

const HELP = `Usage: floatscope inspect <model-dir> [--seq 256,1024,4096] [--batch 1] [--scan-weights] [--json]

Describe a checkpoint folder (config.json + *.safetensors [+ tokenizer]) without loading weights:
family, architecture, layer sizes, attention layout, RoPE, special token ids, weight dtypes, and
the estimated memory of one forward pass (weights as f32 on CPU) at the given sequence lengths.

Options:
${flagHelp(INSPECT_ROWS, 18)}
  --debug         print stack traces of errors
  -h, --help      this help

Exit codes: 0 ok, 1 failure (checkpoint), 2 usage.`;

/** Human-readable lines for a checkpoint description (describeCheckpoint's JSON, as text). */
export function describeLines(d: CheckpointDescription): string[] {
  const s = d.sizes;
  const ids = (v: number | null) => (v === null ? "-" : String(v));
  const tok = (v: string | null) => (v === null ? "" : ` ${JSON.stringify(v)}`);
  const params = d.parameters;
  return [
    d.dir,
    `family          ${d.family} (${d.architecture})`,
    `attention       ${d.attention.causal ? "causal" : "bidirectional"}, ${s.heads} heads / ${s.kvHeads} kv heads${d.attention.gqaGroup > 1 ? ` (GQA ${d.attention.gqaGroup}:1)` : ""}, head dim ${s.headDim}${d.attention.qkvBias ? ", qkv bias" : ""}`,
    `layers          ${s.layers} × (hidden ${s.hidden}, ffn ${s.intermediate})`,
    `vocab           ${s.vocab}${d.tiedEmbeddings ? " (tied embeddings)" : ""}`,
    `rope            θ ${d.rope.theta}${d.rope.scaling ? `, ${d.rope.scaling} scaling` : ""}, max positions ${s.maxPositions}`,
    `logit shift     ${d.attention.logitShift}${d.attention.logitShift ? " (row i is read from hidden state i−1)" : ""}`,
    `special ids     mask ${ids(d.specialIds.mask)}${tok(d.specialTokens.mask)}, bos ${ids(d.specialIds.bos)}${tok(d.specialTokens.bos)}, eos ${d.specialIds.eos.join("/") || "-"}, pad ${ids(d.specialIds.pad)}`,
    `BOS on encode   ${d.bos.addedByTokenizer ? `yes (${d.bos.prefix.join(" ")})` : "no"}`,
    `parameters      ${(params / 1e6).toFixed(params < 1e7 ? 3 : 1)} M in ${d.weightFiles.length} file(s): ${Object.entries(d.dtypes)
      .map(([k, v]) => `${v.tensors} ${k} (${formatBytes(v.bytes)})`)
      .join(", ")}`,
    `tokenizer       ${d.tokenizer ? `${d.tokenizer.path} (${d.tokenizer.vocabEntries} entries)${d.chatTemplate ? ", chat template" : ""}` : "none (pass --ids to forward)"}`,
  ];
}

export const command: CliCommand = {
  help: HELP,
  flags: flagSpec(INSPECT_ROWS),
  paths: [checkpointPath(() => [])],
  async run(argv: string[], io: CliIO): Promise<number> {
    const { values, positionals } = parseFlags("inspect", argv, flagSpec(INSPECT_ROWS));
    if (positionals.length !== 1)
      throw new UsageError("`floatscope inspect` takes one model folder", {
        field: "<model-dir>",
        expected: "one path",
        found: positionals.length ? positionals.join(" ") : "nothing",
      });
    const requested = values.seq !== undefined ? intList("inspect", "seq", String(values.seq), { min: 1 }) : undefined;
    const batch = optionalInt("inspect", "batch", values.batch, { min: 1 }) ?? 1;
    const ckpt = openCheckpoint(checkpointInput("inspect", positionals[0]));
    const spec = resolveModelSpec(ckpt);
    const maxPos = spec.maxPositionEmbeddings;
    if (requested) intList("inspect", "seq", String(values.seq), { min: 1, max: maxPos });
    const defaults = [256, 1024, 4096].filter((t) => t < maxPos);
    const seqs = requested ?? (defaults.length === 3 ? defaults : [...defaults, maxPos]);
    const scan = values["scan-weights"] ? assertFiniteWeights(ckpt, spec) : undefined;
    const description = describeCheckpoint(ckpt, spec);
    const allLayers = Array.from({ length: spec.numLayers }, (_, l) => l);
    const memory = seqs.map((seq) => ({
      seq,
      defaultProbes: estimateMemory(spec, { batch, seq, probes: DEFAULT_PROBES }),
      fullMaps: estimateMemory(spec, { batch, seq, probes: { ...DEFAULT_PROBES, pattern: { layers: allLayers } } }),
    }));
    if (values.json) {
      io.out(
        JSON.stringify(
          {
            ...description,
            ...(scan ? { weightScan: { tensors: scan.tensorsScanned, bytes: scan.bytesScanned, nonFinite: 0 } } : {}),
            memory: memory.map((m) => ({
              seq: m.seq,
              batch,
              defaultProbes: m.defaultProbes.total,
              fullMaps: m.fullMaps.total,
              dominant: m.defaultProbes.dominant,
            })),
          },
          null,
          2,
        ),
      );
      return 0;
    }
    const lines = describeLines(description);
    if (scan) lines.push(`weights         ${scan.tensorsScanned} tensors scanned (${formatBytes(scan.bytesScanned)}): no NaN/Inf`);
    lines.push("", `Estimated memory of one forward pass, batch ${batch} (CPU, f32):`);
    lines.push("  seq      default probes   full maps, all layers   largest term (default probes)");
    for (const m of memory) {
      lines.push(
        `  ${String(m.seq).padEnd(8)} ${formatBytes(m.defaultProbes.total).padEnd(16)} ${formatBytes(m.fullMaps.total).padEnd(23)} ${m.defaultProbes.dominant}`,
      );
    }
    io.out(lines.join("\n"));
    return 0;
  },
};

/**
 * `floatscope inspect <model-dir>`: what the checkpoint is (family, sizes, special ids, weight
 * dtypes) and what a forward pass would cost in memory at a few sequence lengths, with the
 * default probes and with full attention maps for every layer.
 */
import { openCheckpoint } from "../checkpoint/checkpoint.js";
import { resolveModelSpec } from "../graph/adapters/index.js";
import type { ModelSpec } from "../graph/spec.js";
import { estimateMemory, formatBytes, specParameterCount } from "../runtime/memory.js";
import { DEFAULT_PROBES } from "../util/probes.js";
import { intList, parseFlags, UsageError, type CliIO } from "./args.js";
import type { CliCommand } from "./commands.js";

const HELP = `Usage: floatscope inspect <model-dir> [--seq 256,1024,4096] [--batch 1] [--json]

Describe a checkpoint folder (config.json + *.safetensors [+ tokenizer]) without loading weights:
family, architecture, layer sizes, attention layout, RoPE, special token ids, weight dtypes, and
the estimated memory of one forward pass (weights as f32 on CPU) at the given sequence lengths.

Options:
  --seq <list>    sequence lengths for the memory table (default 256,1024,4096)
  --batch <n>     batch size for the memory table (default 1)
  --json          print one JSON object instead of text
  -h, --help      this help`;

export function describeSpecLines(spec: ModelSpec): string[] {
  const tied = spec.weights.lmHead === spec.weights.embed;
  const rope = spec.rope.llama3
    ? `θ ${spec.rope.theta}, llama3 scaling ×${spec.rope.llama3.factor} (orig. ${spec.rope.llama3.originalMaxPositionEmbeddings})`
    : `θ ${spec.rope.theta}`;
  const ids = (v: number | undefined) => (v === undefined ? "-" : String(v));
  return [
    `family          ${spec.family} (${spec.architecture})`,
    `attention       ${spec.causal ? "causal" : "bidirectional"}, ${spec.numHeads} heads / ${spec.numKvHeads} kv heads${spec.numHeads !== spec.numKvHeads ? ` (GQA ${spec.numHeads / spec.numKvHeads}:1)` : ""}, head dim ${spec.headDim}${spec.qkvBias ? ", qkv bias" : ""}`,
    `layers          ${spec.numLayers} × (hidden ${spec.hiddenSize}, ffn ${spec.intermediateSize})`,
    `vocab           ${spec.vocabSize}${tied ? " (tied embeddings)" : ""}`,
    `rope            ${rope}, max positions ${spec.maxPositionEmbeddings}`,
    `rms norm eps    ${spec.rmsNormEps}`,
    `logit shift     ${spec.logitShift}${spec.logitShift ? " (row i is read from hidden state i−1)" : ""}`,
    `special ids     mask ${ids(spec.maskTokenId)}, bos ${ids(spec.bosTokenId)}, eos ${spec.eosTokenIds.join("/") || "-"}, pad ${ids(spec.padTokenId)}; tokenizer adds BOS: ${spec.addsBos ? "yes" : "no"}`,
  ];
}

export const command: CliCommand = {
  help: HELP,
  async run(argv: string[], io: CliIO): Promise<number> {
    const { values, positionals } = parseFlags("inspect", argv, { seq: { type: "string" }, batch: { type: "string" }, json: { type: "boolean" } });
    if (positionals.length !== 1) throw new UsageError("`floatscope inspect` takes one model folder", { field: "<model-dir>", expected: "one path", found: positionals.length ? positionals.join(" ") : "nothing" });
    const seqs = values.seq ? intList("inspect", "seq", String(values.seq)) : [256, 1024, 4096];
    const batch = values.batch ? intList("inspect", "batch", String(values.batch))[0] : 1;
    const ckpt = openCheckpoint(positionals[0]);
    const spec = resolveModelSpec(ckpt);
    const dtypes = new Map<string, { count: number; bytes: number }>();
    for (const t of ckpt.tensors.values()) {
      const d = dtypes.get(t.dtype) ?? { count: 0, bytes: 0 };
      d.count++;
      d.bytes += t.byteLength;
      dtypes.set(t.dtype, d);
    }
    const files = new Set([...ckpt.tensors.values()].map((t) => t.file));
    const allLayers = Array.from({ length: spec.numLayers }, (_, l) => l);
    const memory = seqs.map((seq) => ({
      seq,
      defaultProbes: estimateMemory(spec, { batch, seq, probes: DEFAULT_PROBES }),
      fullMaps: estimateMemory(spec, { batch, seq, probes: { ...DEFAULT_PROBES, pattern: { layers: allLayers } } }),
    }));
    const params = specParameterCount(spec);
    if (values.json) {
      io.out(JSON.stringify({
        dir: ckpt.dir, spec, parameters: params, files: files.size, tokenizer: !!ckpt.tokenizer,
        dtypes: Object.fromEntries(dtypes),
        memory: memory.map((m) => ({ seq: m.seq, batch, defaultProbes: m.defaultProbes.total, fullMaps: m.fullMaps.total, dominant: m.defaultProbes.dominant })),
      }, null, 2));
      return 0;
    }
    const lines = [`${ckpt.dir}`, ...describeSpecLines(spec)];
    lines.push(`parameters      ${(params / 1e6).toFixed(params < 1e7 ? 3 : 1)} M in ${files.size} file(s): ${[...dtypes].map(([k, v]) => `${v.count} ${k} (${formatBytes(v.bytes)})`).join(", ")}`);
    lines.push(`tokenizer       ${ckpt.tokenizer ? ckpt.tokenizer.path : "none (pass --ids to forward)"}`);
    lines.push("", `Estimated memory of one forward pass, batch ${batch} (CPU, f32):`);
    lines.push("  seq      default probes   full maps, all layers   largest term (default probes)");
    for (const m of memory) {
      lines.push(`  ${String(m.seq).padEnd(8)} ${formatBytes(m.defaultProbes.total).padEnd(16)} ${formatBytes(m.fullMaps.total).padEnd(23)} ${m.defaultProbes.dominant}`);
    }
    io.out(lines.join("\n"));
    return 0;
  },
};

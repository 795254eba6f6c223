/**
 * Parity with Hugging Face transformers: tiny random checkpoints of the four families in their
 * real on-disk formats (test/fixtures/parity, made by make_parity.py — see its README), run
 * through openCheckpoint → resolveModelSpec → buildModelGraph → onnxruntime, against HF's own
 * logits, attention probabilities and post-RoPE q/k. Tolerance 1e-4 absolute (as the fixtures'
 * README states); only rows whose query token is real are comparable (padded rows depend on
 * the position id chosen for padding).
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { readSafetensorsHeader, readTensorF32 } from "../../src/checkpoint/safetensors.js";
import { probesFromAttention } from "../../src/reference/forward.js";
import { createEngine } from "../../src/runtime/engine.js";
import { probeName } from "../../src/util/probes.js";

const ROOT = path.join(path.dirname(new URL(import.meta.url).pathname), "..", "fixtures", "parity");
const TOL = 1e-4;
const variants = fs.existsSync(ROOT)
  ? fs
      .readdirSync(ROOT)
      .filter((d) => fs.existsSync(path.join(ROOT, d, "inputs.json")))
      .sort()
  : [];

interface Inputs {
  family: string;
  batch: number;
  seq: number;
  input_ids: number[][];
  attention_mask: number[][];
  logits_rows: number[][];
}

/** Max |a − b| over the rows [b, …, t, :] selected by keep(b, t); `inner` = elements per row, rows laid out [batch, outer, seq]. */
function maxDiffRows(
  a: ArrayLike<number>,
  b: ArrayLike<number>,
  B: number,
  outer: number,
  T: number,
  inner: number,
  keep: (b: number, t: number) => boolean,
): number {
  expect(a.length).toBe(b.length);
  let max = 0;
  for (let bb = 0; bb < B; bb++)
    for (let o = 0; o < outer; o++)
      for (let t = 0; t < T; t++) {
        if (!keep(bb, t)) continue;
        const base = ((bb * outer + o) * T + t) * inner;
        for (let i = 0; i < inner; i++) {
          const d = Math.abs(Number(a[base + i]) - Number(b[base + i]));
          if (!(d <= max)) max = d;
        }
      }
  return max;
}

describe.skipIf(variants.length === 0)("parity with HF transformers (test/fixtures/parity)", () => {
  it.each(variants)("%s", async (variant) => {
    const dir = path.join(ROOT, variant);
    const inp = JSON.parse(fs.readFileSync(path.join(dir, "inputs.json"), "utf8")) as Inputs;
    const ref = new Map(readSafetensorsHeader(path.join(dir, "reference.safetensors")).tensors.map((t) => [t.name, t]));
    const refT = (name: string) => {
      const t = ref.get(name);
      if (!t) throw new Error(`${variant}/reference.safetensors lacks ${name} (re-run test/fixtures/parity/make_parity.py)`);
      return { data: readTensorF32(t), shape: t.shape };
    };
    const B = inp.batch,
      T = inp.seq;
    const engine = await createEngine(path.join(dir, "model"), {
      threads: 1,
      probes: { received: true, pattern: { layers: [0, 1] }, qk: { layers: [0, 1] } },
    });
    const { spec } = engine;
    expect(spec.family).toBe(inp.family);
    const attentionMask = Uint8Array.from(inp.attention_mask.flat());
    const out = await engine.forward({ ids: Int32Array.from(inp.input_ids.flat()), batch: B, seq: T, attentionMask });
    const real = (b: number, t: number) => inp.attention_mask[b][t] === 1;
    const errors: Record<string, number> = {};

    const logits = refT("logits");
    expect(logits.shape).toEqual([B, T, spec.vocabSize]);
    errors.logits = maxDiffRows(out.logits, logits.data, B, 1, T, spec.vocabSize, (b, t) => inp.logits_rows[b][t] === 1);
    const maps: Float64Array[] = [];
    for (let l = 0; l < spec.numLayers; l++) {
      const p = refT(probeName.pattern(l));
      maps.push(Float64Array.from(p.data));
      errors[`pattern ${l}`] = maxDiffRows(out.probes.get(probeName.pattern(l))!.data, p.data, B, spec.numHeads, T, T, real);
      errors[`q_rot ${l}`] = maxDiffRows(
        out.probes.get(probeName.qRot(l))!.data,
        refT(probeName.qRot(l)).data,
        B,
        spec.numHeads,
        T,
        spec.headDim,
        real,
      );
      errors[`k_rot ${l}`] = maxDiffRows(
        out.probes.get(probeName.kRot(l))!.data,
        refT(probeName.kRot(l)).data,
        B,
        spec.numKvHeads,
        T,
        spec.headDim,
        real,
      );
    }
    // the in-graph received statistic equals the column mean of HF's maps over real query rows
    const recv = probesFromAttention(spec, maps, { received: true }, { batch: B, seq: T, attentionMask });
    for (let l = 0; l < spec.numLayers; l++) {
      errors[`received ${l}`] = maxDiffRows(
        out.probes.get(probeName.received(l))!.data,
        recv.get(probeName.received(l))!.data,
        B,
        1,
        1,
        T,
        () => true,
      );
    }
    await engine.dispose();
    if (process.env.FLOATSCOPE_PARITY_LOG) console.log(variant, JSON.stringify(errors));
    const bad = Object.entries(errors).filter(([, e]) => !(e <= TOL));
    expect(bad, `${variant}: max abs errors ${JSON.stringify(errors)}`).toEqual([]);
    // guard against a vacuous comparison: the references are not all zeros
    expect(Math.max(...Array.from(logits.data, Math.abs))).toBeGreaterThan(0.5);
  });
});

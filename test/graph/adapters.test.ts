import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openCheckpoint } from "../../src/checkpoint/checkpoint.js";
import { ADAPTERS, resolveModelSpec, specTensorNames } from "../../src/graph/adapters/index.js";
import { FAMILIES, type Family } from "../../src/graph/spec.js";
import { CheckpointError, UnsupportedArchitectureError } from "../../src/util/errors.js";
import { writeTinyCheckpoint, type TinyOptions } from "../support/family-checkpoints.js";

const root = fs.mkdtempSync(path.join(os.tmpdir(), "fs-adapters-"));
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));
let n = 0;
function make(family: Family, opts: TinyOptions = {}) {
  const dir = path.join(root, `${family}-${n++}`);
  writeTinyCheckpoint(dir, family, opts);
  return openCheckpoint(dir);
}

function thrown(f: () => unknown): Error {
  try {
    f();
  } catch (e) {
    return e as Error;
  }
  throw new Error("expected a throw");
}

describe("resolveModelSpec per family", () => {
  it("llama: causal, GQA, no bias, BOS by default, Llama-3 rope scaling parsed", () => {
    const spec = resolveModelSpec(
      make("llama", {
        layers: 3,
        hidden: 16,
        heads: 4,
        kvHeads: 2,
        ffn: 24,
        vocab: 20,
        config: {
          rope_scaling: { rope_type: "llama3", factor: 8, low_freq_factor: 1, high_freq_factor: 4, original_max_position_embeddings: 8192 },
        },
      }),
    );
    expect(spec).toMatchObject({
      family: "llama",
      architecture: "LlamaForCausalLM",
      vocabSize: 20,
      hiddenSize: 16,
      numLayers: 3,
      numHeads: 4,
      numKvHeads: 2,
      headDim: 4,
      intermediateSize: 24,
      causal: true,
      qkvBias: false,
      logitShift: 0,
      addsBos: true,
      bosTokenId: 1,
      eosTokenIds: [2],
      maxPositionEmbeddings: 64,
      rmsNormEps: 1e-6,
      rope: { theta: 500000, llama3: { factor: 8, lowFreqFactor: 1, highFreqFactor: 4, originalMaxPositionEmbeddings: 8192 } },
    });
    expect(spec.maskTokenId).toBeUndefined();
    expect(spec.weights.blocks).toHaveLength(3);
    expect(spec.weights.blocks[2].gate).toBe("model.layers.2.mlp.gate_proj.weight");
    expect(spec.weights.blocks[1].qBias).toBeUndefined();
    expect(spec.weights.lmHead).toBe("lm_head.weight");
  });

  it("qwen2: q/k/v biases, causal, no BOS, tied embeddings share the embedding tensor", () => {
    const spec = resolveModelSpec(make("qwen2", { tied: true }));
    expect(spec).toMatchObject({ family: "qwen2", causal: true, qkvBias: true, addsBos: false, logitShift: 0 });
    expect(spec.rope).toEqual({ theta: 1e6 });
    expect(spec.weights.blocks[0].kBias).toBe("model.layers.0.self_attn.k_proj.bias");
    expect(spec.weights.lmHead).toBe("model.embed_tokens.weight");
  });

  it("dream: bidirectional, logit shift 1, mask id from config, detected by architectures DreamModel", () => {
    const spec = resolveModelSpec(make("dream", { vocab: 30 }));
    expect(spec).toMatchObject({
      family: "dream",
      architecture: "DreamModel",
      causal: false,
      qkvBias: true,
      logitShift: 1,
      maskTokenId: 29,
      addsBos: false,
      padTokenId: 2,
    });
  });

  it("llada: OLMo names (ff_proj = gate, up_proj = up, ff_out = down), padded vocab sets the logits width", () => {
    const spec = resolveModelSpec(make("llada", { vocab: 20, embeddingSize: 24, kvHeads: 2 }));
    expect(spec).toMatchObject({
      family: "llada",
      architecture: "LLaDAModelLM",
      vocabSize: 24,
      causal: false,
      qkvBias: false,
      logitShift: 0,
      maskTokenId: 19,
      numKvHeads: 2,
      rmsNormEps: 1e-5,
      rope: { theta: 500000 },
      maxPositionEmbeddings: 64,
    });
    const b = spec.weights.blocks[1];
    expect([b.gate, b.up, b.down, b.o, b.attnNorm, b.mlpNorm]).toEqual([
      "model.transformer.blocks.1.ff_proj.weight",
      "model.transformer.blocks.1.up_proj.weight",
      "model.transformer.blocks.1.ff_out.weight",
      "model.transformer.blocks.1.attn_out.weight",
      "model.transformer.blocks.1.attn_norm.weight",
      "model.transformer.blocks.1.ff_norm.weight",
    ]);
    expect(spec.weights.embed).toBe("model.transformer.wte.weight");
    expect(spec.weights.lmHead).toBe("model.transformer.ff_out.weight");
    expect(spec.weights.finalNorm).toBe("model.transformer.ln_f.weight");
  });

  it("llada with weight_tying uses wte as the head", () => {
    const spec = resolveModelSpec(make("llada", { tied: true }));
    expect(spec.weights.lmHead).toBe("model.transformer.wte.weight");
  });

  it("every family: specTensorNames covers exactly the checkpoint's tensors", () => {
    for (const f of FAMILIES) {
      const ck = make(f, { layers: 2 });
      const spec = resolveModelSpec(ck);
      expect(new Set(specTensorNames(spec))).toEqual(new Set(ck.tensors.keys()));
    }
  });

  it("adapters cover the four families and only those", () => {
    expect(Object.keys(ADAPTERS).sort()).toEqual([...FAMILIES].sort());
  });

  it("detects by model_type when architectures is absent (Dream's model_type is capitalised)", () => {
    const spec = resolveModelSpec(make("dream", { config: { architectures: undefined } }));
    expect(spec.family).toBe("dream");
    expect(spec.architecture).toBe("Dream");
  });

  it("head_dim overrides hidden/heads for llama", () => {
    // hidden 8, heads 2 → 4 by default; head_dim 4 stays consistent with the tensors.
    expect(resolveModelSpec(make("llama", { config: { head_dim: 4 } })).headDim).toBe(4);
    const e = thrown(() => resolveModelSpec(make("llama", { config: { head_dim: 6 } })));
    expect(e).toBeInstanceOf(CheckpointError);
    expect((e as CheckpointError).field).toBe("model.layers.0.self_attn.q_proj.weight");
    expect((e as CheckpointError).expected).toBe("[12, 8]");
  });
});

describe("special ids from the tokenizer files when config.json has none", () => {
  it("bos/eos/pad from tokenizer_config strings, mask from the family's mask token; out-of-range ids ignored", () => {
    const tokenizer = {
      model: { type: "WordLevel", vocab: { a: 0, b: 1 }, unk_token: "a" },
      added_tokens: [
        { id: 5, content: "<|startoftext|>", special: true },
        { id: 6, content: "<|endoftext|>", special: true },
        { id: 9, content: "<|mdm_mask|>", special: true },
        { id: 99, content: "<pad>", special: true },
      ],
      post_processor: null,
    };
    const spec = resolveModelSpec(
      make("llada", {
        vocab: 16,
        config: { bos_token_id: undefined, eos_token_id: undefined, pad_token_id: undefined, mask_token_id: undefined },
        files: {
          "tokenizer.json": tokenizer,
          "tokenizer_config.json": { bos_token: { content: "<|startoftext|>" }, eos_token: "<|endoftext|>", pad_token: "<pad>" },
        },
      }),
    );
    expect(spec).toMatchObject({ bosTokenId: 5, eosTokenIds: [6], maskTokenId: 9, addsBos: false });
    expect(spec.padTokenId).toBeUndefined();
  });

  it("addsBos follows the tokenizer's post-processor, not the family", () => {
    const withBos = {
      model: { type: "WordLevel", vocab: { a: 0, "[BOS]": 1 }, unk_token: "a" },
      added_tokens: [{ id: 1, content: "[BOS]", special: true }],
      post_processor: {
        type: "TemplateProcessing",
        single: [{ SpecialToken: { id: "[BOS]", type_id: 0 } }, { Sequence: { id: "A", type_id: 0 } }],
        pair: [],
        special_tokens: {},
      },
    };
    expect(resolveModelSpec(make("qwen2", { files: { "tokenizer.json": withBos } })).addsBos).toBe(true);
    expect(resolveModelSpec(make("llama", { files: { "tokenizer.json": { ...withBos, post_processor: null } } })).addsBos).toBe(false);
    expect(
      resolveModelSpec(
        make("llama", {
          files: { "tokenizer.json": { ...withBos, post_processor: null }, "tokenizer_config.json": { add_bos_token: true } },
        }),
      ).addsBos,
    ).toBe(true);
  });
});

describe("resolveModelSpec errors", () => {
  it("unknown architecture lists the four families", () => {
    const e = thrown(() => resolveModelSpec(make("llama", { config: { architectures: ["GPT2LMHeadModel"], model_type: "gpt2" } })));
    expect(e).toBeInstanceOf(UnsupportedArchitectureError);
    for (const f of ["llama", "qwen2", "llada", "dream"]) expect(e.message).toContain(f);
    expect((e as UnsupportedArchitectureError).found).toBe("GPT2LMHeadModel");
  });

  it("missing tensor is named with its expected shape", () => {
    const e = thrown(() => resolveModelSpec(make("qwen2", { drop: ["model.layers.1.self_attn.v_proj.bias"] }))) as CheckpointError;
    expect(e).toBeInstanceOf(CheckpointError);
    expect(e.field).toBe("model.layers.1.self_attn.v_proj.bias");
    expect(e.expected).toBe("a tensor of shape [4]");
  });

  it("untied head missing is an error; tie flag makes it optional", () => {
    const e = thrown(() => resolveModelSpec(make("llama", { drop: ["lm_head.weight"] }))) as CheckpointError;
    expect(e.field).toBe("lm_head.weight");
  });

  it("config claiming fewer layers than the file holds", () => {
    const e = thrown(() => resolveModelSpec(make("llama", { layers: 3, config: { num_hidden_layers: 2 } }))) as CheckpointError;
    expect(e.field).toBe("num_hidden_layers");
    expect(e.found).toContain("model.layers.2.");
  });

  it("absurd sizes fail on the config key before any tensor lookup", () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ num_hidden_layers: 1e9 }, "num_hidden_layers"],
      [{ hidden_size: -8 }, "hidden_size"],
      [{ hidden_size: 8.5 }, "hidden_size"],
      [{ num_attention_heads: 3 }, "num_attention_heads"],
      [{ num_key_value_heads: 3, num_attention_heads: 2 }, "num_key_value_heads"],
      [{ vocab_size: "16" }, "vocab_size"],
      [{ intermediate_size: undefined }, "intermediate_size"],
      [{ rms_norm_eps: -1 }, "rms_norm_eps"],
      [{ hidden_act: "gelu" }, "hidden_act"],
      [{ rope_scaling: { rope_type: "yarn", factor: 4 } }, "rope_scaling.rope_type"],
      [{ bos_token_id: 999 }, "bos_token_id"],
    ];
    for (const [cfg, field] of cases) {
      const e = thrown(() => resolveModelSpec(make("llama", { config: cfg }))) as CheckpointError;
      expect(e, JSON.stringify(cfg)).toBeInstanceOf(CheckpointError);
      expect(e.field, JSON.stringify(cfg)).toBe(field);
      expect(e.file).toMatch(/config\.json$/);
    }
  });

  it("MDM without any mask id fails naming mask_token_id", () => {
    const e = thrown(() => resolveModelSpec(make("llada", { config: { mask_token_id: undefined } }))) as CheckpointError;
    expect(e.field).toBe("mask_token_id");
  });

  it("LLaDA variants we do not implement are refused by key", () => {
    const e = thrown(() => resolveModelSpec(make("llada", { config: { block_type: "sequential" } }))) as CheckpointError;
    expect(e.field).toBe("block_type");
    expect(e.hint).toContain("Llama-style block");
  });

  it("integer dtype tensors are refused", () => {
    const ck = make("llama");
    const t = ck.tensors.get("model.norm.weight")!;
    ck.tensors.set(t.name, { ...t, dtype: "I32" });
    const e = thrown(() => resolveModelSpec(ck)) as CheckpointError;
    expect(e.field).toBe("model.norm.weight.dtype");
  });
});

describe("parity fixtures written by the Python script (HF formats), when present", () => {
  const fixtures = path.join(__dirname, "..", "fixtures", "parity");
  const variants = fs.existsSync(fixtures)
    ? fs
        .readdirSync(fixtures)
        .filter((v) => fs.existsSync(path.join(fixtures, v, "meta.json")) && fs.existsSync(path.join(fixtures, v, "model", "config.json")))
    : [];
  it.runIf(variants.length > 0)("spec matches each fixture's meta.json (sizes, flags, special ids, rope)", () => {
    for (const v of variants) {
      const meta = JSON.parse(fs.readFileSync(path.join(fixtures, v, "meta.json"), "utf8"));
      const ck = openCheckpoint(path.join(fixtures, v, "model"));
      const spec = resolveModelSpec(ck);
      const fam = meta.variant.family as Family;
      expect(spec, v).toMatchObject({
        family: fam,
        vocabSize: meta.sizes.vocab_size,
        hiddenSize: meta.sizes.hidden,
        numLayers: meta.sizes.layers,
        numHeads: meta.sizes.heads,
        numKvHeads: meta.sizes.kv_heads,
        headDim: meta.sizes.head_dim,
        intermediateSize: meta.sizes.intermediate,
        rmsNormEps: meta.variant.eps,
        causal: fam === "llama" || fam === "qwen2",
        qkvBias: fam === "qwen2" || fam === "dream",
        logitShift: fam === "dream" ? 1 : 0,
        addsBos: fam === "llama",
      });
      expect(spec.rope.theta, v).toBe(meta.variant.theta);
      if (meta.variant.rope_scaling) {
        expect(spec.rope.llama3, v).toEqual({
          factor: meta.variant.rope_scaling.factor,
          lowFreqFactor: meta.variant.rope_scaling.low_freq_factor,
          highFreqFactor: meta.variant.rope_scaling.high_freq_factor,
          originalMaxPositionEmbeddings: meta.variant.rope_scaling.original_max_position_embeddings,
        });
      } else {
        expect(spec.rope.llama3, v).toBeUndefined();
      }
      expect(spec.weights.lmHead === spec.weights.embed, v).toBe(meta.variant.tied);
      expect(spec.bosTokenId, v).toBe(meta.special_ids.bos);
      expect(spec.eosTokenIds, v).toContain(meta.special_ids.eos);
      expect(spec.padTokenId ?? null, v).toBe(meta.special_ids.pad);
      expect(spec.maskTokenId ?? null, v).toBe(meta.special_ids.mask);
      const dtypes = new Set([...ck.tensors.values()].map((t) => t.dtype));
      expect([...dtypes], v).toEqual([{ f32: "F32", bf16: "BF16", f16: "F16" }[meta.variant.dtype as string]]);
      expect(new Set([...ck.tensors.values()].map((t) => t.file)).size, v).toBe(meta.variant.shards);
    }
  });
});

"""Random Q4_0 GGUFs shaped like the paper's two models, streamed, for bench/open-large.mjs and the
benchmarks' scale section (docs/engine.md, "Opening a large quantised model"):

  --shape llada-8b  (default) llama.cpp architecture "llada": d 4096, 32 layers, 32 heads (no GQA),
                    MLP 12288, vocabulary 126464, RoPE theta 500000, eps 1e-5; 4.51 GB.
  --shape dream-7b  llama.cpp architecture "dream", as its converter (conversion/dream.py, a Qwen2
                    body) writes Dream-org/Dream-v0-Instruct-7B: d 3584, 28 layers, 28 query heads
                    and 4 key/value heads (GQA 7:1, head size 128), q/k/v biases, MLP 18944,
                    vocabulary 152064 (151643 BPE tokens, Qwen2's specials 151643-151664, Dream's
                    <|beginoftext|> 151665 and <|mask|> 151666, then [PAD<i>] unused rows), RoPE theta
                    1e6, eps 1e-6, context 131072, pre-tokenizer "qwen2"; 4.28 GB.

Every 2-D weight is Q4_0 (as `llama-quantize --pure Q4_0`; without --pure llama.cpp would store
output.weight as Q6_K) with random nibbles and half scales around 0.0043 (weights of std ~0.02);
norms are F32 ones, biases F32 N(0, 0.02). Byte-level gpt2 vocabulary: the 256 byte tokens, then
fillers, control specials at the real models' ids; no merges (text tokenises to bytes).
Needs the `gguf` and `numpy` Python packages (the set-up's oracle environment has them):
   PYTHONPATH=.cache/oracle-py /usr/bin/python3 bench/make_llada8b_q4.py /tmp/llada8b-q4_0.gguf [layers]
   PYTHONPATH=.cache/oracle-py /usr/bin/python3 bench/make_llada8b_q4.py --shape dream-7b /tmp/dream7b-q4_0.gguf [layers]
(`layers` keeps the first blocks only: a small file of the same widths; `--type q4_k` writes every 2-D
weight as random Q4_K super-blocks instead, for the K-quant mapping.)"""
import argparse
import numpy as np
import gguf
from gguf import GGMLQuantizationType as Q

# The published configs (config.json of GSAI-ML/LLaDA-8B-Instruct and Dream-org/Dream-v0-Instruct-7B).
SHAPES = {
    "llada-8b": dict(arch="llada", D=4096, L=32, H=32, KV=32, FF=12288, V=126464, CTX=4096, theta=500000.0, eps=1e-5,
                     bias=False, pre="gpt2", add_bos=True,
                     specials={126080: "<|startoftext|>", 126081: "<|endoftext|>", 126336: "<|mdm_mask|>"},
                     bos=126080, eos=126081, pad=None, mask=126336, name="random LLaDA-8B-shaped Q4_0"),
    "dream-7b": dict(arch="dream", D=3584, L=28, H=28, KV=4, FF=18944, V=152064, CTX=131072, theta=1000000.0, eps=1e-6,
                     bias=True, pre="qwen2", add_bos=False,
                     specials={151643 + i: t for i, t in enumerate([
                         "<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|object_ref_start|>", "<|object_ref_end|>",
                         "<|box_start|>", "<|box_end|>", "<|quad_start|>", "<|quad_end|>", "<|vision_start|>",
                         "<|vision_end|>", "<|vision_pad|>", "<|image_pad|>", "<|video_pad|>", "<tool_call>",
                         "</tool_call>", "<|fim_prefix|>", "<|fim_middle|>", "<|fim_suffix|>", "<|fim_pad|>",
                         "<|repo_name|>", "<|file_sep|>", "<|beginoftext|>", "<|mask|>"])},
                     # Dream's tokenizer_config: bos <|beginoftext|>, eos and pad <|endoftext|>, mask <|mask|>
                     bos=151665, eos=151643, pad=151643, mask=151666, n_text=151643, name="random Dream-7B-shaped Q4_0"),
}

ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
ap.add_argument("--shape", choices=sorted(SHAPES), default="llada-8b")
ap.add_argument("--type", choices=["q4_0", "q4_k"], default="q4_0",
                help="the 2-D weights' ggml type: q4_0, or q4_k (random super-blocks: K-quant mapping checks)")
ap.add_argument("out")
ap.add_argument("layers", nargs="?", type=int, help="keep the first blocks only (default: all)")
args = ap.parse_args()
S = SHAPES[args.shape]
D, H, KV, FF, V = S["D"], S["H"], S["KV"], S["FF"], S["V"]
QW = Q.Q4_K if args.type == "q4_k" else Q.Q4_0
BLOCK, BLOCK_BYTES = gguf.GGML_QUANT_SIZES[QW]  # Q4_0: 32 weights in 18 bytes; Q4_K: 256 in 144
L = args.layers if args.layers is not None else S["L"]
HD = D // H
rng = np.random.default_rng(20261206)

def bytes_to_unicode():
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b); cs.append(256 + n); n += 1
    return [chr(cs[bs.index(b)]) for b in range(256)]

w = gguf.GGUFWriter(args.out, S["arch"])
w.add_string("general.name", S["name"].replace("Q4_0", args.type.upper()))
w.add_context_length(S["CTX"]); w.add_embedding_length(D); w.add_block_count(L); w.add_feed_forward_length(FF)
w.add_head_count(H); w.add_head_count_kv(KV); w.add_layer_norm_rms_eps(S["eps"]); w.add_rope_freq_base(S["theta"])
w.add_file_type(gguf.LlamaFileType.MOSTLY_Q4_K_M if QW == Q.Q4_K else gguf.LlamaFileType.MOSTLY_Q4_0)
if S["arch"] == "llada":
    w.add_rope_dimension_count(HD); w.add_vocab_size(V)
w.add_causal_attention(False); w.add_mask_token_id(S["mask"])
w.add_bos_token_id(S["bos"]); w.add_eos_token_id(S["eos"])
if S["pad"] is not None:
    w.add_pad_token_id(S["pad"])
# The converter's vocabulary: real tokens NORMAL (1), specials CONTROL (3) except Qwen2's non-special
# added tokens (<tool_call> …, USER_DEFINED 4), ids past the tokenizer's last token "[PAD<i>]" UNUSED (5).
n_text = S.get("n_text", V)
toks = bytes_to_unicode() + [f"<filler_{i}>" for i in range(256, n_text)] + [f"[PAD{i}]" for i in range(n_text, V)]
types = [1] * n_text + [5] * (V - n_text)
for i, t in S["specials"].items():
    toks[i] = t
    types[i] = 4 if t in ("<tool_call>", "</tool_call>") or t.startswith("<|fim") or t in ("<|repo_name|>", "<|file_sep|>") else 3
w.add_tokenizer_model("gpt2"); w.add_tokenizer_pre(S["pre"]); w.add_token_list(toks); w.add_token_types(types)
w.add_token_merges([]); w.add_add_bos_token(S["add_bos"])

shapes = [("token_embd.weight", (V, D), QW), ("output_norm.weight", (D,), Q.F32), ("output.weight", (V, D), QW)]
for l in range(L):
    b = f"blk.{l}."
    shapes += [(b + "attn_norm.weight", (D,), Q.F32), (b + "ffn_norm.weight", (D,), Q.F32)]
    shapes += [(b + "attn_q.weight", (H * HD, D), QW), (b + "attn_k.weight", (KV * HD, D), QW),
               (b + "attn_v.weight", (KV * HD, D), QW), (b + "attn_output.weight", (D, H * HD), QW)]
    if S["bias"]:
        shapes += [(b + "attn_q.bias", (H * HD,), Q.F32), (b + "attn_k.bias", (KV * HD,), Q.F32), (b + "attn_v.bias", (KV * HD,), Q.F32)]
    shapes += [(b + "ffn_gate.weight", (FF, D), QW), (b + "ffn_up.weight", (FF, D), QW), (b + "ffn_down.weight", (D, FF), QW)]

def data(name, shape, qt):
    if qt == Q.F32:
        if name.endswith(".bias"):
            return (0.02 * rng.standard_normal(shape)).astype(np.float32)
        return np.ones(shape, np.float32)
    rows, cols = shape
    nb = rows * cols // BLOCK
    blk = rng.integers(0, 256, size=(nb, BLOCK_BYTES), dtype=np.uint8)
    if qt == Q.Q4_K:
        # d·sc (sc: 6 random bits) around 0.0043 and dmin·m around 8 of those, so w ≈ (d·sc)(q − 8)
        d = (0.0043 / 32 * rng.uniform(0.5, 1.5, nb)).astype(np.float16)
        blk[:, :2] = d.view(np.uint8).reshape(nb, 2)
        blk[:, 2:4] = (d.astype(np.float32) * 8).astype(np.float16).view(np.uint8).reshape(nb, 2)
    else:
        d = (0.0043 * rng.uniform(0.5, 1.5, nb)).astype(np.float16)
        blk[:, :2] = d.view(np.uint8).reshape(nb, 2)
    return blk.reshape(rows, cols // BLOCK * BLOCK_BYTES)

for name, shape, qt in shapes:
    nbytes = int(np.prod(shape)) * 4 if qt == Q.F32 else int(np.prod(shape)) // BLOCK * BLOCK_BYTES
    stored = shape if qt == Q.F32 else (shape[0], shape[1] // BLOCK * BLOCK_BYTES)
    w.add_tensor_info(name, stored, np.float32 if qt == Q.F32 else np.uint8, nbytes, raw_dtype=qt)
w.write_header_to_file(); w.write_kv_data_to_file(); w.write_ti_data_to_file()
for name, shape, qt in shapes:
    w.write_tensor_data(data(name, shape, qt))
w.close()
print("wrote", args.out)

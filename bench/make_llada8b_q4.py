"""LLaDA-8B-shaped random Q4_0 GGUF (d 4096, 32 layers, 32 heads, MLP 12288, vocab 126464), streamed,
for bench/open-large.mjs (docs/engine.md, "Opening a large quantised model"). Every 2-D weight is Q4_0
with random nibbles and half scales around 0.0043 (weights of std ~0.02); norms F32 ones. Byte-level
gpt2 vocabulary: 256 byte tokens + fillers, control specials. 4.51 GB with 32 layers.
Needs the `gguf` and `numpy` Python packages (the set-up's oracle environment has them):
   PYTHONPATH=.cache/oracle-py /usr/bin/python3 bench/make_llada8b_q4.py /tmp/llada8b-q4_0.gguf [layers]"""
import sys
import numpy as np
import gguf
from gguf import GGMLQuantizationType as Q

out = sys.argv[1]
L = int(sys.argv[2]) if len(sys.argv) > 2 else 32
D, H, FF, V, CTX = 4096, 32, 12288, 126464, 4096
BOS, EOS, MASK = 126080, 126081, 126336
rng = np.random.default_rng(20261206)

def bytes_to_unicode():
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b); cs.append(256 + n); n += 1
    return [chr(cs[bs.index(b)]) for b in range(256)]

w = gguf.GGUFWriter(out, "llada")
w.add_string("general.name", "random LLaDA-8B-shaped Q4_0")
w.add_context_length(CTX); w.add_embedding_length(D); w.add_block_count(L); w.add_feed_forward_length(FF)
w.add_head_count(H); w.add_head_count_kv(H); w.add_layer_norm_rms_eps(1e-5); w.add_rope_freq_base(500000.0)
w.add_rope_dimension_count(D // H); w.add_vocab_size(V); w.add_causal_attention(False); w.add_mask_token_id(MASK)
w.add_bos_token_id(BOS); w.add_eos_token_id(EOS)
toks = bytes_to_unicode() + [f"<filler_{i}>" for i in range(256, V)]
types = [1] * V
for s in (BOS, EOS, MASK):
    types[s] = 3
toks[BOS], toks[EOS], toks[MASK] = "<|startoftext|>", "<|endoftext|>", "<|mdm_mask|>"
w.add_tokenizer_model("gpt2"); w.add_tokenizer_pre("gpt2"); w.add_token_list(toks); w.add_token_types(types)
w.add_token_merges([]); w.add_add_bos_token(True)

shapes = [("token_embd.weight", (V, D), Q.Q4_0), ("output_norm.weight", (D,), Q.F32), ("output.weight", (V, D), Q.Q4_0)]
for l in range(L):
    b = f"blk.{l}."
    shapes += [(b + "attn_norm.weight", (D,), Q.F32), (b + "ffn_norm.weight", (D,), Q.F32)]
    for p in ("attn_q", "attn_k", "attn_v", "attn_output"):
        shapes.append((b + p + ".weight", (D, D), Q.Q4_0))
    shapes += [(b + "ffn_gate.weight", (FF, D), Q.Q4_0), (b + "ffn_up.weight", (FF, D), Q.Q4_0), (b + "ffn_down.weight", (D, FF), Q.Q4_0)]

def data(shape, qt):
    if qt == Q.F32:
        return np.ones(shape, np.float32)
    rows, cols = shape
    nb = rows * cols // 32
    blk = rng.integers(0, 256, size=(nb, 18), dtype=np.uint8)
    d = (0.0043 * rng.uniform(0.5, 1.5, nb)).astype(np.float16)
    blk[:, :2] = d.view(np.uint8).reshape(nb, 2)
    return blk.reshape(rows, cols // 32 * 18)

for name, shape, qt in shapes:
    nbytes = int(np.prod(shape)) * 4 if qt == Q.F32 else int(np.prod(shape)) // 32 * 18
    stored = shape if qt == Q.F32 else (shape[0], shape[1] // 32 * 18)  # Q4_0: 18 bytes per 32 weights
    w.add_tensor_info(name, stored, np.float32 if qt == Q.F32 else np.uint8, nbytes, raw_dtype=qt)
w.write_header_to_file(); w.write_kv_data_to_file(); w.write_ti_data_to_file()
for name, shape, qt in shapes:
    w.write_tensor_data(data(shape, qt))
w.close()
print("wrote", out)

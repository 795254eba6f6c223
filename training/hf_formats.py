"""Save a Llama-style model in the real on-disk format of each floatscope family.

    save_checkpoint(out_dir, family, weights, hparams, *, dtype="f32", shards=1,
                    tokenizer_files=None, extra_config=None, generation_config=True) -> list[str]

      out_dir          folder to write (created; files inside are replaced atomically, one by one)
      family           "llama" | "qwen2" | "llada" | "dream"
      weights          canonical state dict, numpy arrays or torch tensors (any float dtype), [out, in] layout
                       as in torch.nn.Linear:
                         embed [V, D], final_norm [D], lm_head [V, D] (omit, or equal to embed, when tied)
                         per layer i, key "layers.{i}.<name>" (or weights["layers"] = list of dicts):
                           attn_norm [D], q [H*d, D], k [Hkv*d, D], v [Hkv*d, D],
                           q_bias [H*d], k_bias [Hkv*d], v_bias [Hkv*d] (qwen2 / dream only: required there),
                           o [D, H*d], mlp_norm [D], gate [F, D], up [F, D], down [D, F]
      hparams          dict with HF-Llama-style keys:
                         num_attention_heads, num_key_value_heads (default = heads), rope_theta,
                         rms_norm_eps, max_position_embeddings, bos_token_id, eos_token_id, pad_token_id,
                         mask_token_id (llada / dream: required), tie_word_embeddings (default False),
                         rope_scaling (llama only, e.g. {"rope_type": "llama3", "factor": 8.0,
                         "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                         "original_max_position_embeddings": 8192}); sizes are read off the weights.
      dtype            "f32" | "bf16" | "f16" — every tensor is stored in this dtype (bf16 rounds to nearest even)
      shards           1 → model.safetensors; N > 1 → model-0000k-of-0000N.safetensors + model.safetensors.index.json
      tokenizer_files  {file name: source path (str) | bytes (content) | dict (written as JSON)}, copied into out_dir
      extra_config     keys merged into config.json last (override)
      generation_config  write generation_config.json like the real model does (llama, qwen2, dream; llada has none
                       of its own here) — False to skip
      returns          the written file names

    read_safetensors(path) -> (dict name -> np.ndarray (f32 for f16/bf16 files), metadata dict)

Tensor names (what the real checkpoints use):
  llama / qwen2 / dream: model.embed_tokens.weight, model.layers.{i}.input_layernorm.weight,
    model.layers.{i}.self_attn.{q,k,v,o}_proj.weight (+ {q,k,v}_proj.bias for qwen2 / dream),
    model.layers.{i}.post_attention_layernorm.weight, model.layers.{i}.mlp.{gate,up,down}_proj.weight,
    model.norm.weight, lm_head.weight (absent when tied)
  llada (OLMo naming inside the HF wrapper): model.transformer.wte.weight,
    model.transformer.blocks.{i}.{attn_norm,q_proj,k_proj,v_proj,attn_out,ff_norm,ff_proj,up_proj,ff_out}.weight
    (ff_proj is the SiLU-gated branch = gate, up_proj the linear branch, ff_out = down),
    model.transformer.ln_f.weight, model.transformer.ff_out.weight (absent when weight_tying)

Works with Debian's /usr/bin/python3 (numpy; torch optional) — no safetensors package needed.
"""
from __future__ import annotations

import json
import os
import struct
import tempfile

import numpy as np

FAMILIES = ("llama", "qwen2", "llada", "dream")
LAYER_KEYS = ("attn_norm", "q", "k", "v", "o", "mlp_norm", "gate", "up", "down")
BIAS_KEYS = ("q_bias", "k_bias", "v_bias")

_HF_LAYER = {
    "attn_norm": "input_layernorm.weight", "q": "self_attn.q_proj.weight", "k": "self_attn.k_proj.weight",
    "v": "self_attn.v_proj.weight", "q_bias": "self_attn.q_proj.bias", "k_bias": "self_attn.k_proj.bias",
    "v_bias": "self_attn.v_proj.bias", "o": "self_attn.o_proj.weight",
    "mlp_norm": "post_attention_layernorm.weight", "gate": "mlp.gate_proj.weight",
    "up": "mlp.up_proj.weight", "down": "mlp.down_proj.weight",
}
_LLADA_LAYER = {
    "attn_norm": "attn_norm.weight", "q": "q_proj.weight", "k": "k_proj.weight", "v": "v_proj.weight",
    "o": "attn_out.weight", "mlp_norm": "ff_norm.weight", "gate": "ff_proj.weight", "up": "up_proj.weight",
    "down": "ff_out.weight",
}
_ST_DTYPE = {"f32": "F32", "bf16": "BF16", "f16": "F16"}
_TORCH_DTYPE = {"f32": "float32", "bf16": "bfloat16", "f16": "float16"}


# ----------------------------------------------------------------------------- safetensors

def _to_f32(x) -> np.ndarray:
    if hasattr(x, "detach"):  # torch tensor; bf16 has no numpy dtype, so widen first
        x = x.detach().cpu().float().numpy()
    return np.ascontiguousarray(np.asarray(x, dtype=np.float32))


def _f32_to_bf16_bits(a: np.ndarray) -> np.ndarray:
    """Round-to-nearest-even, like torch's .to(bfloat16); returns uint16 bit patterns."""
    u = a.astype(np.float32).view(np.uint32).astype(np.uint64)
    r = (u + 0x7FFF + ((u >> 16) & 1)) >> 16
    bits = r.astype(np.uint16)
    nan = np.isnan(a)
    if nan.any():
        bits[nan] = 0x7FC0
    return bits


def _encode(a: np.ndarray, dtype: str) -> bytes:
    if dtype == "f32":
        return a.astype("<f4").tobytes()
    if dtype == "f16":
        return a.astype("<f2").tobytes()
    if dtype == "bf16":
        return _f32_to_bf16_bits(a).astype("<u2").tobytes()
    raise ValueError(f"dtype: expected one of {list(_ST_DTYPE)}, found {dtype!r}")


def write_safetensors(path: str, tensors: dict, dtype: str = "f32", metadata: dict | None = None) -> int:
    """Write {name: array} (f32-convertible) as one safetensors file in `dtype`; returns the data byte count.

    Layout: u64 little-endian header length, JSON header padded with spaces to a multiple of 8,
    then the raw little-endian tensor bytes in header order."""
    header: dict = {"__metadata__": dict(metadata or {"format": "pt"})}
    blobs = []
    offset = 0
    for name, t in tensors.items():
        a = _to_f32(t)
        b = _encode(a, dtype)
        header[name] = {"dtype": _ST_DTYPE[dtype], "shape": list(a.shape), "data_offsets": [offset, offset + len(b)]}
        blobs.append(b)
        offset += len(b)
    h = json.dumps(header, separators=(",", ":")).encode("utf-8")
    h += b" " * ((8 - len(h) % 8) % 8)
    _atomic_write(path, [struct.pack("<Q", len(h)), h, *blobs])
    return offset


def read_safetensors(path: str) -> tuple[dict, dict]:
    """Read a safetensors file → ({name: np.ndarray}, metadata). F16/BF16 are widened to f32."""
    with open(path, "rb") as f:
        raw = f.read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n].decode("utf-8"))
    meta = header.pop("__metadata__", {})
    base = 8 + n
    out = {}
    for name, info in header.items():
        lo, hi = info["data_offsets"]
        buf = raw[base + lo:base + hi]
        dt = info["dtype"]
        if dt == "F32":
            a = np.frombuffer(buf, "<f4").copy()
        elif dt == "F16":
            a = np.frombuffer(buf, "<f2").astype(np.float32)
        elif dt == "BF16":
            a = (np.frombuffer(buf, "<u2").astype(np.uint32) << 16).view(np.float32)
        elif dt == "I64":
            a = np.frombuffer(buf, "<i8").copy()
        elif dt == "I32":
            a = np.frombuffer(buf, "<i4").copy()
        else:
            raise ValueError(f"{path}: tensor {name}: dtype expected F32/F16/BF16/I32/I64, found {dt}")
        out[name] = a.reshape(info["shape"])
    return out, meta


def _atomic_write(path: str, chunks) -> None:
    d = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=d)
    try:
        with os.fdopen(fd, "wb") as f:
            for c in chunks:
                f.write(c)
        os.chmod(tmp, 0o644)  # mkstemp creates 0600; checkpoints are meant to be shared
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _write_json(path: str, obj) -> None:
    _atomic_write(path, [(json.dumps(obj, indent=2) + "\n").encode("utf-8")])


# ----------------------------------------------------------------------------- canonical → real

def _layers(weights: dict) -> list[dict]:
    if "layers" in weights:
        return [dict(l) for l in weights["layers"]]
    out: dict[int, dict] = {}
    for k, v in weights.items():
        if k.startswith("layers."):
            _, i, name = k.split(".", 2)
            out.setdefault(int(i), {})[name] = v
    if sorted(out) != list(range(len(out))):
        raise ValueError(f"weights: expected layers 0..N-1, found {sorted(out)}")
    return [out[i] for i in range(len(out))]


def _shape(x) -> tuple:
    return tuple(x.shape)


def describe(weights: dict, hparams: dict) -> dict:
    """Sizes read off the weights, checked against each other and hparams. Raises ValueError naming the tensor."""
    layers = _layers(weights)
    if not layers:
        raise ValueError("weights: expected at least one layer (layers.0.*), found none")
    V, D = _shape(weights["embed"])
    H = int(hparams["num_attention_heads"])
    Hkv = int(hparams.get("num_key_value_heads", H))
    qo = _shape(layers[0]["q"])[0]
    if qo % H:
        raise ValueError(f"layers.0.q: expected rows divisible by num_attention_heads={H}, found {qo}")
    d = qo // H
    F = _shape(layers[0]["gate"])[0]
    expect = {"attn_norm": (D,), "q": (H * d, D), "k": (Hkv * d, D), "v": (Hkv * d, D), "o": (D, H * d),
              "mlp_norm": (D,), "gate": (F, D), "up": (F, D), "down": (D, F),
              "q_bias": (H * d,), "k_bias": (Hkv * d,), "v_bias": (Hkv * d,)}
    for i, l in enumerate(layers):
        for k in LAYER_KEYS:
            if k not in l:
                raise ValueError(f"weights: layers.{i}.{k}: expected a tensor of shape {expect[k]}, found none")
        for k, v in l.items():
            if k not in expect:
                raise ValueError(f"weights: layers.{i}.{k}: expected one of {sorted(expect)}, found unknown key")
            if _shape(v) != expect[k]:
                raise ValueError(f"weights: layers.{i}.{k}: expected shape {expect[k]}, found {_shape(v)}")
    if _shape(weights["final_norm"]) != (D,):
        raise ValueError(f"weights: final_norm: expected shape {(D,)}, found {_shape(weights['final_norm'])}")
    tied = bool(hparams.get("tie_word_embeddings", False))
    if not tied and "lm_head" not in weights:
        raise ValueError("weights: lm_head: expected [V, D] (tie_word_embeddings is false), found none")
    if "lm_head" in weights and _shape(weights["lm_head"]) != (V, D):
        raise ValueError(f"weights: lm_head: expected shape {(V, D)}, found {_shape(weights['lm_head'])}")
    return {"vocab": V, "hidden": D, "layers": len(layers), "heads": H, "kv_heads": Hkv, "head_dim": d,
            "ffn": F, "tied": tied, "bias": "q_bias" in layers[0]}


def real_state_dict(family: str, weights: dict, hparams: dict) -> dict:
    """Canonical names → the family's real tensor names (values untouched, in checkpoint order)."""
    info = describe(weights, hparams)
    layers = _layers(weights)
    out: dict = {}
    if family == "llada":
        if info["bias"]:
            raise ValueError("weights: layers.0.q_bias: expected no biases for llada (include_bias false), found one")
        out["model.transformer.wte.weight"] = weights["embed"]
        for i, l in enumerate(layers):
            for k in LAYER_KEYS:
                out[f"model.transformer.blocks.{i}.{_LLADA_LAYER[k]}"] = l[k]
        out["model.transformer.ln_f.weight"] = weights["final_norm"]
        if not info["tied"]:
            out["model.transformer.ff_out.weight"] = weights["lm_head"]
        return out
    if family not in FAMILIES:
        raise ValueError(f"family: expected one of {list(FAMILIES)}, found {family!r}")
    needs_bias = family in ("qwen2", "dream")
    if needs_bias != info["bias"]:
        raise ValueError(f"weights: layers.0.q_bias: expected {'q/k/v biases' if needs_bias else 'no biases'} "
                         f"for {family}, found {'some' if info['bias'] else 'none'}")
    out["model.embed_tokens.weight"] = weights["embed"]
    for i, l in enumerate(layers):
        order = ["attn_norm", "q", *(["q_bias"] if needs_bias else []), "k", *(["k_bias"] if needs_bias else []),
                 "v", *(["v_bias"] if needs_bias else []), "o", "mlp_norm", "gate", "up", "down"]
        for k in order:
            out[f"model.layers.{i}.{_HF_LAYER[k]}"] = l[k]
    out["model.norm.weight"] = weights["final_norm"]
    if not info["tied"]:
        out["lm_head.weight"] = weights["lm_head"]
    return out


def make_config(family: str, info: dict, hp: dict, dtype: str) -> tuple[dict, dict | None]:
    """(config.json, generation_config.json or None) with the keys the real checkpoints carry."""
    tdt = _TORCH_DTYPE[dtype]
    theta = float(hp.get("rope_theta", 10000.0))
    eps = float(hp.get("rms_norm_eps", 1e-5 if family in ("llama", "llada") else 1e-6))
    max_pos = int(hp.get("max_position_embeddings", 4096))
    bos, eos, pad = hp.get("bos_token_id"), hp.get("eos_token_id"), hp.get("pad_token_id")
    if family in ("llada", "dream") and hp.get("mask_token_id") is None:
        raise ValueError(f"hparams: mask_token_id: expected an int for {family}, found none")
    if family == "llada":
        if info["head_dim"] * info["heads"] != info["hidden"]:
            raise ValueError(f"weights: layers.0.q: llada expects head dim = d_model / n_heads "
                             f"({info['hidden']} / {info['heads']}), found {info['head_dim']}")
        cfg = {
            "activation_type": "silu", "alibi": False, "alibi_bias_max": 8.0, "architectures": ["LLaDAModelLM"],
            "attention_dropout": 0.0, "attention_layer_norm": False, "attention_layer_norm_with_affine": True,
            "auto_map": {"AutoConfig": "configuration_llada.LLaDAConfig",
                         "AutoModelForCausalLM": "modeling_llada.LLaDAModelLM",
                         "AutoModel": "modeling_llada.LLaDAModelLM"},
            "bias_for_layer_norm": False, "block_group_size": 1, "block_type": "llama", "bos_token_id": bos,
            "d_model": info["hidden"], "embedding_dropout": 0.0, "embedding_size": info["vocab"],
            "eos_token_id": eos, "flash_attention": False, "include_bias": False, "include_qkv_bias": False,
            "init_cutoff_factor": None, "init_device": "meta", "init_fn": "mitchell", "init_std": 0.02,
            "input_emb_norm": False, "layer_norm_type": "rms", "layer_norm_with_affine": True,
            "mask_token_id": int(hp["mask_token_id"]), "max_sequence_length": max_pos,
            "mlp_hidden_size": info["ffn"], "mlp_ratio": 4, "model_type": "llada", "multi_query_attention": None,
            "n_heads": info["heads"], "n_kv_heads": info["kv_heads"], "n_layers": info["layers"],
            "pad_token_id": pad, "precision": "amp_bf16", "residual_dropout": 0.0, "rms_norm_eps": eps,
            "rope": True, "rope_full_precision": True, "rope_theta": theta, "scale_logits": False,
            "torch_dtype": tdt, "transformers_version": "4.46.3", "use_cache": False,
            "vocab_size": info["vocab"], "weight_tying": info["tied"],
        }
        return cfg, None
    common = {
        "attention_dropout": 0.0, "bos_token_id": bos, "eos_token_id": eos, "hidden_act": "silu",
        "hidden_size": info["hidden"], "initializer_range": 0.02, "intermediate_size": info["ffn"],
        "max_position_embeddings": max_pos, "num_attention_heads": info["heads"],
        "num_hidden_layers": info["layers"], "num_key_value_heads": info["kv_heads"], "rms_norm_eps": eps,
        "rope_scaling": None, "rope_theta": theta, "tie_word_embeddings": info["tied"], "torch_dtype": tdt,
        "transformers_version": "4.46.3", "use_cache": True, "vocab_size": info["vocab"],
    }
    if family != "llama" and info["head_dim"] * info["heads"] != info["hidden"]:
        raise ValueError(f"weights: layers.0.q: {family} expects head dim = hidden_size / num_attention_heads, "
                         f"found {info['head_dim']}")
    if family == "llama":
        cfg = {"architectures": ["LlamaForCausalLM"], "attention_bias": False, **common, "mlp_bias": False,
               "model_type": "llama", "pretraining_tp": 1}
        if info["head_dim"] * info["heads"] != info["hidden"]:
            cfg["head_dim"] = info["head_dim"]
        if hp.get("rope_scaling") is not None:
            cfg["rope_scaling"] = dict(hp["rope_scaling"])
        if pad is None:
            cfg.pop("pad_token_id", None)
        gen = {"bos_token_id": bos, "do_sample": True, "eos_token_id": eos, "temperature": 0.6, "top_p": 0.9,
               "transformers_version": "4.46.3"}
    elif family == "qwen2":
        cfg = {"architectures": ["Qwen2ForCausalLM"], **common, "max_window_layers": info["layers"],
               "model_type": "qwen2", "sliding_window": max_pos, "use_sliding_window": False}
        gen = {"bos_token_id": bos, "do_sample": True, "eos_token_id": eos, "pad_token_id": pad,
               "repetition_penalty": 1.05, "temperature": 0.7, "top_k": 20, "top_p": 0.8,
               "transformers_version": "4.46.3"}
    else:  # dream
        cfg = {"architectures": ["DreamModel"],
               "auto_map": {"AutoConfig": "configuration_dream.DreamConfig", "AutoModel": "modeling_dream.DreamModel"},
               **common, "mask_token_id": int(hp["mask_token_id"]), "max_window_layers": info["layers"],
               "model_type": "Dream", "pad_token_id": pad, "sliding_window": None, "use_sliding_window": False}
        gen = {"alg": "origin", "alg_temp": None, "bos_token_id": bos, "eos_token_id": eos, "eps": 0.001,
               "mask_token_id": None, "output_history": False, "pad_token_id": pad,
               "return_dict_in_generate": False, "steps": 512, "temperature": 0.0, "top_k": None, "top_p": None,
               "transformers_version": "4.46.3"}
    if family == "qwen2" and pad is not None:
        cfg["pad_token_id"] = pad
    return dict(sorted(cfg.items())), gen


def _split(names: list[str], sizes: dict, n: int) -> list[list[str]]:
    """Consecutive groups of roughly equal bytes; every shard gets at least one tensor."""
    if n > len(names):
        raise ValueError(f"shards: expected at most {len(names)} (one tensor each), found {n}")
    total = sum(sizes.values()) or 1
    groups: list[list[str]] = [[] for _ in range(n)]
    acc, g = 0, 0
    for j, name in enumerate(names):
        want = max(min(n - 1, acc * n // total), n - (len(names) - j))
        if want > g and groups[g]:
            g += 1  # advance one shard at a time so none stays empty
        groups[g].append(name)
        acc += sizes[name]
    return groups


def save_checkpoint(out_dir: str, family: str, weights: dict, hparams: dict, *, dtype: str = "f32",
                    shards: int = 1, tokenizer_files: dict | None = None, extra_config: dict | None = None,
                    generation_config: bool = True) -> list[str]:
    if family not in FAMILIES:
        raise ValueError(f"family: expected one of {list(FAMILIES)}, found {family!r}")
    if dtype not in _ST_DTYPE:
        raise ValueError(f"dtype: expected one of {list(_ST_DTYPE)}, found {dtype!r}")
    if shards < 1:
        raise ValueError(f"shards: expected >= 1, found {shards}")
    info = describe(weights, hparams)
    state = real_state_dict(family, weights, hparams)
    cfg, gen = make_config(family, info, hparams, dtype)
    if extra_config:
        cfg.update(extra_config)
    os.makedirs(out_dir, exist_ok=True)
    written = []
    _write_json(os.path.join(out_dir, "config.json"), cfg)
    written.append("config.json")
    if gen is not None and generation_config:
        _write_json(os.path.join(out_dir, "generation_config.json"), gen)
        written.append("generation_config.json")
    # The real checkpoints use one or the other layout; remove a stale one so loaders see one truth.
    for stale in os.listdir(out_dir):
        if stale == "model.safetensors.index.json" or (stale.startswith("model") and stale.endswith(".safetensors")):
            os.unlink(os.path.join(out_dir, stale))
    itemsize = 4 if dtype == "f32" else 2
    sizes = {k: int(np.prod(_shape(v))) * itemsize for k, v in state.items()}
    if shards == 1:
        write_safetensors(os.path.join(out_dir, "model.safetensors"), state, dtype)
        written.append("model.safetensors")
    else:
        weight_map = {}
        for s, group in enumerate(_split(list(state), sizes, shards)):
            fname = f"model-{s + 1:05d}-of-{shards:05d}.safetensors"
            write_safetensors(os.path.join(out_dir, fname), {k: state[k] for k in group}, dtype)
            written.append(fname)
            weight_map.update({k: fname for k in group})
        _write_json(os.path.join(out_dir, "model.safetensors.index.json"),
                    {"metadata": {"total_size": sum(sizes.values())}, "weight_map": weight_map})
        written.append("model.safetensors.index.json")
    for fname, src in (tokenizer_files or {}).items():
        dst = os.path.join(out_dir, fname)
        if isinstance(src, dict):
            _write_json(dst, src)
        elif isinstance(src, bytes):
            _atomic_write(dst, [src])
        elif isinstance(src, (str, os.PathLike)):
            if not os.path.isfile(src):
                raise ValueError(f"tokenizer_files[{fname!r}]: expected an existing file, found no file at {src}")
            with open(src, "rb") as f:
                _atomic_write(dst, [f.read()])
        else:
            raise ValueError(f"tokenizer_files[{fname!r}]: expected a path, bytes or dict, found {type(src)}")
        written.append(fname)
    return written


def _selftest() -> None:
    """`/usr/bin/python3 training/hf_formats.py` — round-trip every family / dtype / sharding through the files."""
    rng = np.random.default_rng(0)
    V, D, H, Hkv, F = 40, 16, 4, 2, 24
    d = D // H
    hp = {"num_attention_heads": H, "num_key_value_heads": Hkv, "bos_token_id": 1, "eos_token_id": 2,
          "pad_token_id": 0, "mask_token_id": 3}
    for fam in FAMILIES:
        w = {"embed": rng.normal(size=(V, D)), "final_norm": rng.normal(size=D), "lm_head": rng.normal(size=(V, D))}
        for i in range(2):
            shapes = {"attn_norm": (D,), "q": (H * d, D), "k": (Hkv * d, D), "v": (Hkv * d, D), "o": (D, H * d),
                      "mlp_norm": (D,), "gate": (F, D), "up": (F, D), "down": (D, F)}
            if fam in ("qwen2", "dream"):
                shapes.update({"q_bias": (H * d,), "k_bias": (Hkv * d,), "v_bias": (Hkv * d,)})
            w.update({f"layers.{i}.{k}": rng.normal(size=s) for k, s in shapes.items()})
        for dtype, shards in (("f32", 1), ("bf16", 3), ("f16", 2)):
            with tempfile.TemporaryDirectory() as tmp:
                files = save_checkpoint(tmp, fam, w, hp, dtype=dtype, shards=shards)
                got = {}
                for f in files:
                    if f.endswith(".safetensors"):
                        got.update(read_safetensors(os.path.join(tmp, f))[0])
                want = real_state_dict(fam, w, hp)
                assert list(want) == [k for f in files if f.endswith(".safetensors")
                                      for k in read_safetensors(os.path.join(tmp, f))[0]], (fam, dtype)
                tol = {"f32": 1e-7, "bf16": 2 ** -8, "f16": 2 ** -10}[dtype]
                for k, v in want.items():
                    a = np.asarray(v, dtype=np.float32)
                    assert np.allclose(got[k], a, rtol=tol, atol=tol), (fam, dtype, k)
                if shards > 1:
                    with open(os.path.join(tmp, "model.safetensors.index.json")) as fh:
                        idx = json.load(fh)
                    assert set(idx["weight_map"]) == set(want) and len(set(idx["weight_map"].values())) == shards
    print("hf_formats self-test ok")


if __name__ == "__main__":
    _selftest()

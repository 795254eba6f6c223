"""The GPU anchor: what one denoising step costs in PyTorch on CUDA at LLaDA-8B and Dream-7B shapes
(random bf16 weights made on the device), three ways, with memory:

  plain              one forward, logits only (eager attention; with torch ≥ 2 also the fused
                     `scaled_dot_product_attention` forward, the fastest PyTorch can do without maps)
  output_attentions  one forward keeping every layer's [1, H, T, T] probabilities (Hugging Face eager
                     attention with `output_attentions=True`), reduced to per-layer received vectors
  paper              the paper's extraction: a forward for the logits, then one full forward per layer
                     for that layer's head-mean map (L + 1 forwards)

    python bench/gpu/anchor.py --out anchor.json                      # on the GPU machine (CUDA)
    /usr/bin/python3 bench/gpu/anchor.py --tiny --device cpu --out x   # the same code at a tiny shape, on CPU

Times are medians over --reps after one warm-up (CUDA-synchronised wall time); memory is
`torch.cuda.max_memory_allocated` during the call minus what was allocated before it (the weights),
on CPU the process's peak RSS growth. Writes one JSON file and prints a markdown table.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from torch_model import DREAM_7B, LLADA_8B, EagerMDM, Shape, random_weights  # noqa: E402

TINY = {
    "llada-tiny": Shape(layers=3, width=64, heads=4, kv_heads=4, ffn=96, vocab=128),
    "dream-tiny": Shape(layers=3, width=64, heads=4, kv_heads=2, ffn=96, vocab=128, qkv_bias=True),
}
REAL = {"LLaDA-8B": LLADA_8B, "Dream-7B": DREAM_7B}


class Fused(EagerMDM):
    """The plain forward with torch 2's fused attention (no probabilities exist to be returned)."""

    def _layer(self, i, x, cos, sin, keep):
        if keep is not None:
            return super()._layer(i, x, cos, sin, keep)
        s, w, p = self.s, self.w, f"layers.{i}."
        B, T, D = x.shape
        H, Hkv, d = s.heads, s.kv_heads, s.head_dim
        from torch_model import _rms, _rotate_half

        h = _rms(x, w[p + "attn_norm"], s.eps)
        q = F.linear(h, w[p + "q"], w.get(p + "q_bias")).view(B, T, H, d).transpose(1, 2)
        k = F.linear(h, w[p + "k"], w.get(p + "k_bias")).view(B, T, Hkv, d).transpose(1, 2)
        v = F.linear(h, w[p + "v"], w.get(p + "v_bias")).view(B, T, Hkv, d).transpose(1, 2)
        q = q * cos + _rotate_half(q) * sin
        k = k * cos + _rotate_half(k) * sin
        if Hkv != H:
            k = k.repeat_interleave(H // Hkv, dim=1)
            v = v.repeat_interleave(H // Hkv, dim=1)
        o = F.scaled_dot_product_attention(q, k, v).transpose(1, 2).reshape(B, T, H * d)
        x = x + F.linear(o, w[p + "o"])
        g = _rms(x, w[p + "mlp_norm"], s.eps)
        return x + F.linear(F.silu(F.linear(g, w[p + "gate"])) * F.linear(g, w[p + "up"]), w[p + "down"]), None


def sync(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def peak_rss_bytes() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def measure(f, ids, device: str, reps: int) -> dict:
    """Median ms over `reps` after one warm-up, and the peak memory the call needed above what was held before."""
    f(ids)
    sync(device)
    if device.startswith("cuda"):
        torch.cuda.empty_cache()
        base = torch.cuda.memory_allocated()
        torch.cuda.reset_peak_memory_stats()
    else:
        base = peak_rss_bytes()
    ms = []
    for _ in range(reps):
        t = time.perf_counter()
        out = f(ids)
        sync(device)
        ms.append((time.perf_counter() - t) * 1000)
        del out
    peak = torch.cuda.max_memory_allocated() if device.startswith("cuda") else peak_rss_bytes()
    ms.sort()
    mid = len(ms) // 2
    med = ms[mid] if len(ms) % 2 else (ms[mid - 1] + ms[mid]) / 2
    return {"ms": med, "all_ms": ms, "peak_above_bytes": max(0, peak - base)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--tiny", action="store_true", help="tiny shapes (a CPU smoke test of this script)")
    ap.add_argument("--models", default=None, help="comma-separated subset of the shape names")
    ap.add_argument("--T", default=None, help="comma-separated sequence lengths (default 256,1024; tiny: 16,32)")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--paper-reps", type=int, default=1, help="repetitions of the paper's L + 1 forwards")
    ap.add_argument("--skip-paper-above", type=int, default=4096, help="skip the paper's method above this T")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    shapes = TINY if a.tiny else REAL
    if a.models:
        shapes = {k: v for k, v in shapes.items() if k in a.models.split(",")}
    Ts = [int(t) for t in (a.T or ("16,32" if a.tiny else "256,1024")).split(",")]
    dtype = torch.float32 if a.device == "cpu" else torch.bfloat16
    info = {"torch": torch.__version__, "device": a.device, "dtype": str(dtype).replace("torch.", ""),
            "python": platform.python_version(), "gpu": torch.cuda.get_device_name(0) if a.device.startswith("cuda") else None,
            "cuda": torch.version.cuda, "has_sdpa": hasattr(F, "scaled_dot_product_attention")}
    results = []
    for name, s in shapes.items():
        t0 = time.perf_counter()
        w = random_weights(s, 0, device=a.device, dtype=dtype)
        sync(a.device)
        weight_bytes = sum(t.numel() * t.element_size() for t in w.values())
        build_s = time.perf_counter() - t0
        eager, fused = EagerMDM(s, w), Fused(s, w)
        for T in Ts:
            ids = torch.tensor([[(i * 7919) % (s.vocab - 1) for i in range(T)]], device=a.device)
            row = {"model": name, "shape": s.to_dict(), "T": T, "weight_bytes": weight_bytes, "build_s": build_s,
                   "forward_flops": s.forward_flops(T)}
            row["plain_eager"] = measure(eager.forward, ids, a.device, a.reps)
            if info["has_sdpa"]:
                row["plain_sdpa"] = measure(fused.forward, ids, a.device, a.reps)
            try:
                row["output_attentions"] = measure(lambda x: eager.step_output_attentions(x)[:2], ids, a.device, a.reps)
            except (RuntimeError, MemoryError) as e:  # CUDA out-of-memory is a RuntimeError
                row["output_attentions"] = {"error": f"failed: {str(e).splitlines()[0][:120]}"}
                if a.device.startswith("cuda"):
                    torch.cuda.empty_cache()
            if T <= a.skip_paper_above:
                row["paper"] = measure(eager.step_paper, ids, a.device, a.paper_reps)
            results.append(row)
            print(json.dumps({k: v for k, v in row.items() if k != "shape"}), flush=True)
        del eager, fused, w
        if a.device.startswith("cuda"):
            torch.cuda.empty_cache()
    with open(a.out, "w") as f:
        json.dump({"info": info, "results": results}, f, indent=1)
    print(markdown(info, results))


def markdown(info: dict, results: list) -> str:
    ms = lambda r, k: f"{r[k]['ms']:.1f}" if k in r and "ms" in r[k] else r.get(k, {}).get("error", "—")  # noqa: E731
    gib = lambda r, k: f"{r[k]['peak_above_bytes'] / 2**30:.2f}" if k in r and "ms" in r[k] else "—"  # noqa: E731
    lines = [f"PyTorch {info['torch']} on {info['gpu'] or info['device']} ({info['dtype']}, CUDA {info['cuda']})", "",
             "| model | T | plain eager ms | plain SDPA ms | output_attentions ms | paper ms | plain GiB above weights | "
             "output_attentions GiB above weights | plain eager TFLOP/s |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        tf = r["forward_flops"] / (r["plain_eager"]["ms"] / 1000) / 1e12
        lines.append(f"| {r['model']} | {r['T']} | {ms(r, 'plain_eager')} | {ms(r, 'plain_sdpa')} | "
                     f"{ms(r, 'output_attentions')} | {ms(r, 'paper')} | {gib(r, 'plain_eager')} | "
                     f"{gib(r, 'output_attentions')} | {tf:.1f} |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()

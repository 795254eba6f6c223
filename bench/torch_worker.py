"""PyTorch side of `npm run bench` (bench/run.ts drives it): one process per model and thread count,
answering one JSON request per stdin line with one JSON line, so the driver can interleave its
timings with the ONNX engine's.

    /usr/bin/python3 bench/torch_worker.py MODEL_DIR THREADS      (MODEL_DIR "-": GEMM requests only)

Requests: {"op": "time", "mode": "plain" | "output_attentions" | "paper", "T": 256, "reps": 3}
            → {"ms": [...]}  (each rep one full call, after one untimed warm-up the first time a (mode, T) is seen)
          {"op": "logits", "T": 64} → {"rows": first 4 rows of logits (for the same-weights check)}
          {"op": "gemm", "n": 1024, "reps": 5} → {"gflops": best-of median over shapes}
          {"op": "quit"}
The first line it writes describes the process: torch version, threads, OpenBLAS core type.
OPENBLAS_CORETYPE must be set by the caller (OpenBLAS reads it when the library loads).
"""
from __future__ import annotations

import ctypes
import json
import os
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_model import EagerMDM, load_llada  # noqa: E402


def openblas_corename() -> str | None:
    for lib in ("libopenblas.so.0", "libblas.so.3"):
        try:
            f = ctypes.CDLL(lib).openblas_get_corename
        except (OSError, AttributeError):
            continue
        f.restype = ctypes.c_char_p
        return f().decode()
    return None


def ids_for(T: int, vocab: int) -> torch.Tensor:
    # The same ids as the engine side (bench/run.ts idsFor): (i · 7919) mod (V − 1).
    return torch.tensor([[(i * 7919) % (vocab - 1) for i in range(T)]], dtype=torch.long)


def gemm_gflops(n: int, reps: int) -> float:
    """Median GFLOP/s of an [n, n] · [n, 4n] f32 product (the plain forward's largest shapes are alike)."""
    a, b = torch.randn(n, n), torch.randn(n, 4 * n)
    a @ b
    ts = []
    for _ in range(reps):
        t = time.perf_counter()
        a @ b
        ts.append(time.perf_counter() - t)
    ts.sort()
    return 2.0 * n * n * 4 * n / ts[(len(ts) - 1) // 2] / 1e9


def main() -> None:
    folder, threads = sys.argv[1], int(sys.argv[2])
    torch.set_num_threads(threads)
    # "-": no model (the driver's GEMM-only probe of the OpenBLAS core type).
    shape, weights = load_llada(folder) if folder != "-" else (None, None)
    model = EagerMDM(shape, weights) if shape else None
    print(json.dumps({"torch": torch.__version__, "threads": torch.get_num_threads(),
                      "openblas_corename": openblas_corename(),
                      "openblas_coretype_env": os.environ.get("OPENBLAS_CORETYPE")}), flush=True)
    run = {"plain": model.forward, "output_attentions": model.step_output_attentions, "paper": model.step_paper} if model else {}
    warm: set = set()
    for line in sys.stdin:
        req = json.loads(line)
        op = req["op"]
        if op == "quit":
            break
        if op == "time":
            f, ids = run[req["mode"]], ids_for(req["T"], shape.vocab)
            if (req["mode"], req["T"]) not in warm and not req.get("noWarmup"):
                f(ids)
                warm.add((req["mode"], req["T"]))
            ms = []
            for _ in range(req["reps"]):
                t = time.perf_counter()
                out = f(ids)
                ms.append((time.perf_counter() - t) * 1000)
                del out
            print(json.dumps({"ms": ms}), flush=True)
        elif op == "logits":
            logits = model.forward(ids_for(req["T"], shape.vocab))
            print(json.dumps({"rows": logits[0, :4].tolist()}), flush=True)
        elif op == "gemm":
            print(json.dumps({"gflops": gemm_gflops(req["n"], req["reps"])}), flush=True)
        else:
            print(json.dumps({"error": f"unknown op {op!r}"}), flush=True)


if __name__ == "__main__":
    main()

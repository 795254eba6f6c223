#!/usr/bin/env python3
"""Execute notebooks headless with the floatscope kernel and save the executed copies.

    .venv/bin/python scripts/run-notebooks.py [--output-dir DIR] [--timeout S] NOTEBOOK...

Each notebook runs with its own folder as the kernel's cwd (as in JupyterLab), cell by cell.
tslab sends no `error` message when a cell fails, only stderr text and an error reply, so
nbconvert would just say "rc=1". Here a failure prints the failing cell and its stderr, still
saves the partially executed notebook for inspection, and exits 1.

A notebook none of whose models exists shows the library's "No model available for this notebook"
note (floatscope's `findModels`) in its settings cell; the run stops there, counts as ok (no
figure), and the summary says prominently which notebooks ran without models and how to get them.
"""
import argparse
import os
import sys
import time
from pathlib import Path

# Jupyter's files stay inside the checkout, as with scripts/lib/jupyter-env.sh (which
# scripts/reproduce.sh sources; values already set win). Set before jupyter_client starts a kernel:
# it writes the connection file into the runtime dir.
ROOT = Path(__file__).resolve().parent.parent
_venv_data = str(ROOT / ".venv/share/jupyter")
_path = [p for p in os.environ.get("JUPYTER_PATH", "").split(os.pathsep) if p]
if _venv_data not in _path:
    os.environ["JUPYTER_PATH"] = os.pathsep.join([_venv_data, *_path])
os.environ.setdefault("JUPYTER_PLATFORM_DIRS", "1")
for var, sub in (("JUPYTER_CONFIG_DIR", "jupyter/config"), ("JUPYTER_DATA_DIR", "jupyter/data"),
                 ("JUPYTER_RUNTIME_DIR", "jupyter/runtime"), ("IPYTHONDIR", "ipython")):
    os.environ.setdefault(var, str(ROOT / ".cache" / sub))
    Path(os.environ[var]).mkdir(parents=True, exist_ok=True)

import nbformat  # noqa: E402 (after the environment is set)
from nbclient import NotebookClient  # noqa: E402
from nbclient.exceptions import CellExecutionError, CellTimeoutError

# The marker floatscope's findModels note carries (src/notebook/models.ts NO_MODEL_MARK).
NO_MODEL_MARK = "No model available for this notebook"
HOW_TO_GET_MODELS = (
    "train the tiny models with training/run_all.sh (each is published into models/ when its run ends), "
    "or point FLOATSCOPE_MODELS / FLOATSCOPE_MODEL_NAMES at real checkpoints"
)


def outputs_text(cell, names=("stderr", "stdout")):
    parts = []
    for out in cell.get("outputs", []):
        if out.get("output_type") == "stream" and out.get("name") in names:
            parts.append(out.get("text", ""))
    return "".join(parts)


def shows_no_model(cell) -> bool:
    for out in cell.get("outputs", []):
        data = out.get("data", {})
        text = data.get("text/plain", "")
        if NO_MODEL_MARK in ("".join(text) if isinstance(text, list) else text):
            return True
    return False


def run(path: Path, out_dir: Path, kernel: str, timeout: int) -> tuple[bool, bool]:
    """(ran without errors, stopped because no model was available)."""
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(
        nb,
        kernel_name=kernel,
        timeout=timeout,
        resources={"metadata": {"path": str(path.parent.resolve())}},
    )
    out_dir.mkdir(parents=True, exist_ok=True)
    target = out_dir / path.name
    t0 = time.monotonic()
    ok = True
    no_model = False
    try:
        with client.setup_kernel():
            info = client.wait_for_reply(client.kc.kernel_info())
            nb.metadata["language_info"] = info["content"]["language_info"]
            for index, cell in enumerate(nb.cells):
                if cell.cell_type != "code":
                    continue
                try:
                    client.execute_cell(cell, index, execution_count=client.code_cells_executed + 1)
                except (CellExecutionError, CellTimeoutError) as e:
                    ok = False
                    source = "\n".join("    " + line for line in cell.source.splitlines()[:15])
                    print(f"[notebooks] {path} failed at cell {index}:\n{source}", file=sys.stderr)
                    detail = outputs_text(cell, ("stderr",)) or str(e)
                    print("  --- cell stderr ---\n" + detail.rstrip(), file=sys.stderr)
                    break
                if shows_no_model(cell):
                    # The rest of the notebook needs a model: stop after the note, without error.
                    no_model = True
                    break
    finally:
        nbformat.write(nb, target)
    status = ("ok — NO MODEL, stopped after the note" if no_model else "ok") if ok else "FAILED"
    print(f"[notebooks] {path} -> {target}  {status} in {time.monotonic() - t0:.1f} s")
    return ok, no_model


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("notebooks", nargs="+", type=Path)
    ap.add_argument("--output-dir", type=Path, default=None, help="default: <notebook folder>/_executed")
    ap.add_argument("--kernel", default="floatscope")
    ap.add_argument("--timeout", type=int, default=1800, help="per-cell timeout in seconds")
    args = ap.parse_args()
    missing = [p for p in args.notebooks if not p.is_file()]
    if missing:
        print(f"[notebooks] no such notebook: {', '.join(map(str, missing))}", file=sys.stderr)
        return 2
    # Figure notebooks are independent: run them all, so one failure costs one figure, not the rest.
    failed, without_models = [], []
    for nb_path in args.notebooks:
        out_dir = args.output_dir or nb_path.parent / "_executed"
        ok, no_model = run(nb_path, out_dir, args.kernel, args.timeout)
        if not ok:
            failed.append(str(nb_path))
        if no_model:
            without_models.append(str(nb_path))
    n = len(args.notebooks)
    if len(args.notebooks) > 1 or failed:
        summary = f"[notebooks] {n - len(failed)} of {n} notebooks ran without errors"
        print(summary + (f"; failed: {', '.join(failed)}" if failed else ""))
    if without_models:
        print(f"[notebooks] WARNING: {len(without_models)} notebook(s) ran WITHOUT MODELS (no figure): "
              f"{', '.join(without_models)} — {HOW_TO_GET_MODELS}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

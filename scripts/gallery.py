#!/usr/bin/env python3
"""HTML gallery of executed notebooks, for sharing: one self-contained .html per notebook (nbconvert's
lab template; figures are their static SVG/PNG fallbacks, so nothing needs our widgets) and an
index.html linking them, with CLAIMS.md rendered at the top when it is there.

Names and text are data, never markup: notebook titles and file names go into the index through
escape_html (training/escape.py, the rule of src/display/escape.ts); CLAIMS.md is rendered with raw HTML
escaped and harmful link schemes dropped (mistune's escape=True), and the notebooks' own outputs were
escaped by floatscope when they were made. test/widgets/browser/hostile-names.test.ts opens a gallery built
from hostile names in Chromium.

    .venv/bin/python scripts/gallery.py notebooks/_executed     # → notebooks/_executed/html/
"""
import sys
from pathlib import Path
from urllib.parse import quote

import nbformat
from nbconvert import HTMLExporter

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "training"))
from escape import escape_html  # noqa: E402


def main() -> int:
    src = Path(sys.argv[1] if len(sys.argv) > 1 else "notebooks/_executed")
    out = src / "html"
    out.mkdir(parents=True, exist_ok=True)
    exporter = HTMLExporter(template_name="lab")
    items = []
    for nb_path in sorted(src.glob("[0-9][0-9]-*.ipynb")):
        nb = nbformat.read(nb_path, as_version=4)
        body, _ = exporter.from_notebook_node(nb)
        target = out / (nb_path.stem + ".html")
        target.write_text(body, encoding="utf-8")
        title = next((c.source.splitlines()[0].lstrip("# ").strip() for c in nb.cells if c.cell_type == "markdown" and c.source.strip()), nb_path.stem)
        items.append(f'<li><a href="{escape_html(quote(target.name))}">{escape_html(title)}</a></li>')
    claims = src / "CLAIMS.md"
    claims_html = ""
    if claims.is_file():
        import mistune  # nbconvert's own markdown renderer

        claims_html = mistune.create_markdown(escape=True, plugins=["table"])(claims.read_text(encoding="utf-8"))
    page = ("<!doctype html><meta charset='utf-8'><title>floatscope notebooks</title>"
            "<style>body{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em}"
            "table{border-collapse:collapse;font-size:90%}td,th{border:1px solid #ccc;padding:2px 6px}</style>"
            f"<h1>floatscope: executed notebooks</h1><ul>{''.join(items)}</ul>{claims_html}")
    (out / "index.html").write_text(page, encoding="utf-8")
    print(f"[gallery] {len(items)} notebook(s) → {out}/index.html")
    return 0


if __name__ == "__main__":
    sys.exit(main())

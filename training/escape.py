"""User text is data, never markup: the Python side of src/display/escape.ts (the same rule, kept small).

Model cards (training/make_cards.py, training/real/card.py) and the HTML gallery (scripts/gallery.py) put
names that come from files (model folders, training.json fields, token text, decoder names, notebook file
names) into Markdown or HTML. These functions make the reader see exactly those characters:

    escape_markdown(s)   Markdown inline text (also safe in a GFM table cell)
    code_span(s)         Markdown inline code; code_span(s, table=True) inside a GFM table cell
    escape_html(s)       HTML text and quoted attribute values
"""
from __future__ import annotations

import re

# Backslash-escaped anywhere (CommonMark renders "\x" as "x"): emphasis, code, links (`[` `]`), table
# cells, strikethrough, headings. `(`, `)`, `!` are inert without `[`. "\" and "$" are written as entities
# of "\\" and "\$", which MathJax (it typesets $…$ and \(…\) in the rendered page) shows as "\" and "$".
_MD_ACTIVE = set("`*[]|~#")
# A leading "- ", "+ ", "1. ", "1) ", "--", "==" would start a list, rule or heading.
_LEAD = re.compile(r"^ {0,3}(?:\d{1,9}(?=[.)](?:[ \t]|$))|[-+=](?=[ \t]|$|[-+=]))")
_LINE_BREAKS = {"\u2028", "\u2029", "\u0085"}


def _visible(ch: str) -> str | None:
    """Line breaks and control characters as visible symbols (\\n → ␊), so text cannot end its line."""
    c = ord(ch)
    if ch in _LINE_BREAKS:
        return "\u2424"  # ␤
    if c < 0x20 and ch != "\t":
        return chr(0x2400 + c)  # ␀ … ␟
    if c == 0x7F:
        return "\u2421"  # ␡
    if 0xD800 <= c <= 0xDFFF:
        return "\ufffd"  # a lone surrogate (Python strings can hold one)
    return None


def _word(ch: str) -> bool:
    return ch.isalnum()


def escape_markdown(text: object) -> str:
    """One line of Markdown that shows `text` literally.

    >>> escape_markdown("<script>x</script>")
    '&lt;script&gt;x&lt;/script&gt;'
    >>> escape_markdown("tiny_llada-2")
    'tiny_llada-2'
    """
    s = str(text)
    m = _LEAD.match(s)
    lead_at = -1 if not m else (len(m.group(0)) if m.group(0)[-1].isdigit() else len(m.group(0)) - 1)
    out = []
    for i, ch in enumerate(s):
        if ch == "&":
            out.append("&amp;")
        elif ch == "<":
            out.append("&lt;")
        elif ch == ">":
            out.append("&gt;")
        elif ch == "\\":
            out.append("&#92;&#92;")
        elif ch == "$":
            out.append("&#92;&#36;")
        elif ch in _MD_ACTIVE:
            out.append("\\" + ch)
        elif ch == "_":
            inside = 0 < i < len(s) - 1 and _word(s[i - 1]) and _word(s[i + 1])
            out.append("_" if inside else "\\_")
        elif i == lead_at or (i == 0 and ch == "("):
            out.append("\\" + ch)
        else:
            out.append(_visible(ch) or ch)
    return "".join(out)


def code_span(text: object, table: bool = False) -> str:
    """`text` as Markdown inline code, shown literally (renderers escape `<` in code themselves).

    The fence is longer than any backtick run inside. In a GFM table cell a `|` would still split the cell,
    so `table=True` writes it as `\\|` (GFM shows it as `|` there).

    >>> code_span("a`b")
    '``a`b``'
    """
    body = "".join(_visible(ch) or ch for ch in str(text))
    if table:
        body = body.replace("|", "\\|")
    if body == "":
        return "` `"
    longest = max((len(r) for r in re.findall(r"`+", body)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if re.search(r"^[` ]|[` ]$", body) else ""
    return f"{fence}{pad}{body}{pad}{fence}"


def escape_html(text: object) -> str:
    """HTML text and quoted attribute values: & < > " ' as entities, controls as visible symbols (as escapeHtml)."""
    rep = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;"}
    out = []
    for ch in str(text):
        c = ord(ch)
        if ch in rep:
            out.append(rep[ch])
        elif c < 0x20 and ch not in "\t\n\r":
            out.append(chr(0x2400 + c))  # what XML forbids even escaped, shown as its Control Picture
        elif 0xD800 <= c <= 0xDFFF or c in (0xFFFE, 0xFFFF):
            out.append("\ufffd")
        else:
            out.append(ch)
    return "".join(out)

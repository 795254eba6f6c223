"""QA metrics of the paper (§10; Appendix B): SQuAD normalisation, the lenient substring accuracy, token F1,
and exact match. Plain Python, no torch: the training evaluation (evaluate.py) and the Python oracle for
src/eval/metrics.ts (test/eval/fixtures/make_metrics.py) share this one definition.
"""
from __future__ import annotations

import collections
import re
import string


def normalize(s: str) -> str:
    s = s.lower()
    s = "".join(ch for ch in s if ch not in set(string.punctuation))
    s = re.sub(r"\b(a|an|the)\b", " ", s)
    return " ".join(s.split())


def accuracy(pred: str, gold: str) -> float:
    g = normalize(gold)
    return 1.0 if g and g in normalize(pred) else 0.0


def f1(pred: str, gold: str) -> float:
    p, g = normalize(pred).split(), normalize(gold).split()
    if not p or not g:
        return float(p == g)
    common = sum((collections.Counter(p) & collections.Counter(g)).values())
    if common == 0:
        return 0.0
    P, R = common / len(p), common / len(g)
    return 2 * P * R / (P + R)


def exact(pred: str, gold: str) -> float:
    return float(normalize(pred) == normalize(gold))

"""QA metrics of the paper (§10; Appendix B): SQuAD normalisation, the lenient substring accuracy, token F1,
and exact match. Plain Python, no torch: the training evaluation (evaluate.py) and the Python oracle for
src/qa/metrics.ts (test/eval/fixtures/make_metrics.py) share this one definition.
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


# -- long answers: fact recall and precision ---------------------------------------------------------------
#
# A long answer (training/world.py, World.long_example) restates several facts about one person. Matching
# rule, shared with src/qa/metrics.ts (`factScores`) and pinned by test/training/long-answer-vectors.json:
#   1. The prediction is cut into claims: first at each of the characters . , ; : ! ? and newline; each
#      piece is normalised (`normalize` above) and cut again at every whole token "and"; empty claims are
#      dropped. ("X was born in 1995 and is a carpenter ." → "x was born in 1995", "is carpenter".)
#   2. A claim states a gold fact when it contains, as whole-token runs, the fact's normalised object AND
#      every fixed part of one of the fact's two statement templates (the text around {s} and {v},
#      normalised, empty parts dropped: "The favourite colour of {s} is {v} ." → "favourite colour of",
#      "is"; "{s} is a {v} ." → "is"). The subject's name is not required: the question names it, and a
#      misspelt name should not hide a right fact.
#   3. Fact recall = gold facts stated by at least one claim / gold facts. Fact precision = claims that state
#      a gold fact no earlier claim stated / claims (a repeated fact counts once, so repetition lowers
#      precision; a claim about a distractor's value, or with the wrong relation, states no gold fact).
#      No claims: precision 0. F1 = harmonic mean (0 when both are 0). `complete` = recall 1 and precision 1.

_CLAIM_CUT = re.compile(r"[.,;:!?\n]")


def claims(pred: str) -> list[str]:
    out = []
    for piece in _CLAIM_CUT.split(pred):
        run: list[str] = []
        for t in normalize(piece).split() + ["and"]:
            if t == "and":
                if run:
                    out.append(" ".join(run))
                run = []
            else:
                run.append(t)
    return out


def template_parts(template: str) -> list[str]:
    return [p for p in (normalize(x) for x in re.split(r"\{s\}|\{v\}", template)) if p]


def states(claim: str, fact: dict) -> bool:
    c = f" {claim} "
    obj = normalize(fact["object"])
    if not obj or f" {obj} " not in c:
        return False
    return any(all(f" {p} " in c for p in template_parts(t)) for t in fact["templates"])


def fact_scores(pred: str, facts: list[dict]) -> dict:
    """{recall, precision, f1, complete, claims, stated} for one prediction against a record's `facts`
    ([{object, templates, …}]); `stated` lists the indices of the gold facts recalled."""
    cs = claims(pred)
    seen: set[int] = set()
    supported = 0
    for c in cs:
        hit = {i for i, f in enumerate(facts) if states(c, f)}
        if hit - seen:
            supported += 1
        seen |= hit
    r = len(seen) / len(facts) if facts else 0.0
    p = supported / len(cs) if cs else 0.0
    f = 2 * p * r / (p + r) if p + r > 0 else 0.0
    return {"recall": r, "precision": p, "f1": f, "complete": float(r == 1.0 and p == 1.0),
            "claims": len(cs), "stated": sorted(seen)}

"""A seeded synthetic "world" for the embedded tiny models.

Fictional people with ten attributes each, short passages that state facts about them, questions whose
short answer is copied from a passage, and retrieval-style examples with the gold passage among k
distractors at any position. People are split into train / val / test, so questions about test people
can only be answered by reading the passage (closed-book must fail).

Every word a model can see (names, values, template words) comes from fixed pools that also occur in
training text, so no answer word is untrained.

    /usr/bin/python3 training/world.py --out DIR [--seed 1234] [--n-eval 300]

writes DIR/world.json (seed, sizes), DIR/split.json.gz (the people of each split), DIR/eval-heldout.jsonl.gz
(test people, each with 9 distractors), DIR/eval-heldout-long.jsonl.gz (long-answer questions about test
people: the gold passages, then 4 distractors; see World.long_example) and optionally DIR/val.jsonl.gz and DIR/sample-train.jsonl, in the
Lost-in-the-Middle
schema: {question, answers, ctxs: [{title, text, hasanswer, isgold}], ...}. The first ctx is the gold
passage; the others are distractors (the harness chooses how many and where the gold goes).
Training code draws its examples from `World` directly (same code, infinite stream, seeded per step).
"""
from __future__ import annotations

import argparse
import gzip
import json
import os
import random

WORLD_VERSION = 1
DEFAULT_SEED = 1234

CONS = list("bdfgklmnprstvz")
VOWELS = list("aeiou")

PROFESSIONS = ("teacher baker farmer doctor painter sailor pilot writer singer dancer lawyer nurse "
               "builder tailor potter fisher hunter miner weaver smith judge chemist banker gardener "
               "carpenter").split()
COLOURS = "red blue green yellow purple orange black white grey pink brown silver".split()
ANIMALS = ("cat dog horse rabbit parrot goat turtle hamster donkey pony ferret owl goose lizard snake "
           "frog duck sheep pig mouse").split()
INSTRUMENTS = ("piano violin flute guitar drum harp cello trumpet oboe organ banjo lute clarinet "
               "trombone accordion").split()
YEARS = [str(y) for y in range(1900, 2000)]

# relation -> (value kind, two statement templates, two question templates)
RELATIONS: dict[str, tuple[str, tuple[str, str], tuple[str, str]]] = {
    "born_in": ("city", ("{s} was born in {v} .", "{v} is the birthplace of {s} ."),
                ("Where was {s} born ?", "In which city was {s} born ?")),
    "lives_in": ("city", ("{s} lives in {v} .", "{s} has a home in {v} ."),
                 ("Where does {s} live ?", "In which city does {s} live ?")),
    "works_for": ("company", ("{s} works for {v} .", "{s} is employed by {v} ."),
                  ("Which company does {s} work for ?", "Who employs {s} ?")),
    "profession": ("profession", ("{s} is a {v} .", "{s} works as a {v} ."),
                   ("What is the job of {s} ?", "What does {s} do for a living ?")),
    "birth_year": ("year", ("{s} was born in {v} .", "{s} came into the world in {v} ."),
                   ("When was {s} born ?", "In which year was {s} born ?")),
    "nationality": ("country", ("{s} is a citizen of {v} .", "{s} holds a passport from {v} ."),
                    ("Which country is {s} a citizen of ?", "What is the nationality of {s} ?")),
    "colour": ("colour", ("The favourite colour of {s} is {v} .", "{s} likes the colour {v} ."),
               ("What is the favourite colour of {s} ?", "Which colour does {s} like ?")),
    "pet": ("animal", ("{s} owns a {v} .", "{s} has a pet {v} ."),
            ("What pet does {s} own ?", "Which animal does {s} keep ?")),
    "instrument": ("instrument", ("{s} plays the {v} .", "{s} is learning the {v} ."),
                   ("Which instrument does {s} play ?", "What does {s} play ?")),
    "friend": ("person", ("{s} is a friend of {v} .", "{s} often visits {v} ."),
               ("Who is a friend of {s} ?", "Whom does {s} often visit ?")),
}
REL_NAMES = list(RELATIONS)

# The long-answer task (real-base models only; the tiny models' word-level vocabulary does not hold these
# question words): "what do the passages say about X?", answered by restating every fact about X that the
# gold passages state, one canonical sentence per fact (the relation's first statement template, in the
# order the facts appear in the prompt). 3–6 facts are drawn; the last is dropped while the answer is
# longer than LONG_MAX_CHARS, never below LONG_MIN_FACTS. Why 150 characters: the answer plus one
# end-of-turn token must fit the real-base decoders' 64-slot canvas; at 150 characters the longest answer
# in 5,000 draws was 63 SmolLM2 tokens (median 43; at 160 characters 24 of 5,000 were longer than 63).
# So in practice 3–5 facts (6 never fit: six full sentences average ≈ 66 tokens).
LONG_QUESTIONS = ("What do the passages say about {s} ?", "What do we learn about {s} ?")
LONG_MIN_FACTS, LONG_MAX_FACTS, LONG_MAX_CHARS = 3, 6, 150
LONG_MAX_GOLD = 3


def _syllable_words(rng: random.Random, n: int, taken: set, lo: int, hi: int) -> list[str]:
    out = []
    while len(out) < n:
        w = "".join(rng.choice(CONS) + rng.choice(VOWELS) for _ in range(rng.randint(lo, hi)))
        if rng.random() < 0.3:
            w += rng.choice("nrs")
        w = w.capitalize()
        if w not in taken:
            taken.add(w)
            out.append(w)
    return out


class World:
    """All entities and facts, derived from one seed. Pure function of (seed, sizes)."""

    def __init__(self, seed: int = DEFAULT_SEED, n_people: int = 4000, n_val: int = 300, n_test: int = 400):
        self.seed = seed
        rng = random.Random(seed)
        taken: set = set()
        self.first_names = _syllable_words(rng, 120, taken, 2, 2)
        self.surnames = _syllable_words(rng, 160, taken, 2, 3)
        self.cities = _syllable_words(rng, 120, taken, 2, 3)
        self.countries = _syllable_words(rng, 30, taken, 2, 3)
        self.companies = _syllable_words(rng, 80, taken, 3, 3)
        pairs = set()
        people = []
        while len(people) < n_people:
            p = (rng.choice(self.first_names), rng.choice(self.surnames))
            if p not in pairs:
                pairs.add(p)
                people.append(" ".join(p))
        self.people = people
        pools = {"city": self.cities, "country": self.countries, "company": self.companies,
                 "profession": PROFESSIONS, "year": YEARS, "colour": COLOURS, "animal": ANIMALS,
                 "instrument": INSTRUMENTS}
        self._pools = pools
        self.facts: dict[str, dict[str, str]] = {}
        for name in people:
            f = {}
            for rel, (kind, _, _) in RELATIONS.items():
                if kind == "person":
                    v = name
                    while v == name:
                        v = rng.choice(people)
                else:
                    v = rng.choice(pools[kind])
                f[rel] = v
            self.facts[name] = f
        order = list(people)
        rng.shuffle(order)
        self.test = order[:n_test]
        self.val = order[n_test:n_test + n_val]
        self.train = order[n_test + n_val:]
        self.split = {"train": self.train, "val": self.val, "test": self.test}
        self.held_out = set(self.val) | set(self.test)

    # -- fresh people (training only) -------------------------------------------------------------
    def fresh_people(self, rng: random.Random, n: int) -> tuple[list[str], dict[str, dict[str, str]]]:
        """n new people for one training example: names drawn from the name pools (never a validation or
        test person) and attributes drawn anew. Why: with fixed facts a 1 M-parameter model spends its
        capacity memorising the training people's attributes and never learns to read; when the facts
        change with every example, reading the passage is the only way to answer. The held-out people keep
        their fixed facts, so closed-book answers about them can only be guesses."""
        held = self.held_out
        names: list[str] = []
        while len(names) < n:
            nm = f"{rng.choice(self.first_names)} {rng.choice(self.surnames)}"
            if nm not in held and nm not in names:
                names.append(nm)
        facts = {}
        for nm in names:
            f = {}
            for rel, (kind, _, _) in RELATIONS.items():
                if kind == "person":
                    v = nm
                    while v == nm or v in held:
                        v = f"{rng.choice(self.first_names)} {rng.choice(self.surnames)}"
                else:
                    v = rng.choice(self._pools[kind])
                f[rel] = v
            facts[nm] = f
        return names, facts

    # -- text ------------------------------------------------------------------------------------
    def statement(self, rng: random.Random, name: str, rel: str, facts: dict | None = None) -> str:
        return rng.choice(RELATIONS[rel][1]).format(s=name, v=(facts or self.facts)[name][rel])

    def question(self, rng: random.Random, name: str, rel: str) -> str:
        return rng.choice(RELATIONS[rel][2]).format(s=name)

    def passage(self, rng: random.Random, name: str, must: str | None, n_facts: int,
                facts: dict | None = None) -> dict:
        """One passage about `name` stating `n_facts` facts (including `must` if given), random order."""
        rels = [r for r in REL_NAMES if r != must]
        rng.shuffle(rels)
        chosen = ([must] if must else []) + rels[: n_facts - (1 if must else 0)]
        rng.shuffle(chosen)
        return {"title": name, "text": " ".join(self.statement(rng, name, r, facts) for r in chosen), "rels": chosen}

    def qa_example(self, rng: random.Random, split: str, k: int, *, gold_pos: int | None = None,
                   name: str | None = None, fresh: bool = False) -> dict:
        """A question about a person of `split`, the gold passage among k distractors (people of the same
        split). Half of the distractors (on average) state the asked relation too, so the answer's type
        alone does not identify it. With `fresh`, the subject and distractors are new people with new
        attributes (see fresh_people). Returns the Lost-in-the-Middle record."""
        facts = self.facts
        pool = self.split[split]
        if fresh:
            pool, facts = self.fresh_people(rng, k + 1)
            name = pool[0]
        name = name or rng.choice(pool)
        rel = rng.choice(REL_NAMES)
        answer = facts[name][rel]
        gold = self.passage(rng, name, rel, 2, facts)
        ctxs = []
        others: list[str] = []  # a list, not a set: set order depends on PYTHONHASHSEED
        while len(others) < k:
            o = rng.choice(pool)
            if o != name and o not in others:
                others.append(o)
        for o in others:
            d = self.passage(rng, o, rel if rng.random() < 0.5 else None, rng.randint(1, 2), facts)
            ctxs.append(d)
        pos = rng.randint(0, k) if gold_pos is None else gold_pos
        ctxs.insert(pos, gold)
        rec = {"question": self.question(rng, name, rel), "answers": [answer],
               "ctxs": [{"title": c["title"], "text": c["text"],
                         "hasanswer": _has_answer(c["text"], answer), "isgold": c is gold} for c in ctxs],
               "subject": name, "relation": rel, "gold_index": pos}
        return rec

    def long_example(self, rng: random.Random, split: str, k: int, *, name: str | None = None,
                     fresh: bool = False, gold_first: bool = False) -> dict:
        """A long-answer question about one person of `split`: 3–6 of their facts (see LONG_MAX_CHARS),
        spread over 1–3 gold passages (each states only facts about the subject, ≥ 1 each), among k
        distractor passages about other people of the split (1–3 facts each; about half of them state a
        relation the subject's answer also has, so relation words alone do not pick the gold passages; a
        distractor never states a fact whose value is the subject). Gold passages keep their relative order;
        with `gold_first` they come first (held-out file), otherwise each takes a random place.

        Record: the Lost-in-the-Middle fields (question, answers = [the reference answer], ctxs in prompt
        order with isgold / hasanswer) plus `kind` "long", `subject`, `gold_count`, and `facts` in answer
        order: [{relation, object, ctx (index in ctxs of the passage stating it), statement (its sentence
        as written there), templates (the relation's two statement templates, for the scorer)}]."""
        facts = self.facts
        pool = self.split[split]
        if fresh:
            pool, facts = self.fresh_people(rng, k + 1)
            name = pool[0]
        name = name or rng.choice(pool)
        rels = rng.sample(REL_NAMES, rng.randint(LONG_MIN_FACTS, LONG_MAX_FACTS))
        while len(rels) > LONG_MIN_FACTS and len(_long_answer(name, rels, facts)) > LONG_MAX_CHARS:
            rels.pop()
        n_gold = rng.randint(1, min(LONG_MAX_GOLD, len(rels)))
        cuts = sorted(rng.sample(range(1, len(rels)), n_gold - 1))  # contiguous groups, each non-empty
        groups = [rels[a:b] for a, b in zip([0] + cuts, cuts + [len(rels)])]
        golds = []
        for g in groups:
            sents = [(r, self.statement(rng, name, r, facts)) for r in g]
            golds.append({"title": name, "text": " ".join(t for _, t in sents), "sents": sents})
        others: list[str] = []  # a list, not a set: set order depends on PYTHONHASHSEED
        while len(others) < k:
            o = rng.choice(pool)
            if o != name and o not in others:
                others.append(o)
        ctxs = []
        for o in others:
            must = rng.choice(rels) if rng.random() < 0.5 else None
            if must and facts[o][must] == name:
                must = None
            cand = [r for r in REL_NAMES if r != must and facts[o][r] != name]
            rng.shuffle(cand)
            n = rng.randint(1, 3)
            chosen = ([must] if must else []) + cand[: n - (1 if must else 0)]
            rng.shuffle(chosen)
            ctxs.append({"title": o, "text": " ".join(self.statement(rng, o, r, facts) for r in chosen)})
        if gold_first:
            ctxs = golds + ctxs
        else:  # each gold at a random place, the golds in their order
            slots = sorted(rng.sample(range(k + n_gold), n_gold))
            it = iter(ctxs)
            ctxs = [golds[slots.index(i)] if i in slots else next(it) for i in range(k + n_gold)]
        fact_list = []
        for i, c in enumerate(ctxs):
            for r, sent in c.get("sents", []):
                fact_list.append({"relation": r, "object": facts[name][r], "ctx": i, "statement": sent,
                                  "templates": list(RELATIONS[r][1])})
        objects = [f["object"] for f in fact_list]
        return {"question": rng.choice(LONG_QUESTIONS).format(s=name),
                "answers": [_long_answer(name, [f["relation"] for f in fact_list], facts)],
                "ctxs": [{"title": c["title"], "text": c["text"],
                          "hasanswer": any(_has_answer(c["text"], v) for v in objects), "isgold": "sents" in c}
                         for c in ctxs],
                "kind": "long", "subject": name, "gold_count": n_gold, "facts": fact_list}

    def lm_document(self, rng: random.Random, split: str = "train", n_people: int | None = None,
                    fresh: bool = False, p_same: float = 0.0) -> str:
        """Plain text for language modelling: passages about 2–4 people, then some of the same facts
        restated, so that names and values recur inside one sequence (the repetition from which a model
        can learn to copy). A restatement uses the other template, or with probability `p_same` repeats
        the sentence word for word (the plainest copy signal: an induction pattern)."""
        n = n_people or rng.randint(2, 4)
        facts = self.facts
        if fresh:
            names, facts = self.fresh_people(rng, n)
        else:
            names = rng.sample(self.split[split], n)
        sents, stated = [], []
        for nm in names:
            rels = rng.sample(REL_NAMES, rng.randint(2, 3))
            for r in rels:
                i = rng.randint(0, 1)
                sents.append(RELATIONS[r][1][i].format(s=nm, v=facts[nm][r]))
                stated.append((nm, r, i))
        rng.shuffle(stated)
        for nm, r, i in stated[: rng.randint(2, len(stated))]:
            j = i if rng.random() < p_same else 1 - i
            sents.append(RELATIONS[r][1][j].format(s=nm, v=facts[nm][r]))
        return " ".join(sents)

    # -- vocabulary ------------------------------------------------------------------------------
    def words(self) -> list[str]:
        """Every word the world can produce, in a fixed order (names, values, template words)."""
        seen: dict[str, None] = {}
        for pool in (self.first_names, self.surnames, self.cities, self.countries, self.companies,
                     PROFESSIONS, COLOURS, ANIMALS, INSTRUMENTS, YEARS):
            for w in pool:
                seen.setdefault(w, None)
        for _, stm, qs in RELATIONS.values():
            for t in (*stm, *qs):
                for w in t.replace("{s}", " ").replace("{v}", " ").split():
                    seen.setdefault(w, None)
        return list(seen)

    def describe(self) -> dict:
        return {"world_version": WORLD_VERSION, "seed": self.seed, "people": len(self.people),
                "split_sizes": {k: len(v) for k, v in self.split.items()},
                "pools": {"first_names": len(self.first_names), "surnames": len(self.surnames),
                          "cities": len(self.cities), "countries": len(self.countries),
                          "companies": len(self.companies), "professions": len(PROFESSIONS),
                          "colours": len(COLOURS), "animals": len(ANIMALS), "instruments": len(INSTRUMENTS),
                          "years": len(YEARS)},
                "relations": {r: v[0] for r, v in RELATIONS.items()}}


def _has_answer(text: str, answer: str) -> bool:
    return f" {answer} " in f" {text} "


def _long_answer(name: str, rels: list[str], facts: dict) -> str:
    """The reference long answer: one sentence per fact, the relation's first statement template."""
    return " ".join(RELATIONS[r][1][0].format(s=name, v=facts[name][r]) for r in rels)


def long_eval_records(world: World, split: str, n: int, seed: int, n_distractors: int = 4) -> list[dict]:
    """n long-answer questions about distinct people of `split`, the gold passages first (ctxs[:gold_count])
    and then n_distractors distractors; ids `<split>-long-0000`. Seeded apart from eval_records, so the
    short held-out file is unchanged by this task's existence."""
    rng = random.Random(f"eval-long:{split}:{seed}")
    out = []
    people = list(world.split[split])
    rng.shuffle(people)
    for i in range(n):
        sub = random.Random(f"eval-long:{split}:{seed}:{i}")
        rec = world.long_example(sub, split, n_distractors, name=people[i % len(people)], gold_first=True)
        rec["id"] = f"{split}-long-{i:04d}"
        out.append(rec)
    return out


def eval_records(world: World, split: str, n: int, seed: int, n_distractors: int = 9) -> list[dict]:
    """n questions about distinct people of `split`; ctxs[0] is the gold passage, ctxs[1:] distractors."""
    rng = random.Random(f"eval:{split}:{seed}")
    out = []
    people = list(world.split[split])
    rng.shuffle(people)
    for i in range(n):
        name = people[i % len(people)]
        sub = random.Random(f"eval:{split}:{seed}:{i}")
        rec = world.qa_example(sub, split, n_distractors, gold_pos=0, name=name)
        rec["id"] = f"{split}-{i:04d}"
        out.append(rec)
    return out


def _write_bytes(path: str, data: bytes) -> None:
    """Atomic write; .gz files get gzip with mtime 0 so that regenerating gives identical bytes."""
    if path.endswith(".gz"):
        data = gzip.compress(data, mtime=0)
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


def write_jsonl(path: str, records: list[dict]) -> None:
    _write_bytes(path, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records).encode("utf-8"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--seed", type=int, default=DEFAULT_SEED)
    ap.add_argument("--n-eval", type=int, default=300)
    ap.add_argument("--n-long", type=int, default=200, help="long-answer held-out questions (eval-heldout-long.jsonl.gz)")
    ap.add_argument("--n-val", type=int, default=0, help="also write val.jsonl.gz (validation people)")
    ap.add_argument("--samples", type=int, default=0, help="also write sample-train.jsonl with N training examples")
    a = ap.parse_args()
    w = World(a.seed)
    os.makedirs(a.out, exist_ok=True)
    write_jsonl(os.path.join(a.out, "eval-heldout.jsonl.gz"), eval_records(w, "test", a.n_eval, a.seed))
    if a.n_long:
        write_jsonl(os.path.join(a.out, "eval-heldout-long.jsonl.gz"), long_eval_records(w, "test", a.n_long, a.seed))
    if a.n_val:
        write_jsonl(os.path.join(a.out, "val.jsonl.gz"), eval_records(w, "val", a.n_val, a.seed))
    if a.samples:
        rng = random.Random(a.seed)
        write_jsonl(os.path.join(a.out, "sample-train.jsonl"),
                    [w.qa_example(rng, "train", rng.randint(0, 9)) for _ in range(a.samples)])
    _write_bytes(os.path.join(a.out, "split.json.gz"), json.dumps(w.split).encode("utf-8"))
    with open(os.path.join(a.out, "world.json"), "w") as f:
        json.dump(w.describe(), f, indent=2)
        f.write("\n")
    print(json.dumps(w.describe()["split_sizes"]))


if __name__ == "__main__":
    main()

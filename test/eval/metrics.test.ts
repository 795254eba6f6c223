import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import {
  ASCII_PUNCTUATION,
  exactMatch,
  extractAnswer,
  normalizeAnswer,
  pySplit,
  scoreAnswer,
  substringAccuracy,
  tokenF1,
} from "../../src/qa/metrics.js";

const oracle = JSON.parse(fs.readFileSync(path.join(__dirname, "fixtures", "metrics-python.json"), "utf8")) as {
  normalize: Record<string, string>;
  pairs: { pred: string; gold: string; acc: number; f1: number; em: number }[];
};

describe("normalizeAnswer (hand-worked)", () => {
  it("lowercases, strips ASCII punctuation, removes whole-word articles, collapses whitespace", () => {
    expect(normalizeAnswer("The  Eiffel Tower!")).toBe("eiffel tower");
    expect(normalizeAnswer("Paris, France.")).toBe("paris france");
    // "anthem" and "theatre" contain article letters but are not whole words.
    expect(normalizeAnswer("the anthem of the theatre")).toBe("anthem of theatre");
    // punctuation goes BEFORE article removal: "a-ha" → "aha" (kept), "l'a" → "la".
    expect(normalizeAnswer("a-ha")).toBe("aha");
    expect(normalizeAnswer("An")).toBe("");
    expect(normalizeAnswer("")).toBe("");
  });
  it("has the 32 characters of Python's string.punctuation", () => {
    expect(ASCII_PUNCTUATION.length).toBe(32);
    expect(normalizeAnswer("«x» — y")).toBe("«x» — y"); // non-ASCII punctuation stays, as in Python
  });
  it("uses Python word boundaries and whitespace, not JS ones", () => {
    expect(normalizeAnswer("éthe")).toBe("éthe"); // JS \b would remove "the" here
    expect(pySplit("a\x1cb\u200bc\ufeffd")).toEqual(["a", "b\u200bc\ufeffd"]);
  });
});

describe("metrics (hand-worked)", () => {
  it("substring accuracy is lenient and character-level", () => {
    expect(substringAccuracy("It was completed in 1889.", "1889")).toBe(1);
    expect(substringAccuracy("1889", "1")).toBe(1); // the documented pitfall: not token-bounded
    expect(substringAccuracy("anything at all", "a")).toBe(0); // gold "a" normalises to "" → never matches
    expect(substringAccuracy("", "")).toBe(0);
    expect(substringAccuracy("Paris", "Paris, France")).toBe(0);
  });
  it("token F1", () => {
    // pred tokens [cat, cat, dog], gold [cat, dog, dog]: common = 1 cat + 1 dog = 2; P = R = 2/3 → F1 = 2/3.
    expect(tokenF1("cat cat dog", "cat dog dog")).toBeCloseTo(2 / 3, 12);
    // pred [paris], gold [paris, france]: P = 1, R = 1/2 → F1 = 2/3.
    expect(tokenF1("Paris", "Paris, France")).toBeCloseTo(2 / 3, 12);
    expect(tokenF1("the", "a")).toBe(1); // both normalise to empty
    expect(tokenF1("x", "the")).toBe(0);
    expect(tokenF1("red", "blue")).toBe(0);
  });
  it("exact match after normalisation", () => {
    expect(exactMatch("The Green.", "green")).toBe(1);
    expect(exactMatch("green one", "green")).toBe(0);
  });
  it("scoreAnswer takes each metric's max over golds independently; no gold → 0", () => {
    const s = scoreAnswer("Paris is lovely", ["Paris, France", "paris"]);
    expect(s.accuracy).toBe(1);
    expect(s.exactMatch).toBe(0);
    expect(s.f1).toBeCloseTo(0.5, 12); // vs "paris": P = 1/3, R = 1 → 0.5
    expect(scoreAnswer("x", [])).toEqual({ accuracy: 0, f1: 0, exactMatch: 0 });
    expect(scoreAnswer("x", ["  ", 3, null])).toEqual({ accuracy: 0, f1: 0, exactMatch: 0 });
  });
  it("answer extraction", () => {
    expect(extractAnswer("\n  Paris\nbecause …", "first-line")).toBe("Paris");
    expect(extractAnswer("Paris\r\nx", "first-line")).toBe("Paris");
    expect(extractAnswer(" Paris \nx", "none")).toBe(" Paris \nx");
  });
});

describe("metrics agree with a Python implementation of the definitions", () => {
  it("normalize", () => {
    for (const [s, want] of Object.entries(oracle.normalize)) expect(normalizeAnswer(s), JSON.stringify(s)).toBe(want);
  });
  it(`acc / F1 / EM on ${oracle.pairs.length} pairs`, () => {
    for (const p of oracle.pairs) {
      const label = JSON.stringify([p.pred, p.gold]);
      expect(substringAccuracy(p.pred, p.gold), label).toBe(p.acc);
      expect(tokenF1(p.pred, p.gold), label).toBeCloseTo(p.f1, 12);
      expect(exactMatch(p.pred, p.gold), label).toBe(p.em);
    }
  });
});

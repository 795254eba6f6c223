import { describe, expect, it } from "vitest";
import { factSpans, placeClaims, type RecordFact } from "../../src/qa/fact-spans.js";
import { splitClaims } from "../../src/qa/metrics.js";

/** Word tokens with their char spans (a whitespace tokenizer: the spans are easy to count by hand). */
function words(text: string, base = 0): [number, number][] {
  const out: [number, number][] = [];
  for (const m of text.matchAll(/\S+/g)) out.push([base + m.index!, base + m.index! + m[0].length]);
  return out;
}

// Word indices of the prompt, counted by hand:
//  0 P1:  1 Sina 2 Nipu 3 was 4 born 5 in 6 1995 7 .  8 Sina 9 Nipu 10 is 11 a 12 carpenter 13 .
// 14 P2: 15 Kifa 16 Zifi 17 likes 18 the 19 colour 20 red 21 .  22 Q: 23 about 24 Sina 25 Nipu 26 ? 27 A:
const DOC1 = "P1: Sina Nipu was born in 1995 . Sina Nipu is a carpenter .";
const DOC2 = "P2: Kifa Zifi likes the colour red .";
const TEXT = `${DOC1} ${DOC2} Q: about Sina Nipu ? A:`;
const PASSAGES = ["Kifa Zifi likes the colour red .", "Sina Nipu was born in 1995 . Sina Nipu is a carpenter .", "Ruvo Sil is a pilot ."];
const fact = (relation: string, ctx: number, statement: string, object: string, templates: string[]): RecordFact => ({
  relation,
  ctx,
  statement,
  object,
  templates,
});
const FACTS: RecordFact[] = [
  fact("birth_year", 1, "Sina Nipu was born in 1995 .", "1995", ["{s} was born in {v} .", "{s} came into the world in {v} ."]),
  fact("profession", 1, "Sina Nipu is a carpenter .", "carpenter", ["{s} is a {v} .", "{s} works as a {v} ."]),
  fact("home", 2, "Ruvo Sil is a pilot .", "pilot", ["{s} is a {v} ."]),
  fact("colour", 1, "Sina Nipu likes grey .", "grey", ["{s} likes {v} ."]),
];
// Generated tokens (offsets into TEXT + COMPLETION), counted by hand:
// " Sina" 0-5 " Nipu" 5-10 " was" 10-14 " born" 14-19 " in" 19-22 " 1995" 22-27 "," 27-28 " and" 28-32
// " is" 32-35 " a" 35-37 " pilot" 37-43 "." 43-44, then an end-of-turn token with an empty span.
const COMPLETION = " Sina Nipu was born in 1995, and is a pilot.";
const GEN: [number, number][] = [
  [0, 5],
  [5, 10],
  [10, 14],
  [14, 19],
  [19, 22],
  [22, 27],
  [27, 28],
  [28, 32],
  [32, 35],
  [35, 37],
  [37, 43],
  [43, 44],
  [44, 44],
];

function source() {
  const prompt = words(TEXT);
  const L = TEXT.length;
  return {
    prompt: {
      text: TEXT,
      promptLength: prompt.length,
      regions: [
        { name: "doc 1", chars: [0, DOC1.length] as [number, number] },
        { name: "doc 2", chars: [DOC1.length + 1, DOC1.length + 1 + DOC2.length] as [number, number] },
        { name: "question", chars: [TEXT.indexOf("Q:"), L] as [number, number] },
      ],
    },
    offsets: [...prompt, ...GEN.map(([a, b]) => [L + a, L + b] as [number, number])],
    completion: COMPLETION,
  };
}

describe("placeClaims", () => {
  it("cuts claims where the fact scorer does, with the answer text each came from", () => {
    const text = "born in 1995 and a pilot.";
    expect(placeClaims(text)).toEqual([
      { claim: "born in 1995", chars: [0, 12] },
      { claim: "pilot", chars: [19, 24] },
    ]);
    // Offsets shift every range; articles and "and" never start or end one.
    expect(placeClaims("The end; AND the rest", 100)).toEqual([
      { claim: "end", chars: [104, 107] },
      { claim: "rest", chars: [117, 121] },
    ]);
  });

  it("gives splitClaims' claims on every string (the scorer is the reference)", () => {
    const cases = [
      "Sina Nipu was born in 1995 . Sina Nipu is a carpenter .",
      "a, an; the: and! and? x\ny",
      "Nipu's co-op (1995)... and, and and so on",
      "  \t\u3000 leading\u2028separators\x1cand more ",
      "A carpenter and a pilot and the colour grey",
      "",
      "İstanbul AND ÉCOLE — the end.",
    ];
    for (const c of cases)
      expect(
        placeClaims(c).map((p) => p.claim),
        JSON.stringify(c),
      ).toEqual(splitClaims(c));
  });
});

describe("factSpans", () => {
  const { spans, missing } = factSpans(source(), PASSAGES, FACTS);

  it("puts each fact's key span on its statement, in whichever prompt passage holds its context", () => {
    // birth_year: words 1..7 ("Sina … 1995 ."), profession: words 8..13, both in doc 1 although ctx = 1.
    expect(spans.map((s) => [s.factId, s.keySpan])).toEqual([
      ["0:birth_year", [1, 8]],
      ["1:profession", [8, 14]],
    ]);
  });

  it("gives a fact the generated tokens of the claims that state it, and none to a fact never stated", () => {
    // promptLength 28: " Sina"…" 1995" are positions 28..33; "," (34) lies outside the claim; " is a pilot"
    // states no fact of this person, so the profession fact (carpenter) gets no answer tokens.
    expect(spans[0].answerTokens).toEqual([28, 29, 30, 31, 32, 33]);
    expect(spans[1].answerTokens).toEqual([]);
  });

  it("names the facts it cannot place and why", () => {
    expect(missing).toEqual([
      { factId: "2:home", why: "passage not in the prompt" },
      { factId: "3:colour", why: "statement not in its passage" },
    ]);
  });
});

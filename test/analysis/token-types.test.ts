import { describe, expect, it } from "vitest";
import { classifyToken, layerBands, pieceText, tokenTypes } from "../../src/analysis/token-types.js";
import { ProbeMissingError } from "../../src/util/errors.js";
import { makeTrace, probe, probeMap, step } from "./make-trace.js";

const ids = { maskTokenId: 99, bosTokenId: 1, eosTokenIds: [2], padTokenId: 3 };

describe("token classification", () => {
  it("raw pieces decode: Ġ/▁ → space, Ċ → newline, <0x0A> → newline", () => {
    expect(pieceText("ĠParis")).toBe(" Paris");
    expect(pieceText("▁the")).toBe(" the");
    expect(pieceText("ĊĊ")).toBe("\n\n");
    expect(pieceText("<0x0A>")).toBe("\n");
  });
  it("structural types by id and by string; lexical otherwise", () => {
    const c = (piece: string | undefined, id = 50) => classifyToken(piece, id, ids);
    expect(c("<|mdm_mask|>", 99)).toBe("mask");
    expect(c("<s>", 1)).toBe("special");
    expect(c("<|im_start|>")).toBe("special");
    expect(c("<|endoftext|>")).toBe("special");
    expect(c("Ċ")).toBe("newline");
    expect(c(" \n")).toBe("newline");
    expect(c("Ġ")).toBe("whitespace");
    expect(c("▁")).toBe("whitespace");
    expect(c(".")).toBe("punctuation");
    expect(c("Ġ,")).toBe("punctuation");
    expect(c(":")).toBe("punctuation");
    expect(c("<0x0A>")).toBe("newline"); // byte fallback is not a special token
    expect(c("ĠParis")).toBe("lexical");
    expect(c("Answer")).toBe("lexical");
    expect(c("3.5")).toBe("lexical");
    expect(c(undefined)).toBe("unknown");
  });
  it("three bands over 32 layers: 0–10, 11–21, 22–31; over 28: 0–9, 10–18, 19–27", () => {
    expect(layerBands(32).map((b) => b.layers)).toEqual([
      [0, 10],
      [11, 21],
      [22, 31],
    ]);
    expect(layerBands(28).map((b) => b.layers)).toEqual([
      [0, 9],
      [10, 18],
      [19, 27],
    ]);
  });
});

describe("tokenTypes over a trace", () => {
  // 4 layers → bands of 2 layers [0–1], [2–3] with bands: 2. top-1 anchors: layer 0 → key 0 (BOS), layer 1 → key 2 ("Ċ"),
  // layer 2 → key 3 ("ĠParis"), layer 3 → key 4 (a mask at step 0, "." in the final sequence).
  const tokens = ["<s>", "Question", "Ċ", "ĠParis", "."];
  const seq = [1, 40, 41, 42, 43];
  const col = (k: number) => Array.from({ length: 5 }, (_, j) => (j === k ? 0.6 : 0.1));
  const probes = () => probeMap(...[0, 2, 3, 4].map((k, l) => probe(l, "received", [5], col(k))));
  const t = makeTrace({
    model: { numLayers: 4 },
    sequence: seq,
    tokens,
    finalProbes: probes(),
    steps: [step(7, [1, 40, 41, 42, 99], probes())],
  });
  it("final pass: shares per band (hand count)", () => {
    const { shares, table } = tokenTypes(t, { rule: "top-k", bands: 2 });
    expect(table.array("type")).toEqual(["special", "newline", "lexical", "punctuation"]);
    const s = shares.objects() as { band: string; type: string; share: number }[];
    const get = (band: string, type: string) => s.find((r) => r.band === band && r.type === type)!.share;
    expect(get("layers 0–1", "special")).toBe(0.5);
    expect(get("layers 0–1", "newline")).toBe(0.5);
    expect(get("layers 2–3", "lexical")).toBe(0.5);
    expect(get("layers 2–3", "punctuation")).toBe(0.5);
  });
  it("steps: a still-masked anchor is a mask token, labelled with the step value", () => {
    const { table } = tokenTypes(t, { rule: "top-k", bands: 2, pass: "steps" });
    const last = table.objects()[3] as { step: number; type: string; token: string; structural: boolean };
    expect([last.step, last.type, last.token, last.structural]).toEqual([7, "mask", "<mask>", true]);
  });
  it("no received probe → ProbeMissingError", () => {
    expect(() => tokenTypes(makeTrace({ sequence: [1, 2] }))).toThrow(ProbeMissingError);
  });
});

import { describe, expect, it } from "vitest";
import { decodeToken, displayToken, displayTokens, inferTokenizerKind, tokenizerKindOf } from "../../src/protocol/token-text.js";

// Expected values worked by hand from GPT-2's bytes_to_unicode: the 68 non-printable bytes
// 0x00–0x20, 0x7F–0xA0, 0xAD map in order to U+0100…; so Ġ = U+0120 = byte 0x20, Ċ = U+010A = 0x0A,
// ĉ = U+0109 = 0x09, Ģ = U+0122 = the 35th = 0x80, ľ = U+013E = the 63rd = 0x9C.
describe("displayToken: byte-level BPE", () => {
  it("shows spaces, newlines and tabs as marks", () => {
    expect(displayToken("Ġhelpful", "byte-level")).toBe("·helpful");
    expect(displayToken("Ċ", "byte-level")).toBe("↵");
    expect(displayToken("ĊĊ", "byte-level")).toBe("↵↵");
    expect(displayToken("ĉreturn", "byte-level")).toBe("→return");
    expect(displayToken("ĠĠ", "byte-level")).toBe("··");
  });
  it("decodes multi-byte UTF-8 and marks bytes of a character split across tokens", () => {
    expect(displayToken("Ã©", "byte-level")).toBe("é"); // c3 a9
    expect(displayToken("ĠcafÃ©", "byte-level")).toBe("·café");
    expect(displayToken("âĢľ", "byte-level")).toBe("\u201c"); // e2 80 9c = “
    expect(displayToken("âĢ", "byte-level")).toBe("\\xE2\\x80"); // the first two bytes of “
  });
  it("leaves added tokens outside the byte alphabet as they are", () => {
    expect(displayToken("<|im_start|>", "byte-level")).toBe("<|im_start|>");
    expect(displayToken("<|掩码|>", "byte-level")).toBe("<|掩码|>");
  });
  it("infers the kind from the token alone when none is given", () => {
    expect(displayToken("Ġthe")).toBe("·the");
    expect(displayToken("the")).toBe("the");
  });
});

describe("displayToken: SentencePiece", () => {
  it("shows ▁ as a space mark and byte-fallback tokens as their byte", () => {
    expect(displayToken("▁the", "sentencepiece")).toBe("·the");
    expect(displayToken("▁▁", "sentencepiece")).toBe("··");
    expect(displayToken("<0x0A>", "sentencepiece")).toBe("↵");
    expect(displayToken("<0x09>", "sentencepiece")).toBe("→");
    expect(displayToken("<0xE2>", "sentencepiece")).toBe("\\xE2");
    expect(decodeToken("▁New▁York", "sentencepiece")).toBe(" New York");
  });
});

describe("displayToken: plain vocabularies keep literal markers", () => {
  it("does not decode Ġ, Ċ or ▁ of a plain vocabulary", () => {
    expect(displayToken("Ġ", "plain")).toBe("Ġ");
    expect(displayToken("▁x", "plain")).toBe("▁x");
    expect(displayToken("Ċat", "plain")).toBe("Ċat");
  });
  it("still makes real whitespace and control characters visible", () => {
    expect(displayToken("a b", "plain")).toBe("a·b");
    expect(displayToken("\n", "plain")).toBe("↵");
    expect(displayToken("\x01", "plain")).toBe("␁");
    expect(displayToken("\r\n", "plain")).toBe("␍↵");
  });
});

describe("inferTokenizerKind", () => {
  it("byte-level when markers appear and no raw whitespace", () => {
    expect(inferTokenizerKind(["The", "Ġcat", "Ċ", "<|endoftext|>"])).toBe("byte-level");
    // an added token outside the alphabet does not hide the others' markers
    expect(inferTokenizerKind(["<|掩码|>", "Ġcat"])).toBe("byte-level");
  });
  it("plain for a char-level vocabulary that has a literal Ġ (it also stores a raw space)", () => {
    const chars = ["a", " ", "Ġ", "b"];
    expect(inferTokenizerKind(chars)).toBe("plain");
    expect(displayTokens(chars)).toEqual(["a", "·", "Ġ", "b"]);
  });
  it("plain when a token's source text is the token itself", () => {
    expect(inferTokenizerKind(["Ġ", "x"], ["Ġ", "x"])).toBe("plain");
    expect(inferTokenizerKind(["Ġcat"], [" cat"])).toBe("byte-level");
  });
  it("sentencepiece for ▁ without raw spaces, plain for word-level tokens", () => {
    expect(inferTokenizerKind(["▁the", "▁cat", "<0x0A>"])).toBe("sentencepiece");
    expect(inferTokenizerKind(["the", "cat", "[MASK]"])).toBe("plain");
    expect(inferTokenizerKind([])).toBe("plain");
  });
  it("displayTokens decodes a whole sequence with one kind", () => {
    expect(displayTokens(["Hello", "Ġworld", "Ċ", "Ġ!"])).toEqual(["Hello", "·world", "↵", "·!"]);
    expect(displayTokens(["Ġ", "x"], "plain")).toEqual(["Ġ", "x"]);
  });
});

describe("tokenizerKindOf (tokenizer.json)", () => {
  it("reads the pre-tokenizer and decoder", () => {
    expect(tokenizerKindOf({ pre_tokenizer: { type: "ByteLevel" } })).toBe("byte-level");
    expect(tokenizerKindOf({ pre_tokenizer: { type: "Sequence", pretokenizers: [{ type: "Digits" }, { type: "ByteLevel" }] } })).toBe(
      "byte-level",
    );
    expect(tokenizerKindOf({ pre_tokenizer: { type: "Metaspace", replacement: "▁" } })).toBe("sentencepiece");
    expect(
      tokenizerKindOf({ decoder: { type: "Sequence", decoders: [{ type: "Replace", pattern: { String: "▁" }, content: " " }] } }),
    ).toBe("sentencepiece");
    expect(tokenizerKindOf({ pre_tokenizer: { type: "Whitespace" }, decoder: null })).toBe("plain");
    expect(tokenizerKindOf(undefined)).toBe("plain");
  });
});

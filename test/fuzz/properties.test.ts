/**
 * Property-based tests of the parsers (fast-check): round trips for every valid input the
 * arbitraries generate, and totality — for any bytes, a parser returns or throws its typed error,
 * never anything else. Seeded (FUZZ_SEED) so CI runs are reproducible; a failure prints its seed
 * and the shrunk counterexample.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import * as zlib from "node:zlib";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { DTYPE_BYTES, encodeSafetensors, readSafetensorsHeader, readTensorBytes } from "../../src/checkpoint/safetensors.js";
import type { SafetensorsDType } from "../../src/checkpoint/types.js";
import { DatasetError, loadQaJsonl, newDataReport } from "../../src/qa/datasets.js";
import { readDoneKeys, readResults, ResultsFileError } from "../../src/qa/runner.js";
import { generate } from "../../src/samplers/generate.js";
import { decodeTrace, readTrace } from "../../src/trace/reader.js";
import { encodeTrace } from "../../src/trace/writer.js";
import { CheckpointError, TraceFormatError } from "../../src/util/errors.js";
import { FakeEngine, FakeTokenizer } from "../support/fake-engine.js";

const SEED = Number(process.env.FUZZ_SEED ?? 20260107);
const params = (numRuns: number) => ({ seed: SEED, numRuns });
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "fs-props-"));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

/** Run `f`; true when it returned, false when it threw an instance of `typed`; rethrow anything else. */
function typedOrOk(f: () => unknown, typed: new (...a: never[]) => Error): boolean {
  try {
    f();
    return true;
  } catch (e) {
    if (e instanceof typed) return false;
    throw e;
  }
}

async function typedOrOkAsync(f: () => Promise<unknown>, typed: new (...a: never[]) => Error): Promise<boolean> {
  try {
    await f();
    return true;
  } catch (e) {
    if (e instanceof typed) return false;
    throw e;
  }
}

/** A trace as plain JSON, typed arrays tagged with their type (so Int32Array ≠ Float32Array). */
function plain(t: unknown): unknown {
  return JSON.parse(
    JSON.stringify(t, (_k, v) => {
      if (v instanceof Map) return Object.fromEntries(v);
      if (ArrayBuffer.isView(v)) return { typed: v.constructor.name, values: Array.from(v as Int32Array) };
      return v;
    }),
  );
}

describe("traces", () => {
  const tokenizer = new FakeTokenizer();
  const runArb = fc.record({
    family: fc.constantFrom("llada" as const, "dream" as const, "llama" as const),
    prompt: fc.array(fc.integer({ min: 3, max: 28 }), { minLength: 1, maxLength: 6 }),
    genLength: fc.integer({ min: 1, max: 6 }),
    seed: fc.integer({ min: 0, max: 1000 }),
    temperature: fc.constantFrom(0, 0.7, 1),
    argmax: fc.boolean(),
    pattern: fc.boolean(),
  });

  it("round trip: what a sampler writes reads back losslessly, and survives re-encoding", async () => {
    let k = 0;
    await fc.assert(
      fc.asyncProperty(runArb, async (r) => {
        const probes = { received: true, ...(r.argmax ? { argmax: true } : {}), ...(r.pattern ? { pattern: { layers: [1] } } : {}) };
        const file = path.join(tmp, `rt-${k++}.fstrace`);
        const steps = r.family === "llama" ? r.genLength : 1 + (r.seed % r.genLength);
        const settings = {
          genLength: r.genLength,
          steps: r.genLength % steps === 0 ? steps : r.genLength,
          seed: r.seed,
          temperature: r.temperature,
          probes,
        };
        const [res] = await generate(new FakeEngine({ family: r.family, probes }), [r.prompt.map((t) => `t${t}`).join(" ")], settings, {
          tokenizer,
          traceFiles: [file],
        });
        const t = readTrace(file);
        expect(t.partial).toBe(false);
        expect(plain(t)).toEqual(plain(res.trace));
        expect(plain(decodeTrace(encodeTrace(t)))).toEqual(plain(res.trace));
      }),
      params(40),
    );
  });

  it("totality: any byte edits of a trace → a trace or a TraceFormatError (with or without allowTruncated)", async () => {
    const file = path.join(tmp, "seed.fstrace");
    const probes = { received: true, argmax: true };
    await generate(
      new FakeEngine({ probes }),
      ["t5 t6 t7"],
      { genLength: 4, steps: 2, seed: 1, probes },
      { tokenizer, traceFiles: [file] },
    );
    const seed = fs.readFileSync(file);
    const edits = fc.array(fc.record({ at: fc.nat({ max: seed.length - 1 }), byte: fc.integer({ min: 0, max: 255 }) }), {
      minLength: 1,
      maxLength: 6,
    });
    fc.assert(
      fc.property(edits, fc.nat({ max: seed.length }), fc.boolean(), (es, cut, allow) => {
        const b = Buffer.from(seed.subarray(0, cut));
        for (const e of es) if (e.at < b.length) b[e.at] = e.byte;
        typedOrOk(() => {
          const t = decodeTrace(b, "t", { allowTruncated: allow });
          // Whatever was accepted from a cut or edited file must say it is partial.
          if (!b.equals(seed)) expect(t.partial).toBe(true);
        }, TraceFormatError);
      }),
      params(400),
    );
  });

  it("totality: arbitrary bytes after a valid preamble → a TraceFormatError, never another exception", () => {
    const preamble = Buffer.from("FSTRACE\n\u0001\u0000\u0000\u0000\u0000\u0000\u0000\u0000", "latin1");
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), (tail) => {
        const ok = typedOrOk(
          () => decodeTrace(Buffer.concat([preamble, Buffer.from(tail)]), "t", { allowTruncated: true }),
          TraceFormatError,
        );
        expect(ok).toBe(false); // no meta record can come out of noise with a valid CRC
      }),
      params(300),
    );
  });
});

describe("safetensors", () => {
  const dtypes = Object.keys(DTYPE_BYTES) as SafetensorsDType[];
  const tensorArb = fc.record({
    dtype: fc.constantFrom(...dtypes),
    shape: fc.array(fc.integer({ min: 0, max: 4 }), { maxLength: 3 }),
  });

  it("round trip: any set of tensors encodes and reads back with the same names, dtypes, shapes and bytes", () => {
    let k = 0;
    fc.assert(
      fc.property(
        fc.dictionary(
          fc.string({ minLength: 1, maxLength: 12 }).filter((s) => s !== "__metadata__"),
          tensorArb,
          { maxKeys: 5 },
        ),
        (spec) => {
          const tensors = Object.fromEntries(
            Object.entries(spec).map(([name, t]) => {
              const n = t.shape.reduce((a, b) => a * b, 1) * DTYPE_BYTES[t.dtype];
              const data = Uint8Array.from({ length: n }, (_, i) => (i * 31 + name.length) & 255);
              return [name, { dtype: t.dtype, shape: t.shape, data }];
            }),
          );
          const f = path.join(tmp, `rt-${k++}.safetensors`);
          fs.writeFileSync(f, encodeSafetensors(tensors));
          const h = readSafetensorsHeader(f);
          expect(h.tensors.map((t) => t.name).sort()).toEqual(Object.keys(tensors).sort());
          for (const t of h.tensors) {
            expect(t.dtype).toBe(tensors[t.name].dtype);
            expect(t.shape).toEqual(tensors[t.name].shape);
            expect(readTensorBytes(t).equals(Buffer.from(tensors[t.name].data))).toBe(true);
          }
        },
      ),
      params(200),
    );
  });

  it("totality: any JSON header and any data length → a header or a CheckpointError", () => {
    const f = path.join(tmp, "total.safetensors");
    const entry = fc.oneof(
      fc.record(
        {
          dtype: fc.oneof(fc.constantFrom(...dtypes), fc.string()),
          shape: fc.array(fc.oneof(fc.integer({ min: -2, max: 6 }), fc.double())),
          data_offsets: fc.array(fc.integer({ min: -4, max: 64 }), { maxLength: 3 }),
        },
        { requiredKeys: [] },
      ),
      fc.jsonValue({ maxDepth: 3 }),
    );
    fc.assert(
      fc.property(
        fc.oneof(fc.dictionary(fc.string({ maxLength: 8 }), entry, { maxKeys: 4 }), fc.jsonValue({ maxDepth: 4 })),
        fc.nat({ max: 80 }),
        (header, dataLen) => {
          const text = Buffer.from(JSON.stringify(header) ?? "null");
          const len = Buffer.alloc(8);
          len.writeBigUInt64LE(BigInt(text.length));
          fs.writeFileSync(f, Buffer.concat([len, text, Buffer.alloc(dataLen, 1)]));
          typedOrOk(() => {
            const h = readSafetensorsHeader(f);
            // Accepted: the tensors tile the data exactly.
            expect(h.tensors.reduce((a, t) => a + t.byteLength, 0)).toBe(dataLen);
          }, CheckpointError);
        },
      ),
      params(400),
    );
  });
});

describe("QA data", () => {
  const passage = fc.record(
    { title: fc.string({ maxLength: 20 }), text: fc.string({ maxLength: 60 }), hasanswer: fc.boolean(), isgold: fc.boolean() },
    { requiredKeys: ["text"] },
  );
  const recordArb = fc.record({
    question: fc.string({ minLength: 1, maxLength: 40 }).filter((q) => q.trim() !== ""),
    answers: fc.array(fc.string({ maxLength: 12 }), { maxLength: 3 }),
    ctxs: fc.array(passage, { maxLength: 4 }),
  });

  /** The suspicious kinds, restated from their definitions (docs/qa-harness.md), independently of the reader. */
  function expectedIssues(r: {
    answers: string[];
    ctxs: { title?: string; text: string; hasanswer?: boolean; isgold?: boolean }[];
  }): string[] {
    const out: string[] = [];
    if (r.answers.length === 0) out.push("no answers");
    else if (r.answers.some((a) => a.trim() === "")) out.push("blank answer");
    const golds = r.ctxs.filter((c) => c.isgold === true).length;
    if (golds > 1) out.push("several gold passages");
    if (golds === 0) out.push("no gold passage");
    if (r.ctxs.some((c) => c.title === undefined)) out.push("passage without title");
    if (r.ctxs.some((c) => c.hasanswer === undefined || c.isgold === undefined)) out.push("passage without hasanswer/isgold");
    if (r.ctxs.some((c) => c.text.trim() === "")) out.push("empty passage text");
    return out;
  }

  it("round trip: records written as jsonl (plain or gzip, LF or CRLF) read back field for field, with their issues", async () => {
    let k = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(recordArb, { minLength: 1, maxLength: 5 }), fc.boolean(), fc.boolean(), async (recs, gz, crlf) => {
        const text = Buffer.from(recs.map((r) => JSON.stringify(r)).join(crlf ? "\r\n" : "\n") + "\n");
        const f = path.join(tmp, `qa-${k++}.jsonl`);
        fs.writeFileSync(f, gz ? zlib.gzipSync(text) : text);
        const report = newDataReport();
        const back = await loadQaJsonl(f, { report });
        expect(back.map((r) => [r.question, r.answers])).toEqual(recs.map((r) => [r.question, r.answers]));
        back.forEach((r, i) => {
          expect(r.ctxs.map((c) => c.text)).toEqual(recs[i].ctxs.map((c) => c.text));
          expect(r.issues).toEqual(expectedIssues(recs[i]));
          expect(r.line).toBe(i + 1);
        });
        expect(report.records).toBe(recs.length);
      }),
      params(60),
    );
  });

  it("totality: any bytes as a data file → records or a DatasetError", async () => {
    const f = path.join(tmp, "noise.jsonl");
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.uint8Array({ maxLength: 200 }).map((b) => Buffer.from(b)),
          fc.array(fc.jsonValue({ maxDepth: 3 })).map((vs) => Buffer.from(vs.map((v) => JSON.stringify(v)).join("\n"))),
        ),
        fc.boolean(),
        async (bytes, gz) => {
          fs.writeFileSync(f, gz ? zlib.gzipSync(bytes) : bytes);
          await typedOrOkAsync(() => loadQaJsonl(f, { maxLineBytes: 150 }), DatasetError);
        },
      ),
      params(200),
    );
  });
});

describe("results files", () => {
  it("totality: any text as a results file → done keys or a ResultsFileError; accepted rows are what was written", () => {
    const f = path.join(tmp, "results.jsonl");
    const rowArb = fc.record({
      id: fc.string({ maxLength: 8 }),
      setting: fc.constantFrom("oracle", "closed-book"),
      model: fc.constantFrom("a", "b"),
      error: fc.option(fc.string({ maxLength: 5 }), { nil: undefined }),
    });
    fc.assert(
      fc.property(
        fc.array(
          fc.oneof(
            rowArb.map((r) => JSON.stringify(r)),
            fc.string({ maxLength: 30 }),
            fc.jsonValue().map((v) => JSON.stringify(v) ?? ""),
          ),
          { maxLength: 6 },
        ),
        (lines) => {
          fs.writeFileSync(f, lines.join("\n"));
          typedOrOk(() => {
            readDoneKeys(f);
            for (const r of readResults(f)) expect(typeof r.id).toBe("string");
          }, ResultsFileError);
        },
      ),
      params(300),
    );
  });
});

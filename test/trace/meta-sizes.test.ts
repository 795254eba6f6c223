/**
 * Sizes a trace's meta record claims are bounded before anything is sized from them: a meta claiming 2^31 heads, genLength 2^40 or 10^12 steps used to load, and whatever
 * sized an array, a loop or a message from the claim (a head list, a step range) inherited it.
 * Each file below is a real sampled trace whose meta is edited and re-encoded with valid CRC-32s,
 * so only the size check can catch it. The probes are `received` only: no recorded tensor has a
 * head axis, so the existing shape checks cannot see the claimed head count.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { generate } from "../../src/samplers/generate.js";
import { bufferReader, decodeBlob, encodePreamble, encodeRecord, framedRecords, type TraceRecord } from "../../src/trace/codec.js";
import { decodeTrace, readTrace, readTraceHeader, traceSteps } from "../../src/trace/reader.js";
import { TraceFormatError } from "../../src/util/errors.js";
import { FakeEngine, FakeTokenizer } from "../support/fake-engine.js";

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "fs-trace-sizes-"));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

let sampled: Buffer | undefined;
async function sample(): Promise<Buffer> {
  if (sampled) return sampled;
  const file = path.join(tmp, "base.fstrace");
  const probes = { received: true };
  await generate(
    new FakeEngine({ probes }),
    ["t5 t6 t7"],
    { genLength: 6, steps: 3, seed: 4, probes },
    { tokenizer: new FakeTokenizer(), traceFiles: [file], modelName: "fake" },
  );
  sampled = fs.readFileSync(file);
  return sampled;
}

function records(bytes: Buffer): TraceRecord[] {
  const out: TraceRecord[] = [];
  let i = 0;
  for (const r of framedRecords(bufferReader(bytes), bytes.length, "t").records)
    out.push(decodeBlob(r.blob, { file: "t", index: i++, offset: r.offset }));
  return out;
}

/** The sampled trace with its meta edited, written to a file. */
async function edited(name: string, edit: (meta: Record<string, unknown>) => void): Promise<{ file: string; size: number }> {
  const recs = records(await sample());
  edit(recs[0].json);
  const bytes = Buffer.concat([encodePreamble(1), ...recs.map(encodeRecord)]);
  const file = path.join(tmp, name);
  fs.writeFileSync(file, bytes);
  return { file, size: bytes.length };
}

function thrown(f: () => unknown): TraceFormatError {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(TraceFormatError);
    return e as TraceFormatError;
  }
  throw new Error("expected a TraceFormatError, nothing was thrown");
}

const model = (m: Record<string, unknown>) => m.model as Record<string, unknown>;
const settings = (m: Record<string, unknown>) => m.settings as Record<string, unknown>;

describe("meta sizes are bounded before use", () => {
  it("the unedited trace loads (so each case below fails for its one claim)", async () => {
    const { file } = await edited("ok.fstrace", () => {});
    expect(readTrace(file).model.numHeads).toBe(2);
  });

  const cases: [string, (m: Record<string, unknown>) => void, RegExp, string][] = [
    ["2^31 heads", (m) => void (model(m).numHeads = 2 ** 31), /model\.numHeads$/, String(2 ** 31)],
    ["genLength 2^40", (m) => void (settings(m).genLength = 2 ** 40), /settings\.genLength$/, String(2 ** 40)],
    ["10^12 steps", (m) => void (settings(m).steps = 1e12), /settings\.steps$/, String(1e12)],
  ];
  it.each(cases)(
    "%s: refused by readTrace, readTraceHeader and traceSteps, naming the field, the limit and the file size",
    async (label, edit, field, found) => {
      const { file, size } = await edited(`${label.replace(/\W+/g, "-")}.fstrace`, edit);
      for (const read of [() => readTrace(file), () => readTraceHeader(file), () => [...traceSteps(file)]]) {
        const e = thrown(read);
        expect(e.file).toBe(file);
        expect(e.field).toMatch(field);
        expect(e.found).toContain(found);
        expect(e.expected).toMatch(/≤ \d+/);
        expect(`${e.expected} ${e.found}`).toContain(`${size} bytes`);
      }
    },
  );

  it("a decoded buffer is bounded the same way (its length is the file size)", async () => {
    const { file } = await edited("buf.fstrace", (m) => void (model(m).numLayers = 2 ** 31));
    const e = thrown(() => decodeTrace(fs.readFileSync(file), "buf.fstrace"));
    expect(e.field).toMatch(/model\.numLayers$/);
  });
});

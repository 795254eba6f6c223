/**
 * Traces a careful user can produce or receive that the reader used to accept silently: a nonzero
 * reserved field, a meta whose format version disagrees with the preamble, a meta that claims 99
 * layers, records that contradict the meta; and partial traces (cut at a record boundary, or left
 * by Ctrl-C) that analyses must name as partial, saying what is missing.
 *
 * Each damaged file is rebuilt with valid CRC-32s (decode → edit → re-encode), so only the
 * semantic check can catch it.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import * as zlib from "node:zlib";
import { afterAll, describe, expect, it } from "vitest";
import { main } from "../../src/cli/main.js";
import { generate } from "../../src/samplers/generate.js";
import { bufferReader, decodeBlob, encodePreamble, encodeRecord, framedRecords, type TraceRecord } from "../../src/trace/codec.js";
import { describePartial } from "../../src/trace/partial.js";
import { decodeTrace, readTrace } from "../../src/trace/reader.js";
import { TraceFormatError } from "../../src/util/errors.js";
import { FakeEngine, FakeTokenizer } from "../support/fake-engine.js";

const tokenizer = new FakeTokenizer();
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "fs-trace-hard-"));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

async function sample(name: string, over: Record<string, unknown> = {}): Promise<string> {
  const file = path.join(tmp, name);
  const probes = { received: true, argmax: true };
  await generate(
    new FakeEngine({ probes }),
    ["t5 t6 t7"],
    { genLength: 6, steps: 3, seed: 4, probes, ...over },
    { tokenizer, traceFiles: [file], modelName: "fake" },
  );
  return file;
}

/** The records of a trace file, decoded (CRC-checked). */
function records(bytes: Buffer): TraceRecord[] {
  const out: TraceRecord[] = [];
  let i = 0;
  for (const r of framedRecords(bufferReader(bytes), bytes.length, "t").records)
    out.push(decodeBlob(r.blob, { file: "t", index: i++, offset: r.offset }));
  return out;
}

function rebuild(recs: TraceRecord[], version = 1): Buffer {
  return Buffer.concat([encodePreamble(version), ...recs.map(encodeRecord)]);
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

async function cli(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = "",
    err = "";
  const code = await main(argv, { out: (t) => (out += t + "\n"), err: (t) => (err += t + "\n") });
  return { code, out, err };
}

const model = (r: TraceRecord) => r.json.model as Record<string, unknown>;

describe("trace preamble and versions", () => {
  it("a nonzero reserved field is refused, naming the file and the field", async () => {
    const bytes = Buffer.from(fs.readFileSync(await sample("reserved.fstrace")));
    bytes.writeUInt32LE(5, 12);
    const e = thrown(() => decodeTrace(bytes, "reserved.fstrace"));
    expect(e.file).toBe("reserved.fstrace");
    expect(e.field).toMatch(/reserved/);
    expect(e.expected).toBe("0");
    expect(e.found).toBe("5");
  });

  it("format version 2 with valid CRCs is refused before any record is parsed", async () => {
    const recs = records(fs.readFileSync(await sample("v2.fstrace")));
    const e = thrown(() => decodeTrace(rebuild(recs, 2), "v2.fstrace"));
    expect(e.field).toBe("format version");
    expect(e.message).toMatch(/version 2 is newer/);
  });

  it("a meta record whose formatVersion disagrees with the preamble (2 in a version-1 file) is refused", async () => {
    const recs = records(fs.readFileSync(await sample("meta-v2.fstrace")));
    recs[0].json.formatVersion = 2;
    const e = thrown(() => decodeTrace(rebuild(recs), "meta-v2.fstrace"));
    expect(e.field).toMatch(/record 0 .*formatVersion/);
    expect(e.expected).toMatch(/1/);
  });
});

describe("meta cross-checked against the records", () => {
  it("a meta claiming 99 layers (records hold probes of 2) is refused, naming numLayers", async () => {
    const recs = records(fs.readFileSync(await sample("layers.fstrace")));
    model(recs[0]).numLayers = 99;
    const e = thrown(() => decodeTrace(rebuild(recs), "layers.fstrace"));
    expect(e.field).toMatch(/record 1 .*blocks\.\*\.attn\.received/);
    expect(e.expected).toMatch(/layers 0…98.*numLayers 99/);
    expect(e.found).toMatch(/layers 0…1/);
  });

  it("a meta claiming fewer layers than recorded is refused (layer ≥ numLayers)", async () => {
    const recs = records(fs.readFileSync(await sample("fewer.fstrace")));
    model(recs[0]).numLayers = 1;
    expect(() => decodeTrace(rebuild(recs))).toThrow(/layer < 1/);
  });

  it("a probe the meta's request promises but a record lacks is refused", async () => {
    const recs = records(fs.readFileSync(await sample("promise.fstrace")));
    (recs[0].json.probes as Record<string, unknown>).self = true;
    const e = thrown(() => decodeTrace(rebuild(recs)));
    expect(e.field).toMatch(/record 1 .*blocks\.0\.attn\.self/);
    expect(e.found).toBe("missing");
  });

  it("heads that do not group (numHeads not a multiple of numKvHeads) are refused", async () => {
    const recs = records(fs.readFileSync(await sample("heads.fstrace")));
    model(recs[0]).numKvHeads = 3;
    expect(() => decodeTrace(rebuild(recs))).toThrow(/numKvHeads[\s\S]*divides numHeads/);
  });

  it("a step canvas that does not start with the prompt ids is refused", async () => {
    const recs = records(fs.readFileSync(await sample("canvas.fstrace")));
    (recs[0].json.prompt as Record<string, unknown>).ids = [5, 6, 8];
    const e = thrown(() => decodeTrace(rebuild(recs)));
    expect(e.field).toMatch(/record 1 .*canvas\[2\]/);
    expect(e.expected).toMatch(/8 \(prompt\.ids\[2\]\)/);
  });

  it("a step that writes into the prompt is refused", async () => {
    const recs = records(fs.readFileSync(await sample("into-prompt.fstrace")));
    const t = recs[1].tensors.get("transferred")!;
    (t.data as Int32Array)[0] = 1;
    expect(() => decodeTrace(rebuild(recs))).toThrow(/transferred[\s\S]*positions in \[3, 9\]/);
  });

  it("an end record whose unmasked_at names a step that does not exist is refused", async () => {
    const recs = records(fs.readFileSync(await sample("unmasked.fstrace")));
    const end = recs[recs.length - 1];
    (end.tensors.get("unmasked_at")!.data as Int32Array)[5] = 7;
    expect(() => decodeTrace(rebuild(recs))).toThrow(/unmasked_at[\s\S]*in \[-1, 3\)/);
  });

  it("a final sequence of another length than the steps' canvas is refused", async () => {
    const recs = records(fs.readFileSync(await sample("final-len.fstrace")));
    const idx = recs.findIndex((r) => r.kind === "final");
    const seq = recs[idx].tensors.get("sequence")!;
    recs[idx] = {
      kind: "final",
      json: { probes: {} },
      tensors: new Map([["sequence", { dtype: "I32", shape: [seq.shape[0] + 1], data: Int32Array.from([...seq.data, 5]) }]]),
    };
    expect(() => decodeTrace(rebuild(recs))).toThrow(/sequence\.shape[\s\S]*9 \(the last step's canvas\)/);
  });

  // Found by the fuzz suite (test/fuzz): each was accepted before.
  it("an end record with no final record before it is refused (it is not an interrupted run)", async () => {
    const recs = records(fs.readFileSync(await sample("no-final.fstrace")));
    recs.splice(
      recs.findIndex((r) => r.kind === "final"),
      1,
    );
    expect(() => decodeTrace(rebuild(recs))).toThrow(/kind[\s\S]*the final record before the end record/);
  });

  it("region token spans are checked: reversed, or beyond prompt + genLength", async () => {
    const recs = records(fs.readFileSync(await sample("regions.fstrace")));
    const regions = (recs[0].json.prompt as { regions: { name: string; tokens: number[]; chars: number[] }[] }).regions;
    regions.push({ name: "query", tokens: [2, 1], chars: [0, 2] });
    expect(() => decodeTrace(rebuild(recs))).toThrow(/0 ≤ start ≤ end/);
    regions[0].tokens = [0, 10]; // prompt 3 + genLength 6 = 9
    expect(() => decodeTrace(rebuild(recs))).toThrow(/regions\[0\]\.tokens[\s\S]*inside \[0, 9\]/);
  });

  it("a producing row outside the canvas is refused", async () => {
    const recs = records(fs.readFileSync(await sample("rows.fstrace")));
    (recs[1].tensors.get("producing_row")!.data as Int32Array)[0] = 9999;
    expect(() => decodeTrace(rebuild(recs))).toThrow(/producing_row[\s\S]*query rows in \[0, 9\)/);
  });

  it("a tensor named __proto__ is written as a key (and, unlisted, refused), not dropped by the encoder", async () => {
    const recs = records(fs.readFileSync(await sample("proto.fstrace")));
    recs[1].tensors.set("__proto__", { dtype: "F32", shape: [1], data: new Float32Array(1) });
    expect(() => decodeTrace(rebuild(recs))).toThrow(/__proto__[\s\S]*unlisted/);
  });

  it("record bytes no tensor accounts for (a gap in a blob) are refused", async () => {
    const recs = records(fs.readFileSync(await sample("gap.fstrace")));
    const blob = encodeRecord(recs[1]);
    // Shift the first tensor's begin by editing its header in place: rebuild via JSON to keep it valid.
    const hl = Number(blob.readBigUInt64LE(8));
    const header = JSON.parse(blob.toString("utf8", 16, 16 + hl));
    const first = Object.keys(header).find((k) => k !== "__metadata__")!;
    const data = blob.subarray(16 + hl, blob.length - 4);
    for (const k of Object.keys(header))
      if (k !== "__metadata__") header[k].data_offsets = header[k].data_offsets.map((x: number) => x + 4);
    const text = JSON.stringify(header);
    const head = Buffer.alloc(8);
    head.writeBigUInt64LE(BigInt(Buffer.byteLength(text)));
    const newBlob = Buffer.concat([head, Buffer.from(text), Buffer.alloc(4), data]);
    const framed = Buffer.alloc(8 + newBlob.length + 4);
    framed.writeBigUInt64LE(BigInt(newBlob.length));
    newBlob.copy(framed, 8);
    framed.writeUInt32LE(zlib.crc32(newBlob), 8 + newBlob.length);
    const bytes = Buffer.concat([encodePreamble(1), encodeRecord(recs[0]), framed]);
    expect(() => decodeTrace(bytes)).toThrow(new RegExp(`${first.replace(/\./g, "\\.")}\\.data_offsets[\\s\\S]*begin 0`));
  });

  it("a valid trace still reads (no false alarms from the cross-checks), for every sampler", async () => {
    for (const family of ["llada", "dream", "llama"] as const) {
      const file = path.join(tmp, `ok-${family}.fstrace`);
      const probes = { received: true, argmax: true };
      await generate(
        new FakeEngine({ family, probes }),
        ["t5 t6 t7"],
        { genLength: 6, steps: family === "llama" ? 6 : 3, seed: 4, probes },
        { tokenizer, traceFiles: [file] },
      );
      const t = readTrace(file);
      expect(t.partial).toBe(false);
      expect(describePartial(t)).toBeUndefined();
    }
  });
});

describe("partial traces say they are partial, and what is missing", () => {
  it("a trace cut at a record boundary reads as partial, and describePartial names the missing records", async () => {
    const bytes = fs.readFileSync(await sample("boundary.fstrace"));
    const recs = records(bytes);
    const cut = rebuild(recs.slice(0, 3)); // meta + 2 of 3 steps
    const t = decodeTrace(cut, "boundary.fstrace");
    expect(t.partial).toBe(true);
    const d = describePartial(t)!;
    expect(d.missing).toEqual(["step 2 (2 of 3 recorded)", "the final-sequence pass", "the end record (answer, decoded tokens)"]);
    expect(d.summary).toMatch(/^partial trace boundary\.fstrace \(fake\): .*stopped after 2 of 3 steps/);
  });

  it("a file cut inside its last record, loaded with allowTruncated, says so", async () => {
    const bytes = fs.readFileSync(await sample("torn.fstrace"));
    const t = decodeTrace(bytes.subarray(0, bytes.length - 10), "torn.fstrace", { allowTruncated: true });
    const d = describePartial(t)!;
    expect(d.summary).toMatch(/last record was cut short/);
    expect(d.missing).toEqual(["the end record (answer, decoded tokens)"]);
  });

  it("analyze absorption on a trace cut at a record boundary: exit 1 and a message that says partial, not only 'no probe'", async () => {
    const file = path.join(tmp, "cut.fstrace");
    fs.writeFileSync(file, rebuild(records(fs.readFileSync(await sample("cut-src.fstrace"))).slice(0, 3)));
    const r = await cli("analyze", "absorption", file);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/partial/);
    expect(r.err).toMatch(/cut\.fstrace/);
    expect(r.err).toMatch(/missing: step 2 \(2 of 3 recorded\), the final-sequence pass/);
    expect(r.err).not.toMatch(/\n\s+at /); // no stack trace
  });

  it("analyze drift on a Ctrl-C trace (steps only): exit 0 with a warning naming the file and what is missing", async () => {
    const file = path.join(tmp, "sigint.fstrace");
    await generate(
      new FakeEngine(),
      ["t5 t6 t7"],
      { genLength: 8, steps: 8 },
      {
        tokenizer,
        traceFiles: [file],
        onStep: (_i, s) => {
          if (s.step === 2) process.emit("SIGINT");
        },
      },
    );
    const r = await cli("analyze", "drift", file, "--json");
    expect(r.code).toBe(0);
    const j = JSON.parse(r.out);
    expect(j.partial).toBe(true);
    // meta + 3 steps read, of meta + 8 steps + final + end
    expect(j.partialTraces).toEqual([
      expect.objectContaining({
        summary: expect.stringMatching(/sigint\.fstrace.*stopped after 3 of 8 steps/),
        records: 4,
        expected: 11,
        cut: false,
      }),
    ]);
    expect(j.warnings.join("\n")).toMatch(/partial trace.*missing: steps 3–7/);
    const text = await cli("analyze", "drift", file);
    expect(text.err).toMatch(/warning: partial trace .*sigint\.fstrace/);
  });

  it("a trace cut after the final pass (end record missing): absorption runs, and warns that it is partial", async () => {
    const file = path.join(tmp, "no-end.fstrace");
    const recs = records(fs.readFileSync(await sample("no-end-src.fstrace")));
    fs.writeFileSync(file, rebuild(recs.slice(0, -1)));
    const r = await cli("analyze", "absorption", file, "--json");
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out).warnings.join("\n")).toMatch(/partial trace .*no-end\.fstrace.*missing: the end record/);
  });
});

import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { generate } from "../../src/samplers/generate.js";
import { encodePreamble, encodeRecord } from "../../src/trace/codec.js";
import { decodeTrace, readTrace, readTraceHeader, traceSteps } from "../../src/trace/reader.js";
import type { Trace } from "../../src/trace/types.js";
import { encodeTrace, metaRecord, headerOf, stepRecord } from "../../src/trace/writer.js";
import { TraceFormatError } from "../../src/util/errors.js";
import { FakeEngine, FakeTokenizer } from "../support/fake-engine.js";

const tokenizer = new FakeTokenizer();
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "fs-trace-"));

async function sampleTrace(file: string, extra: Record<string, unknown> = {}, family: "llada" | "dream" | "llama" = "llada") {
  const probes = { received: true, argmax: true, pattern: { layers: [1] } };
  const [r] = await generate(
    new FakeEngine({ family, probes }),
    [{ text: "t5 t6 t7", regions: [{ name: "query", tokens: [0, 3], chars: [0, 8] }] }],
    { genLength: 6, steps: family === "llama" ? 6 : 3, seed: 4, probes, ...extra },
    { tokenizer, traceFiles: [file], modelName: "fake" },
  );
  return r;
}

function expectSameTrace(a: Trace, b: Trace) {
  const plain = (t: Trace) =>
    JSON.parse(
      JSON.stringify(t, (_k, v) => {
        if (v instanceof Map) return Object.fromEntries(v);
        if (ArrayBuffer.isView(v)) return { typed: v.constructor.name, values: Array.from(v as Int32Array) };
        return v;
      }),
    );
  expect(plain(a)).toEqual(plain(b));
}

describe(".fstrace round trip", () => {
  for (const family of ["llada", "dream", "llama"] as const) {
    it(`${family}: the file read back equals the trace the sampler returned (lossless, typed arrays kept)`, async () => {
      const file = path.join(tmp, `${family}.fstrace`);
      const r = await sampleTrace(file, family === "dream" ? { temperature: 0.7 } : {}, family);
      const back = readTrace(file);
      expect(back.partial).toBe(false);
      expect(back.steps[0].canvas).toBeInstanceOf(Int32Array);
      expect(back.steps[0].confidence).toBeInstanceOf(Float32Array);
      expect(back.steps[0].probes.get("blocks.1.attn.pattern")!.axes).toEqual(["head", "query", "key"]);
      expectSameTrace(back, r.trace);
      // and re-encoding the loaded trace reads back to the same thing
      expectSameTrace(decodeTrace(encodeTrace(back)), r.trace);
    });
  }

  it("traceSteps yields the validated steps one at a time; readTraceHeader reads only the meta record", async () => {
    const file = path.join(tmp, "iter.fstrace");
    const r = await sampleTrace(file);
    const steps = [...traceSteps(file)];
    expect(steps.map((s) => s.step)).toEqual(r.trace.steps.map((s) => s.step));
    expect(Array.from(steps[2].probes.get("blocks.0.attn.received")!.data)).toEqual(
      Array.from(r.trace.steps[2].probes.get("blocks.0.attn.received")!.data),
    );
    const h = readTraceHeader(file);
    expect(h.settings).toEqual(r.trace.settings);
    expect(h.prompt.ids).toEqual(r.trace.prompt.ids);
    expect(h.promptTokens).toEqual(r.trace.tokens.slice(0, 3));
    const bytes = fs.readFileSync(file);
    // A cut inside the steps: an error by default, the complete steps with allowTruncated.
    fs.writeFileSync(file, bytes.subarray(0, Math.floor(bytes.length * 0.55)));
    expect(() => [...traceSteps(file)]).toThrow(/truncated/);
    const some = [...traceSteps(file, { allowTruncated: true })];
    expect(some.length).toBeGreaterThan(0);
    expect(some.length).toBeLessThan(3);
  });

  it("an interrupted run (abort between steps) leaves a valid partial trace", async () => {
    const file = path.join(tmp, "partial.fstrace");
    const ac = new AbortController();
    const res = await generate(
      new FakeEngine(),
      ["t5 t6 t7"],
      { genLength: 8, steps: 8, seed: 1 },
      {
        tokenizer,
        traceFiles: [file],
        signal: ac.signal,
        onStep: (_i, s) => {
          if (s.step === 2) ac.abort();
        },
      },
    );
    expect(res[0].trace.partial).toBe(true);
    const back = readTrace(file);
    expect(back.partial).toBe(true);
    expect(back.steps.length).toBe(3);
    expect(back.final.probes.size).toBe(0);
    // the reconstructed canvas holds the three written tokens; unmaskedAt says when
    const written = back.steps.flatMap((s) => Array.from(s.transferred));
    for (const p of written) expect(back.final.sequence[p]).not.toBe(31);
    expect(Array.from(back.unmaskedAt).filter((x) => x >= 0).length).toBe(3);
    expect(back.tokens.length).toBe(11);
    expect(back.tokens[written[0]]).toMatch(/^t\d+$/);
    expect(Array.from(back.final.sequence)).toEqual(Array.from(res[0].trace.final.sequence));
  });

  it("SIGINT (Ctrl-C, a kernel interrupt) stops at the next step and leaves a partial trace; the listener is removed after", async () => {
    const file = path.join(tmp, "sigint.fstrace");
    const before = process.listenerCount("SIGINT");
    const res = await generate(
      new FakeEngine(),
      ["t5 t6 t7"],
      { genLength: 8, steps: 8 },
      {
        tokenizer,
        traceFiles: [file],
        onStep: (_i, s) => {
          if (s.step === 1) process.emit("SIGINT");
        },
      },
    );
    expect(res[0].trace.partial).toBe(true);
    expect(readTrace(file).steps.length).toBe(2);
    expect(process.listenerCount("SIGINT")).toBe(before);
  });

  it("an engine failure mid-run rethrows and leaves the steps so far as a readable partial trace", async () => {
    const file = path.join(tmp, "crash.fstrace");
    class Failing extends FakeEngine {
      override async forward(input: Parameters<FakeEngine["forward"]>[0]) {
        if (this.calls.length === 4) throw new Error("device lost");
        return super.forward(input);
      }
    }
    await expect(generate(new Failing(), ["t5 t6"], { genLength: 8, steps: 8 }, { tokenizer, traceFiles: [file] })).rejects.toThrow(
      /device lost/,
    );
    const back = readTrace(file);
    expect(back.partial).toBe(true);
    expect(back.steps.map((s) => s.step)).toEqual([0, 1, 2, 3]);
  });

  it("a file cut inside a record → TraceFormatError naming the record; allowTruncated loads the complete ones", async () => {
    const file = path.join(tmp, "full.fstrace");
    await sampleTrace(file);
    const bytes = fs.readFileSync(file);
    const cut = bytes.subarray(0, bytes.length - 100);
    const e = (() => {
      try {
        decodeTrace(cut, "cut.fstrace");
      } catch (x) {
        return x as TraceFormatError;
      }
    })();
    expect(e).toBeInstanceOf(TraceFormatError);
    expect(e!.message).toMatch(/truncated/);
    expect(e!.field).toMatch(/^record 5 \(byte \d+\)$/); // meta, 3 steps, final, then the cut end record
    expect(e!.hint).toMatch(/allowTruncated/);
    const partial = decodeTrace(cut, "cut.fstrace", { allowTruncated: true });
    expect(partial.partial).toBe(true);
    expect(partial.steps.length).toBe(3);
    expect(partial.final.probes.size).toBe(5); // the final pass survived: received ×2, argmax_key ×2, pattern
  });

  it("a flipped byte → checksum error naming the record", async () => {
    const file = path.join(tmp, "flip.fstrace");
    await sampleTrace(file);
    const bytes = Buffer.from(fs.readFileSync(file));
    bytes[bytes.length - 400] ^= 0xff;
    expect(() => decodeTrace(bytes, "flip.fstrace")).toThrow(TraceFormatError);
    expect(() => decodeTrace(bytes, "flip.fstrace")).toThrow(/checksum.*\n.*record \d+/s);
  });

  it("a newer format version, a foreign file, an empty file → typed errors that say what is wrong", async () => {
    const file = path.join(tmp, "v.fstrace");
    await sampleTrace(file);
    const bytes = Buffer.from(fs.readFileSync(file));
    bytes.writeUInt32LE(7, 8);
    expect(() => decodeTrace(bytes)).toThrow(TraceFormatError);
    expect(() => decodeTrace(bytes)).toThrow(/version 7 is newer[\s\S]*expected: ≤ 1[\s\S]*found: 7/);
    expect(() => decodeTrace(Buffer.from("PK\u0003\u0004 not a trace at all"))).toThrow(/Not a floatscope trace/);
    expect(() => decodeTrace(Buffer.alloc(0))).toThrow(/too short/);
    expect(() => decodeTrace(encodePreamble(1))).toThrow(/no meta record/);
  });

  it("schema violations are caught per field: a probe of the wrong length, an unknown probe name, steps out of order", async () => {
    const r = await sampleTrace(path.join(tmp, "s.fstrace"));
    const header = headerOf(r.trace);
    const step0 = r.trace.steps[0];
    const build = (...steps: Parameters<typeof stepRecord>[0][]) =>
      Buffer.concat([encodePreamble(1), encodeRecord(metaRecord(header)), ...steps.map((s) => encodeRecord(stepRecord(s)))]);
    const wrongLen = {
      ...step0,
      probes: new Map([
        ["blocks.0.attn.received", { name: "blocks.0.attn.received", axes: ["key" as const], dims: [4], data: new Float32Array(4) }],
      ]),
    };
    expect(() => decodeTrace(build(wrongLen))).toThrow(/blocks\.0\.attn\.received\.shape\[0\] \(key\)[\s\S]*expected: 9/);
    const unknown = {
      ...step0,
      probes: new Map([
        ["blocks.0.attn.secret", { name: "blocks.0.attn.secret", axes: ["key" as const], dims: [9], data: new Float32Array(9) }],
      ]),
    };
    expect(() => decodeTrace(build(unknown))).toThrow(/canonical probe name/);
    const layerTooHigh = {
      ...step0,
      probes: new Map([
        ["blocks.5.attn.received", { name: "blocks.5.attn.received", axes: ["key" as const], dims: [9], data: new Float32Array(9) }],
      ]),
    };
    expect(() => decodeTrace(build(layerTooHigh))).toThrow(/layer < 2/);
    expect(() => decodeTrace(build({ ...step0, step: 1 }))).toThrow(/steps are numbered in order/);
    expect(() =>
      decodeTrace(
        build({
          ...step0,
          transferred: Int32Array.from([99]),
          tokens: Int32Array.from([1]),
          confidence: Float32Array.from([1]),
          producingRow: Int32Array.from([1]),
        }),
      ),
    ).toThrow(/positions in \[3, 9\]/);
  });

  it("nothing in a trace is executed: JSON is only parsed; __proto__ keys do not pollute", async () => {
    const r = await sampleTrace(path.join(tmp, "x.fstrace"));
    const header = { ...headerOf(r.trace), settings: JSON.parse('{"__proto__": {"polluted": true}, "code": "process.exit(1)"}') };
    const bytes = Buffer.concat([encodePreamble(1), encodeRecord(metaRecord(header))]);
    const t = decodeTrace(bytes);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(t.settings.code).toBe("process.exit(1)");
    expect(t.partial).toBe(true);
  });
});

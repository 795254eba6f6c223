/**
 * What the fuzz suite mutates, target by target. Each target builds its seed inputs once (`setup`) and
 * derives case `index` from a seeded RNG (`make`), naming what it did and what must follow:
 *
 *   trace-bytes       byte-level damage to `.fstrace` files (flips, cuts, inserts, lying lengths, preamble)
 *   trace-records     semantic damage with valid CRC-32s (decode → edit one field → re-encode)
 *   trace-cli         `floatscope analyze <analysis>` on damaged traces: typed message or a result, never a stack
 *   safetensors       header damage (JSON, dtypes, shapes, offsets, header length, cuts, trailing bytes)
 *   checkpoint-cli    `floatscope inspect` on a checkpoint folder with a damaged weights file
 *   qa-data           Lost-in-the-Middle jsonl(.gz) damage (fields, types, suspicious records, UTF-8, gzip, caps)
 *   results           `eval --out` results files (torn tails, foreign lines, binary)
 *
 * Extension point: a new parser adds one `FuzzTarget` to `TARGETS` (e.g. a GGUF header target that
 * mutates a tiny `.gguf` written by the GGUF writer and runs `openCheckpoint` on it). The harness, the
 * worker, the hang supervisor and the summary pick it up unchanged.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import * as zlib from "node:zlib";
import { main } from "../../src/cli/main.js";
import { readSafetensorsHeader, readTensorBytes, readTensorF32 } from "../../src/checkpoint/safetensors.js";
import { loadQaJsonl, newDataReport } from "../../src/qa/datasets.js";
import { readDoneKeys, readResults } from "../../src/qa/runner.js";
import { generate } from "../../src/samplers/generate.js";
import {
  bufferReader,
  decodeBlob,
  encodePreamble,
  encodeRecord,
  framedRecords,
  type RawTensor,
  type TraceRecord,
} from "../../src/trace/codec.js";
import { decodeTrace } from "../../src/trace/reader.js";
import { FakeEngine, FakeTokenizer } from "../support/fake-engine.js";
import { writeTinyCheckpoint } from "../support/family-checkpoints.js";
import type { Accepted, Expectation, FuzzTarget, Rng } from "./harness.js";

// ---------------------------------------------------------------- shared helpers

let DIR = "";
const file = (name: string) => path.join(DIR, name);

function records(bytes: Buffer): TraceRecord[] {
  const out: TraceRecord[] = [];
  let i = 0;
  for (const r of framedRecords(bufferReader(bytes), bytes.length, "seed").records)
    out.push(decodeBlob(r.blob, { file: "seed", index: i++, offset: r.offset }));
  return out;
}

function rebuild(recs: TraceRecord[]): Buffer {
  return Buffer.concat([encodePreamble(1), ...recs.map(encodeRecord)]);
}

/** Deep copy of decoded records (tensors copied too), so each case edits its own. */
function clone(recs: TraceRecord[]): TraceRecord[] {
  return recs.map((r) => ({
    kind: r.kind,
    json: structuredClone(r.json),
    tensors: new Map(
      [...r.tensors].map(([n, t]): [string, RawTensor] => [n, { dtype: t.dtype, shape: [...t.shape], data: t.data.slice() }]),
    ),
  }));
}

async function cli(argv: string[]): Promise<Accepted> {
  let output = "";
  const io = { out: (t: string) => (output += t + "\n"), err: (t: string) => (output += t + "\n") };
  try {
    const exitCode = await main(argv, io);
    return { output, exitCode, flagged: /partial/.test(output) };
  } catch (e) {
    return { escaped: `${(e as Error)?.name}: ${String((e as Error)?.message).slice(0, 200)}`, output };
  }
}

function flipBytes(buf: Buffer, rng: Rng, from: number, to: number, k: number): { out: Buffer; at: number[] } {
  const out = Buffer.from(buf);
  const at: number[] = [];
  for (let j = 0; j < k; j++) {
    const p = from + rng.int(to - from);
    out[p] ^= 1 + rng.int(255);
    at.push(p);
  }
  return { out, at };
}

// ---------------------------------------------------------------- traces

const SEEDS: { name: string; bytes: Buffer; recs: TraceRecord[] }[] = [];

async function traceSetup(): Promise<void> {
  if (SEEDS.length) return;
  const tokenizer = new FakeTokenizer();
  for (const family of ["llada", "dream", "llama"] as const) {
    const f = file(`seed-${family}.fstrace`);
    const probes = { received: true, argmax: true, pattern: { layers: [1] } };
    await generate(
      new FakeEngine({ family, probes }),
      [{ text: "t5 t6 t7 t8", regions: [{ name: "query", tokens: [0, 4], chars: [0, 11] }] }],
      { genLength: 4, steps: family === "llama" ? 4 : 2, seed: 7, probes },
      { tokenizer, traceFiles: [f], modelName: `fake-${family}` },
    );
    const bytes = fs.readFileSync(f);
    SEEDS.push({ name: family, bytes, recs: records(bytes) });
  }
}

/** Byte offsets where each record starts (after the preamble), and the file's end. */
function recordStarts(bytes: Buffer): number[] {
  const starts: number[] = [];
  let p = 16;
  while (p < bytes.length) {
    starts.push(p);
    p += 12 + Number(bytes.readBigUInt64LE(p));
  }
  return starts;
}

interface ByteCase {
  what: string;
  bytes: Buffer;
  expect: Expectation;
  allowTruncated: boolean;
}

function traceByteCase(rng: Rng): ByteCase {
  const seed = rng.pick(SEEDS);
  const b = seed.bytes;
  const allowTruncated = rng.int(2) === 0;
  const starts = recordStarts(b);
  switch (rng.int(7)) {
    case 0: {
      const k = 1 + rng.int(4);
      const { out, at } = flipBytes(b, rng, 0, b.length, k);
      // Every byte is covered by the magic, version, reserved field, a length, a CRC or a CRC'd blob.
      return {
        what: `${seed.name}: flip ${k} bytes at ${at.join(", ")}`,
        bytes: out,
        expect: allowTruncated ? "partial" : "reject",
        allowTruncated,
      };
    }
    case 1: {
      const cut = rng.int(b.length);
      const atBoundary = starts.includes(cut);
      return {
        what: `${seed.name}: cut to ${cut} of ${b.length} bytes${atBoundary ? " (a record boundary)" : ""}`,
        bytes: b.subarray(0, cut),
        expect: "partial",
        allowTruncated,
      };
    }
    case 2: {
      // Cut exactly at a record boundary: a clean interruption, read as partial.
      const cut = rng.pick(starts.slice(1));
      return { what: `${seed.name}: cut at record boundary ${cut}`, bytes: b.subarray(0, cut), expect: "partial", allowTruncated };
    }
    case 3: {
      const p = rng.pick(starts);
      const out = Buffer.from(b);
      const lie =
        rng.int(3) === 0
          ? BigInt(rng.int(2 ** 31)) * 4099n
          : BigInt(Number(b.readBigUInt64LE(p)) + (rng.int(2) ? 1 : -1) * (1 + rng.int(64)));
      out.writeBigUInt64LE(lie < 0n ? 0n : lie, p);
      return {
        what: `${seed.name}: record length at ${p} set to ${lie}`,
        bytes: out,
        expect: allowTruncated ? "partial" : "reject",
        allowTruncated,
      };
    }
    case 4: {
      const p = 16 + rng.int(b.length - 16);
      const ins = Buffer.from(Array.from({ length: 1 + rng.int(16) }, () => rng.int(256)));
      return {
        what: `${seed.name}: insert ${ins.length} bytes at ${p}`,
        bytes: Buffer.concat([b.subarray(0, p), ins, b.subarray(p)]),
        expect: allowTruncated ? "partial" : "reject",
        allowTruncated,
      };
    }
    case 5: {
      const out = Buffer.from(b);
      const field = rng.int(3);
      if (field === 0) out.writeUInt32LE(2 + rng.int(1000), 8);
      else if (field === 1) out.writeUInt32LE(1 + rng.int(2 ** 31), 12);
      else out[rng.int(8)] ^= 1 + rng.int(255);
      return {
        what: `${seed.name}: preamble ${["version", "reserved", "magic"][field]} changed`,
        bytes: out,
        expect: "reject",
        allowTruncated,
      };
    }
    default: {
      const extra = Buffer.from(Array.from({ length: 1 + rng.int(40) }, () => rng.int(256)));
      return {
        what: `${seed.name}: ${extra.length} bytes appended after the end record`,
        bytes: Buffer.concat([b, extra]),
        expect: allowTruncated ? "partial" : "reject",
        allowTruncated,
      };
    }
  }
}

type Edit = { what: string; expect: Expectation; apply(recs: TraceRecord[], rng: Rng): void };

const meta = (r: TraceRecord[]) => r[0].json as Record<string, any>;
const steps = (r: TraceRecord[]) => r.filter((x) => x.kind === "step");
const kindIndex = (r: TraceRecord[], kind: string) => r.findIndex((x) => x.kind === kind);
const anyStep = (r: TraceRecord[], rng: Rng) => rng.pick(steps(r));
const probeNames = (rec: TraceRecord) => [...rec.tensors.keys()].filter((n) => n.startsWith("blocks."));

/** One semantic edit each; the CRCs stay valid, so only the reader's checks can catch it. */
const EDITS: Edit[] = [
  {
    what: "meta numLayers changed",
    expect: "reject",
    apply: (r, g) => {
      meta(r).model.numLayers += g.pick([-1, 1, 2, 97]);
    },
  },
  {
    what: "meta numHeads changed",
    expect: "reject",
    apply: (r, g) => {
      meta(r).model.numHeads += g.pick([1, 2, 5]);
    },
  },
  {
    what: "meta claims an absurd size (2^31 heads, genLength 2^40, 10^12 steps)",
    expect: "reject",
    apply: (r, g) => {
      const m = meta(r);
      const which = g.int(3);
      if (which === 0) m.model.numHeads = m.model.numKvHeads = 2 ** 31;
      else if (which === 1) m.settings.genLength = 2 ** 40;
      else m.settings.steps = 1e12;
    },
  },
  {
    what: "meta numKvHeads does not divide numHeads",
    expect: "reject",
    apply: (r) => {
      meta(r).model.numKvHeads = meta(r).model.numHeads + 1;
    },
  },
  {
    what: "meta headDim changed (nothing recorded has a dHead axis)",
    expect: "any",
    apply: (r, g) => {
      meta(r).model.headDim += 1 + g.int(8);
    },
  },
  {
    what: "meta promptLength differs from prompt.ids",
    expect: "reject",
    apply: (r, g) => {
      meta(r).prompt.promptLength += g.pick([-1, 1, 5]);
    },
  },
  {
    what: "meta prompt id changed",
    expect: "reject",
    apply: (r, g) => {
      const ids = meta(r).prompt.ids;
      ids[g.int(ids.length)] += 1 + g.int(3);
    },
  },
  {
    what: "meta formatVersion changed",
    expect: "reject",
    apply: (r, g) => {
      meta(r).formatVersion = g.pick([0, 2, 3, "1", null]);
    },
  },
  {
    what: "meta family unknown",
    expect: "reject",
    apply: (r, g) => {
      meta(r).model.family = g.pick(["gpt2", "", 3]);
    },
  },
  {
    what: "meta causal not a boolean",
    expect: "reject",
    apply: (r, g) => {
      meta(r).model.causal = g.pick(["yes", 1, null]);
    },
  },
  {
    what: "meta settings, device or model name changed",
    expect: "any",
    apply: (r, g) => {
      const m = meta(r);
      if (g.int(2)) m.settings.temperature = g.next();
      else m.device = "cuda";
      m.model.name = "other";
    },
  },
  {
    what: "meta probe request promises self",
    expect: "reject",
    apply: (r) => {
      meta(r).probes.self = true;
    },
  },
  {
    what: "meta probe request promises a pattern layer not recorded",
    expect: "reject",
    apply: (r) => {
      meta(r).probes.pattern = { layers: [0, 1] };
    },
  },
  {
    what: "meta promptTokens of the wrong length",
    expect: "reject",
    apply: (r) => {
      meta(r).promptTokens.push("x");
    },
  },
  {
    what: "meta region token span beyond the canvas",
    expect: "reject",
    apply: (r) => {
      meta(r).prompt.regions[0].tokens = [0, 999];
    },
  },
  {
    what: "meta region token span reversed",
    expect: "reject",
    apply: (r) => {
      meta(r).prompt.regions[0].tokens = [3, 1];
    },
  },
  {
    what: "meta prompt text shortened below its offsets (character spans are not checked)",
    expect: "any",
    apply: (r) => {
      meta(r).prompt.text = meta(r).prompt.text.slice(0, 2);
    },
  },
  {
    what: "meta eosTokenIds not integers",
    expect: "reject",
    apply: (r) => {
      meta(r).model.eosTokenIds = ["2"];
    },
  },
  {
    what: "meta unknown json field added",
    expect: "any",
    apply: (r) => {
      meta(r).futureField = { x: 1 };
    },
  },
  {
    what: "step number changed",
    expect: "reject",
    apply: (r, g) => {
      anyStep(r, g).json.step = 7 + g.int(5);
    },
  },
  {
    what: "step tensor dtype flipped",
    expect: "reject",
    apply: (r, g) => {
      const s = anyStep(r, g);
      const n = g.pick(["canvas", "confidence", "transferred", ...probeNames(s)]);
      const t = s.tensors.get(n)!;
      s.tensors.set(n, {
        ...t,
        dtype: t.dtype === "F32" ? "I32" : "F32",
        data: t.dtype === "F32" ? new Int32Array(t.data.buffer.slice(0)) : new Float32Array(t.data.buffer.slice(0)),
      });
    },
  },
  {
    what: "step required tensor removed",
    expect: "reject",
    apply: (r, g) => {
      anyStep(r, g).tensors.delete(g.pick(["canvas", "transferred", "tokens", "confidence", "producing_row"]));
    },
  },
  {
    what: "step probe removed with its listing",
    expect: "reject",
    apply: (r, g) => {
      const s = anyStep(r, g);
      const n = g.pick(probeNames(s));
      s.tensors.delete(n);
      delete (s.json.probes as Record<string, unknown>)[n];
    },
  },
  {
    what: "step probe listed but its tensor missing",
    expect: "reject",
    apply: (r, g) => {
      const s = anyStep(r, g);
      s.tensors.delete(g.pick(probeNames(s)));
    },
  },
  {
    what: "step unlisted tensor added",
    expect: "reject",
    apply: (r, g) => {
      anyStep(r, g).tensors.set(g.pick(["extra", "toString", "__proto__", "blocks.0.attn.constructor"]), {
        dtype: "F32",
        shape: [1],
        data: new Float32Array(1),
      });
    },
  },
  {
    what: "step probe listed under a prototype key",
    expect: "reject",
    apply: (r, g) => {
      const s = anyStep(r, g);
      (s.json.probes as Record<string, unknown>)["blocks.0.attn.constructor"] = ["key"];
      s.tensors.set("blocks.0.attn.constructor", { dtype: "F32", shape: [1], data: new Float32Array(1) });
    },
  },
  {
    what: "step probe values changed",
    expect: "any",
    apply: (r, g) => {
      const s = anyStep(r, g);
      const t = s.tensors.get(g.pick(probeNames(s)))!;
      t.data[g.int(t.data.length)] = g.next();
    },
  },
  {
    what: "step writes into the prompt",
    expect: "reject",
    apply: (r, g) => {
      const s = steps(r).find((x) => x.tensors.get("transferred")!.data.length > 0) ?? anyStep(r, g);
      const t = s.tensors.get("transferred")!;
      if (t.data.length === 0) {
        s.tensors.set("transferred", { dtype: "I32", shape: [1], data: Int32Array.from([0]) });
        return;
      }
      t.data[0] = 0;
    },
  },
  {
    what: "step tokens of another length than transferred",
    expect: "reject",
    apply: (r, g) => {
      const s = anyStep(r, g);
      const t = s.tensors.get("tokens")!;
      s.tensors.set("tokens", { dtype: "I32", shape: [t.shape[0] + 1], data: Int32Array.from([...t.data, 5]) });
    },
  },
  {
    what: "step producing row out of range",
    expect: "reject",
    apply: (r) => {
      const s = steps(r).find((x) => x.tensors.get("producing_row")!.data.length > 0);
      if (s) s.tensors.get("producing_row")!.data[0] = 9999;
      else meta(r).model.numLayers = 0;
    },
  },
  {
    what: "step tokenStrings of the wrong length",
    expect: "reject",
    apply: (r, g) => {
      (anyStep(r, g).json.tokenStrings as string[]).push("a", "b", "c");
    },
  },
  {
    what: "step canvas shorter than the prompt",
    expect: "reject",
    apply: (r, g) => {
      const s = anyStep(r, g);
      s.tensors.set("canvas", { dtype: "I32", shape: [1], data: Int32Array.from([5]) });
    },
  },
  {
    what: "two steps swapped",
    expect: "reject",
    apply: (r) => {
      const i = kindIndex(r, "step");
      [r[i], r[i + 1]] = [r[i + 1], r[i]];
    },
  },
  {
    what: "a step duplicated",
    expect: "reject",
    apply: (r) => {
      const i = kindIndex(r, "step");
      r.splice(i + 1, 0, r[i]);
    },
  },
  {
    what: "a second meta record",
    expect: "reject",
    apply: (r) => {
      r.splice(1, 0, r[0]);
    },
  },
  {
    what: "a record after the end record",
    expect: "reject",
    apply: (r) => {
      r.push(r[kindIndex(r, "step")]);
    },
  },
  {
    what: "end record dropped",
    expect: "partial",
    apply: (r) => {
      r.pop();
    },
  },
  {
    what: "final record dropped, end kept",
    expect: "reject",
    apply: (r) => {
      r.splice(kindIndex(r, "final"), 1);
    },
  },
  {
    what: "final and end dropped",
    expect: "partial",
    apply: (r) => {
      r.splice(kindIndex(r, "final"));
    },
  },
  {
    what: "last steps, final and end dropped",
    expect: "partial",
    apply: (r) => {
      r.splice(kindIndex(r, "final") - 1);
    },
  },
  {
    what: "end stepCount changed",
    expect: "reject",
    apply: (r, g) => {
      r[r.length - 1].json.stepCount = (r[r.length - 1].json.stepCount as number) + g.pick([-1, 1, 10]);
    },
  },
  {
    what: "end tokens of the wrong length",
    expect: "reject",
    apply: (r) => {
      (r[r.length - 1].json.tokens as string[]).pop();
    },
  },
  {
    what: "end offsets of the wrong length",
    expect: "reject",
    apply: (r) => {
      (r[r.length - 1].json.offsets as unknown[]).push([0, 0]);
    },
  },
  {
    what: "end answer not a string",
    expect: "reject",
    apply: (r) => {
      r[r.length - 1].json.answer = 5;
    },
  },
  {
    what: "end unmasked_at out of range",
    expect: "reject",
    apply: (r, g) => {
      const t = r[r.length - 1].tensors.get("unmasked_at")!;
      t.data[g.int(t.data.length)] = g.pick([-5, 99]);
    },
  },
  {
    what: "final sequence prompt id changed",
    expect: "reject",
    apply: (r) => {
      r[kindIndex(r, "final")].tensors.get("sequence")!.data[0] += 1;
    },
  },
  {
    what: "final sequence of another length",
    expect: "reject",
    apply: (r) => {
      const f = r[kindIndex(r, "final")];
      const t = f.tensors.get("sequence")!;
      f.tensors.set("sequence", { dtype: "I32", shape: [t.shape[0] + 1], data: Int32Array.from([...t.data, 3]) });
    },
  },
  {
    what: "a step's kind changed to final",
    expect: "reject",
    apply: (r) => {
      r[kindIndex(r, "step")].kind = "final";
    },
  },
  {
    what: "final probe values changed",
    expect: "any",
    apply: (r, g) => {
      const f = r[kindIndex(r, "final")];
      const t = f.tensors.get(g.pick(probeNames(f)))!;
      t.data[0] = g.next();
    },
  },
];

function traceRecordCase(rng: Rng): { what: string; bytes: Buffer; expect: Expectation } {
  const seed = rng.pick(SEEDS);
  const edit = rng.pick(EDITS);
  const recs = clone(seed.recs);
  edit.apply(recs, rng);
  return { what: `${seed.name}: ${edit.what}`, bytes: rebuild(recs), expect: edit.expect };
}

const traceBytes: FuzzTarget = {
  name: "trace-bytes",
  count: 600,
  setup: traceSetup,
  make(rng) {
    const c = traceByteCase(rng);
    return {
      what: `${c.what}${c.allowTruncated ? " (allowTruncated)" : ""}`,
      expect: c.expect,
      run: () => ({ flagged: decodeTrace(c.bytes, "case.fstrace", { allowTruncated: c.allowTruncated }).partial }),
    };
  },
};

const traceRecords: FuzzTarget = {
  name: "trace-records",
  count: 800,
  setup: traceSetup,
  make(rng) {
    const c = traceRecordCase(rng);
    return { what: c.what, expect: c.expect, run: () => ({ flagged: decodeTrace(c.bytes, "case.fstrace").partial }) };
  },
};

const ANALYSES = ["absorption", "drift", "qk", "retrieval", "rollout", "token-types"];

const traceCli: FuzzTarget = {
  name: "trace-cli",
  count: 150,
  setup: traceSetup,
  make(rng) {
    const c = rng.int(2) ? traceRecordCase(rng) : { ...traceByteCase(rng) };
    const analysis = rng.pick(ANALYSES);
    return {
      what: `analyze ${analysis}: ${c.what}`,
      // A refused trace is a nonzero exit with a message; an accepted partial one must say "partial".
      expect: c.expect === "reject" ? "reject" : c.expect === "partial" ? "partial" : "any",
      async run() {
        const f = file("cli.fstrace");
        fs.writeFileSync(f, c.bytes);
        return cli(["analyze", analysis, f, ...(rng.int(2) ? ["--json"] : [])]);
      },
    };
  },
};

// ---------------------------------------------------------------- safetensors

let ST_SEED: Buffer = Buffer.alloc(0);
let CKPT_DIR = "";

function stHeader(b: Buffer): { json: Record<string, any>; dataStart: number } {
  const n = Number(b.readBigUInt64LE(0));
  return { json: JSON.parse(b.toString("utf8", 8, 8 + n)), dataStart: 8 + n };
}

function stRebuild(json: unknown, data: Buffer, pad = true): Buffer {
  let text = JSON.stringify(json);
  if (pad) text += " ".repeat((8 - (Buffer.byteLength(text) % 8)) % 8);
  const head = Buffer.alloc(8);
  head.writeBigUInt64LE(BigInt(Buffer.byteLength(text)));
  return Buffer.concat([head, Buffer.from(text), data]);
}

function safetensorsCase(rng: Rng): { what: string; bytes: Buffer; expect: Expectation } {
  const b = ST_SEED;
  const { json, dataStart } = stHeader(b);
  const data = b.subarray(dataStart);
  const names = Object.keys(json).filter((k) => k !== "__metadata__");
  const name = rng.pick(names);
  const e = json[name];
  const edit = (what: string, expect: Expectation, f: () => void) => {
    f();
    return { what, bytes: stRebuild(json, data), expect };
  };
  switch (rng.int(16)) {
    case 0:
      return edit(`${name}.dtype unknown`, "reject", () => {
        e.dtype = rng.pick(["F8", "f32", "", "constructor", "toString"]);
      });
    case 1:
      return edit(`${name}.dtype of another size`, "reject", () => {
        e.dtype = e.dtype === "F32" ? rng.pick(["F16", "F64", "I8"]) : "F64";
      });
    case 2:
      return edit(`${name}.shape element not a natural number`, "reject", () => {
        e.shape[rng.int(e.shape.length)] = rng.pick([-1, 1.5, "4", null, 2 ** 60]);
      });
    case 3:
      return edit(`${name}.shape with another element count`, "reject", () => {
        e.shape[0] += 1 + rng.int(4);
      });
    case 4:
      return edit(`${name}.shape reshaped, same count`, "any", () => {
        e.shape = [e.shape.reduce((a: number, x: number) => a * x, 1)];
      });
    case 5:
      return edit(`${name}.data_offsets past the data`, "reject", () => {
        e.data_offsets = [e.data_offsets[0], data.length + 1 + rng.int(100)];
      });
    case 6:
      return edit(`${name}.data_offsets reversed or malformed`, "reject", () => {
        e.data_offsets = rng.pick([[e.data_offsets[1], e.data_offsets[0]], [0], "0,4", [-4, 0], null]);
      });
    case 7:
      return edit(`${name}.data_offsets shifted onto a neighbour`, "reject", () => {
        const d = rng.pick([-4, 4, 8]);
        e.data_offsets = [e.data_offsets[0] + d, e.data_offsets[1] + d];
      });
    case 8:
      return edit(`tensor ${name} removed from the header (its bytes become a gap)`, "reject", () => {
        delete json[name];
      });
    case 9:
      return edit("__metadata__ value not a string", "reject", () => {
        json.__metadata__ = { format: rng.pick([1, null, ["pt"], { a: 1 }]) };
      });
    case 10:
      return edit("__metadata__ string values changed", "any", () => {
        json.__metadata__ = { format: "pt", note: "x".repeat(rng.int(50)) };
      });
    case 11:
      return edit(`entry ${name} not an object`, "reject", () => {
        json[name] = rng.pick([null, 3, "x", [1, 2]]);
      });
    case 12: {
      const v = rng.pick([[], 3, "header", null]);
      return { what: `header is ${JSON.stringify(v)}`, bytes: stRebuild(v, data), expect: "reject" };
    }
    case 13: {
      const out = Buffer.from(b);
      const n = Number(b.readBigUInt64LE(0));
      const lie = rng.pick([n - 1 - rng.int(7), n + 1 + rng.int(16), 0, 2 ** 40, b.length]);
      out.writeBigUInt64LE(BigInt(Math.max(0, lie)));
      return { what: `header length ${n} → ${lie}`, bytes: out, expect: lie === n ? "any" : "reject" };
    }
    case 14: {
      const cut = rng.int(b.length);
      return { what: `file cut to ${cut} of ${b.length} bytes`, bytes: b.subarray(0, cut), expect: "reject" };
    }
    default: {
      if (rng.int(2))
        return {
          what: "bytes appended after the last tensor",
          bytes: Buffer.concat([b, Buffer.alloc(1 + rng.int(32), 7)]),
          expect: "reject",
        };
      const { out, at } = flipBytes(b, rng, 8, b.length, 1 + rng.int(3));
      // A flip in tensor data changes weights, not structure; a flip in the JSON may still parse.
      return { what: `flip bytes at ${at.join(", ")}`, bytes: out, expect: "any" };
    }
  }
}

function readAllTensors(f: string): Accepted {
  const h = readSafetensorsHeader(f);
  for (const t of h.tensors) {
    readTensorBytes(t);
    if (t.dtype === "F32" || t.dtype === "F16" || t.dtype === "BF16" || t.dtype === "F64") readTensorF32(t);
  }
  return {};
}

const safetensors: FuzzTarget = {
  name: "safetensors",
  count: 600,
  async setup() {
    if (ST_SEED.length) return;
    CKPT_DIR = file("ckpt");
    writeTinyCheckpoint(CKPT_DIR, "llama", { layers: 1, hidden: 8, heads: 2, kvHeads: 1, ffn: 16, vocab: 16, seed: 3 });
    ST_SEED = fs.readFileSync(path.join(CKPT_DIR, "model.safetensors"));
  },
  make(rng) {
    const c = safetensorsCase(rng);
    return {
      what: c.what,
      expect: c.expect,
      run() {
        const f = file("case.safetensors");
        fs.writeFileSync(f, c.bytes);
        return readAllTensors(f);
      },
    };
  },
};

const checkpointCli: FuzzTarget = {
  name: "checkpoint-cli",
  count: 80,
  setup: safetensors.setup,
  make(rng) {
    const c = safetensorsCase(rng);
    return {
      what: `inspect: ${c.what}`,
      expect: c.expect,
      async run() {
        const dir = file("ckpt-case");
        fs.rmSync(dir, { recursive: true, force: true });
        fs.cpSync(CKPT_DIR, dir, { recursive: true });
        fs.writeFileSync(path.join(dir, "model.safetensors"), c.bytes);
        return cli(["inspect", dir, "--json"]);
      },
    };
  },
};

// ---------------------------------------------------------------- QA data

const record = (i: number) => ({
  question: `who wrote book ${i}?`,
  answers: [`author ${i}`],
  ctxs: [
    { title: `Book ${i}`, text: `Book ${i} was written by author ${i}.`, hasanswer: true, isgold: true },
    { title: "Other", text: "An unrelated passage.", hasanswer: false, isgold: false },
  ],
});

interface DataCase {
  what: string;
  bytes: Buffer;
  expect: Expectation;
  maxLineBytes?: number;
}

function dataCase(rng: Rng): DataCase {
  const recs = Array.from({ length: 4 }, (_, i) => record(i));
  const j = rng.int(recs.length);
  const r = recs[j] as Record<string, any>;
  const lines = () => recs.map((x) => JSON.stringify(x));
  const text = (ls: string[]) => Buffer.from(ls.join("\n") + "\n");
  const edit = (what: string, expect: Expectation, f: () => void): DataCase => {
    f();
    return { what: `line ${j + 1}: ${what}`, bytes: text(lines()), expect };
  };
  switch (rng.int(20)) {
    case 0:
      return edit("a required field removed", "reject", () => {
        delete r[rng.pick(["question", "answers", "ctxs"])];
      });
    case 1:
      return edit("question not a non-empty string", "reject", () => {
        r.question = rng.pick([3, "", "   ", null, ["q"]]);
      });
    case 2:
      return edit("answers not a list of strings", "reject", () => {
        r.answers = rng.pick(["a", 3, [1], [null], { a: 1 }]);
      });
    case 3:
      return edit("answers: []", "partial", () => {
        r.answers = [];
      });
    case 4:
      return edit("a blank answer", "partial", () => {
        r.answers = [rng.pick(["", " ", "\t"])];
      });
    case 5:
      return edit("ctxs not a list", "reject", () => {
        r.ctxs = rng.pick([{}, "p", 3]);
      });
    case 6:
      return edit("a ctx not an object", "reject", () => {
        r.ctxs[0] = rng.pick(["p", 3, null, []]);
      });
    case 7:
      return edit("a ctx without text", "reject", () => {
        delete r.ctxs[rng.int(2)].text;
      });
    case 8:
      return edit("a ctx without title", "partial", () => {
        delete r.ctxs[rng.int(2)].title;
      });
    case 9:
      return edit("two gold passages", "partial", () => {
        r.ctxs[1].isgold = true;
      });
    case 10:
      return edit("isgold / hasanswer not a boolean", "reject", () => {
        r.ctxs[0][rng.pick(["isgold", "hasanswer"])] = rng.pick(["yes", 1, [true]]);
      });
    case 11:
      return edit("a ctx without hasanswer", "partial", () => {
        delete r.ctxs[rng.int(2)].hasanswer;
      });
    case 12: {
      const ls = lines();
      const cut = 1 + rng.int(ls[j].length - 2);
      ls[j] = ls[j].slice(0, cut);
      return { what: `line ${j + 1} cut at character ${cut}`, bytes: text(ls), expect: "reject" };
    }
    case 13: {
      const ls = lines();
      const bytes = text(ls);
      const { out, at } = flipBytes(bytes, rng, 0, bytes.length, 1 + rng.int(3));
      return { what: `flip bytes at ${at.join(", ")}`, bytes: out, expect: "any" };
    }
    case 14: {
      const ls = lines();
      const b = Buffer.from(ls[j]);
      const p = ls[j].indexOf("Book") + 1;
      const bad = Buffer.concat([b.subarray(0, p), Buffer.from([rng.pick([0xff, 0xc3, 0xe9, 0x80])]), b.subarray(p)]);
      return {
        what: `line ${j + 1}: invalid UTF-8 inside a string`,
        bytes: Buffer.concat([
          Buffer.from(
            ls
              .slice(0, j)
              .map((l) => l + "\n")
              .join(""),
          ),
          bad,
          Buffer.from("\n" + ls.slice(j + 1).join("\n") + "\n"),
        ]),
        expect: "reject",
      };
    }
    case 15:
      return { what: "blank lines and CRLF endings", bytes: Buffer.from(lines().join("\r\n\r\n  \r\n")), expect: "any" };
    case 16: {
      const gz = zlib.gzipSync(text(lines()));
      if (rng.int(2)) {
        const cut = 10 + rng.int(gz.length - 10);
        return { what: `gzip cut to ${cut} of ${gz.length} bytes`, bytes: gz.subarray(0, cut), expect: "reject" };
      }
      const { out, at } = flipBytes(gz, rng, 10, gz.length, 1);
      return { what: `gzip: flip a compressed byte at ${at[0]}`, bytes: out, expect: "reject" };
    }
    case 17:
      return { what: "a line longer than the per-line cap (maxLineBytes 100)", bytes: text(lines()), expect: "reject", maxLineBytes: 100 };
    case 18:
      return edit("top level not an object", "reject", () => {
        recs[j] = rng.pick([[1, 2], 3, "q", null]) as never;
      });
    default:
      return edit("a deeply nested value in a wrong field", "reject", () => {
        let v: unknown = 1;
        for (let k = 0; k < 5000; k++) v = [v];
        r.question = v;
      });
  }
}

const qaData: FuzzTarget = {
  name: "qa-data",
  count: 500,
  async setup() {},
  make(rng) {
    const c = dataCase(rng);
    return {
      what: c.what,
      expect: c.expect,
      async run() {
        const f = file("case.jsonl");
        fs.writeFileSync(f, c.bytes);
        const report = newDataReport();
        await loadQaJsonl(f, { report, maxLineBytes: c.maxLineBytes });
        return { flagged: Object.keys(report.suspicious).length > 0 };
      },
    };
  },
};

// ---------------------------------------------------------------- results files

const row = (i: number) =>
  JSON.stringify({
    id: `${i}-abcdef0123`,
    row: i,
    setting: "oracle",
    model: "m",
    question: "q",
    answers: ["a"],
    passages: 1,
    goldIndex: 0,
    accuracy: 1,
    f1: 1,
    exactMatch: 1,
  });

function resultsCase(rng: Rng): { what: string; bytes: Buffer; expect: Expectation } {
  const ls = [row(0), row(1), row(2)];
  const whole = Buffer.from(ls.join("\n") + "\n");
  switch (rng.int(6)) {
    case 0: {
      const cut = rng.int(whole.length);
      return { what: `cut to ${cut} of ${whole.length} bytes (a torn last line)`, bytes: whole.subarray(0, cut), expect: "any" };
    }
    case 1: {
      ls[rng.int(2)] = rng.pick(["{garbage", "not json", "[1, 2", "\u0000\u0001"]);
      return { what: "a malformed line before the last", bytes: Buffer.from(ls.join("\n") + "\n"), expect: "reject" };
    }
    case 2: {
      ls[rng.int(3)] = rng.pick([
        "null",
        "42",
        "[]",
        '"row"',
        JSON.stringify({ id: 1, setting: "oracle", model: "m" }),
        JSON.stringify({ id: "x" }),
        JSON.stringify({ id: "x", setting: "s", model: "m", error: 3 }),
      ]);
      return { what: "a JSON line that is not a result row", bytes: Buffer.from(ls.join("\n") + "\n"), expect: "reject" };
    }
    case 3:
      return {
        what: "binary data",
        bytes: Buffer.from(Array.from({ length: 1 + rng.int(64) }, (_, k) => (k === 0 ? 0x89 : rng.int(256)))),
        expect: "reject",
      };
    case 4: {
      const b = Buffer.from(whole);
      b[rng.int(b.length - 1)] = rng.pick([0xff, 0xc3, 0x80]);
      return { what: "an invalid UTF-8 byte", bytes: b, expect: "reject" };
    }
    default: {
      const { out, at } = flipBytes(whole, rng, 0, whole.length, 1);
      return { what: `flip a byte at ${at[0]}`, bytes: out, expect: "any" };
    }
  }
}

const results: FuzzTarget = {
  name: "results",
  count: 300,
  async setup() {},
  make(rng) {
    const c = resultsCase(rng);
    return {
      what: c.what,
      expect: c.expect,
      run() {
        const f = file("results.jsonl");
        fs.writeFileSync(f, c.bytes);
        readDoneKeys(f);
        readResults(f);
        return {};
      },
    };
  },
};

/** Every target the suite runs, in order (add new parsers here). */
export const TARGETS: FuzzTarget[] = [traceBytes, traceRecords, traceCli, safetensors, checkpointCli, qaData, results];

export function setDir(dir: string): void {
  DIR = dir;
}

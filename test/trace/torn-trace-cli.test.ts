/**
 * A trace torn by SIGKILL: a writer process is killed inside the write of its 11th record, leaving
 * 10 complete records and a cut-short tail. From the library, the error names `allowTruncated`;
 * from the CLI it names `--allow-truncated`, which reads the 10 records and marks the result
 * partial in text and JSON.
 */
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { main } from "../../src/cli/main.js";
import { generate } from "../../src/samplers/generate.js";
import { TruncatedTraceError } from "../../src/trace/partial.js";
import { readTrace } from "../../src/trace/reader.js";
import { TraceFormatError } from "../../src/util/errors.js";
import { FakeEngine, FakeTokenizer } from "../support/fake-engine.js";

const root = path.resolve(import.meta.dirname, "..", "..");
const TSX = pathToFileURL(path.join(root, "node_modules/tsx/dist/loader.mjs")).href;
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "fs-torn-"));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

const COMPLETE = 10;
const STEPS = 12;
/** Size of the record being written when the kill comes: large enough that its write takes a while. */
const BIG_MIB = 48;

async function cli(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = "",
    err = "";
  const code = await main(argv, { out: (t) => (out += t + "\n"), err: (t) => (err += t + "\n") });
  return { code, out, err };
}

/**
 * Run torn-writer.ts and SIGKILL it as soon as the file grows past its 10 complete records (the
 * big record's write has begun). Returns the bytes of the 10 records and whether the tail is cut.
 */
async function killWriter(src: string, out: string): Promise<{ complete: number; size: number }> {
  const child = spawn(
    process.execPath,
    ["--import", TSX, path.join(import.meta.dirname, "torn-writer.ts"), src, out, String(COMPLETE), String(BIG_MIB)],
    {
      stdio: ["ignore", "pipe", "inherit"],
    },
  );
  const exited = new Promise<NodeJS.Signals | null>((resolve) => child.once("exit", (_c, sig) => resolve(sig)));
  const complete = await new Promise<number>((resolve, reject) => {
    let buf = "";
    child.stdout!.on("data", (d: Buffer) => {
      buf += d.toString();
      const m = /ready (\d+)\n/.exec(buf);
      if (m) resolve(Number(m[1]));
    });
    child.once("exit", () => reject(new Error(`writer exited before it was ready: ${buf}`)));
  });
  // Busy-wait on purpose: the kill must follow the first byte of the big record as closely as possible.
  const deadline = Date.now() + 30_000;
  while (fs.statSync(out).size <= complete && Date.now() < deadline);
  child.kill("SIGKILL");
  expect(await exited).toBe("SIGKILL");
  return { complete, size: fs.statSync(out).size };
}

let torn: string;
let how: string;

beforeAll(async () => {
  const src = path.join(tmp, "full.fstrace");
  const probes = { received: true, argmax: true };
  await generate(
    new FakeEngine({ family: "llada", probes }),
    ["t5 t6 t7"],
    { genLength: STEPS, steps: STEPS, seed: 3, probes },
    {
      tokenizer: new FakeTokenizer(),
      traceFiles: [src],
      modelName: "fake",
    },
  );
  torn = path.join(tmp, "torn.fstrace");
  // The kill usually lands inside the big write; if a fast disk finished it first, try again, and
  // in the end cut the 11th record by hand (the same bytes a slower disk would have left).
  for (let attempt = 1; ; attempt++) {
    const { complete, size } = await killWriter(src, torn);
    if (size > complete && size < complete + BIG_MIB * 2 ** 20) {
      how = `SIGKILL inside the 11th record's write (attempt ${attempt}: ${size - complete} of its bytes on disk)`;
      break;
    }
    if (attempt === 3) {
      fs.truncateSync(torn, complete + 1000);
      how = "SIGKILL after the 11th record's write (3 attempts); its tail cut by hand";
      break;
    }
  }
  console.log(`torn trace: ${how}`);
}, 120_000);

describe("a trace torn by SIGKILL", () => {
  it("the library refuses it naming its option, allowTruncated, and reads the 10 records with it", () => {
    let e: unknown;
    try {
      readTrace(torn);
    } catch (x) {
      e = x;
    }
    expect(e).toBeInstanceOf(TruncatedTraceError);
    expect(e).toBeInstanceOf(TraceFormatError);
    expect((e as TruncatedTraceError).complete).toBe(COMPLETE);
    expect((e as TruncatedTraceError).hint).toMatch(/readTrace\(file, \{ allowTruncated: true \}\)/);
    const t = readTrace(torn, { allowTruncated: true });
    expect(t.partial).toBe(true);
    expect(t.steps.length).toBe(COMPLETE - 1);
  });

  it("the CLI refuses it naming its flag, --allow-truncated (not the library option)", async () => {
    const r = await cli("analyze", "drift", torn);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/Trace file is truncated/);
    expect(r.err).toMatch(/hint: pass --allow-truncated to analyse its 10 complete records as a partial trace/);
    expect(r.err).not.toMatch(/allowTruncated/);
  });

  it("with --allow-truncated the CLI analyses the 10 complete records and marks the result partial (JSON)", async () => {
    const r = await cli("analyze", "drift", torn, "--allow-truncated", "--json");
    expect(r.code, r.err).toBe(0);
    const j = JSON.parse(r.out);
    expect(j.partial).toBe(true);
    expect(j.partialTraces).toHaveLength(1);
    // meta + 9 steps read; a finished run of 12 steps writes meta + 12 steps + final + end
    expect(j.partialTraces[0]).toMatchObject({ file: torn, records: 10, expected: STEPS + 3, steps: 9, plannedSteps: STEPS, cut: true });
    expect(j.partialTraces[0].summary).toMatch(/its last record was cut short/);
    expect(j.steps).toHaveLength(9); // the steps the drift matrix covers
  });

  it("with --allow-truncated the text output says PARTIAL before the tables", async () => {
    const r = await cli("analyze", "drift", torn, "--allow-truncated");
    expect(r.code, r.err).toBe(0);
    const first = r.out.split("\n")[0];
    expect(first).toMatch(/^PARTIAL: partial trace .*torn\.fstrace.*\(10 of 15 records\)$/);
  });

  it("a complete trace is not marked partial", async () => {
    const r = await cli("analyze", "drift", path.join(tmp, "full.fstrace"), "--json");
    expect(r.code, r.err).toBe(0);
    expect(JSON.parse(r.out)).toMatchObject({ partial: false, partialTraces: [] });
  });
});

/**
 * The fuzz harness: seeded cases, one verdict each, and the four things that fail the suite.
 *
 *   crash            the parser threw something that is not a typed `FloatscopeError`
 *   hang             a case ran past the per-case time limit (the supervisor kills the worker)
 *   stack trace      a CLI run printed a stack frame, or `main` rejected (the top level would print one)
 *   silent accept    a mutation that must be detected (`expect: "reject"`) was accepted, or a partial
 *                    input (`expect: "partial"`) was accepted without saying so
 *
 * A case is a pure function of (target, seed, index): every failure is reproduced by its index alone
 * (`FUZZ_SEED`, `FUZZ_ONLY=target:index`).
 */
import { FloatscopeError } from "../../src/util/errors.js";

/** What a mutation must lead to. "any": accepting and a typed refusal are both right. */
export type Expectation = "reject" | "partial" | "any";

/** What the target reported when it accepted the input. */
export interface Accepted {
  /** The input was read as partial / flagged (a trace's `partial`, a data report's suspicious count). */
  flagged?: boolean;
  /** CLI output (stdout + stderr), scanned for stack frames. */
  output?: string;
  /** The CLI's `main` rejected (an exception escaped the command). */
  escaped?: string;
  /** The CLI's exit code: nonzero is a refusal (with its message in `output`). */
  exitCode?: number;
}

export interface FuzzCase {
  /** What was done to the seed input, e.g. "flip 3 bytes at 120, 512, 900". */
  what: string;
  expect: Expectation;
  /** Run the parser; resolves when it accepted, throws when it refused. */
  run(): Promise<Accepted> | Accepted;
}

export interface FuzzTarget {
  name: string;
  /** Cases in one run (kept small enough for the whole suite to finish in well under a minute). */
  count: number;
  /** Build what the cases mutate (seed files, sample traces); called once per worker. */
  setup(dir: string): Promise<void>;
  /** Case `index` of this target; `rng` is seeded from (seed, target, index). */
  make(rng: Rng, index: number): FuzzCase;
}

export type Verdict = "accepted" | "refused" | "crash" | "stack trace" | "silent acceptance";

export interface CaseOutcome {
  target: string;
  index: number;
  verdict: Verdict | "hang";
  what: string;
  detail?: string;
}

/** A stack frame as Node prints it ("    at f (file.js:1:2)" or "    at file.js:1:2"). */
const STACK_FRAME = /^\s+at\s+\S.*(:\d+:\d+\)?|\(native\)|\(<anonymous>\))\s*$/m;

export async function judge(target: string, index: number, c: FuzzCase): Promise<CaseOutcome> {
  const base = { target, index, what: c.what };
  let acc: Accepted;
  try {
    acc = await c.run();
  } catch (e) {
    if (e instanceof FloatscopeError) {
      // A typed refusal whose message carries a stack frame is still a stack trace for the user.
      if (STACK_FRAME.test(e.message)) return { ...base, verdict: "stack trace", detail: e.message.slice(0, 300) };
      return { ...base, verdict: "refused" };
    }
    const err = e as Error;
    return {
      ...base,
      verdict: "crash",
      detail: `${err?.name}: ${String(err?.message).slice(0, 200)}\n${String(err?.stack).split("\n").slice(1, 4).join("\n")}`,
    };
  }
  if (acc.escaped !== undefined) return { ...base, verdict: "stack trace", detail: acc.escaped };
  if (acc.output !== undefined && STACK_FRAME.test(acc.output))
    return { ...base, verdict: "stack trace", detail: acc.output.slice(0, 400) };
  if (acc.exitCode !== undefined && acc.exitCode !== 0) return { ...base, verdict: "refused" };
  if (c.expect === "reject") return { ...base, verdict: "silent acceptance", detail: "accepted a mutation that must be detected" };
  if (c.expect === "partial" && !acc.flagged)
    return { ...base, verdict: "silent acceptance", detail: "accepted a partial input without saying so" };
  return { ...base, verdict: "accepted" };
}

/** mulberry32, seeded per case: small, fast, and the same on every machine. */
export class Rng {
  private a: number;
  constructor(seed: number) {
    this.a = seed >>> 0;
  }
  next(): number {
    this.a = (this.a + 0x6d2b79f5) >>> 0;
    let t = this.a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  /** Integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
  pick<T>(xs: readonly T[]): T {
    return xs[this.int(xs.length)];
  }
}

/** FNV-1a over the target name, mixed with the seed and index: one stream per case. */
export function caseSeed(seed: number, target: string, index: number): number {
  let h = 0x811c9dc5 ^ seed;
  for (const ch of `${target}:${index}`) h = Math.imul(h ^ ch.charCodeAt(0), 0x01000193);
  return h >>> 0;
}

export interface Summary {
  cases: number;
  crashes: number;
  hangs: number;
  stackTraces: number;
  silentAcceptances: number;
  accepted: number;
  refused: number;
}

export function summarize(outcomes: readonly CaseOutcome[]): Summary {
  const n = (v: CaseOutcome["verdict"]) => outcomes.filter((o) => o.verdict === v).length;
  return {
    cases: outcomes.length,
    crashes: n("crash"),
    hangs: n("hang"),
    stackTraces: n("stack trace"),
    silentAcceptances: n("silent acceptance"),
    accepted: n("accepted"),
    refused: n("refused"),
  };
}

/** The one line CI shows. */
export function summaryLine(s: Summary): string {
  return `fuzz: ${s.cases} cases, ${s.crashes} crashes, ${s.hangs} hangs, ${s.stackTraces} stack traces, ${s.silentAcceptances} silent acceptances`;
}

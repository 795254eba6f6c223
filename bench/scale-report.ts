/**
 * The pure half of the scale benchmark (bench/scale.ts): reading llama.cpp's diffusion runner's log
 * into per-step times, the vendored llama.cpp commit out of llama-cpp-python's changelog, and the
 * section's tables (medians over interleaved processes, the ratio ours / llama.cpp). No processes,
 * no files: the tests feed it hand-made text (test/bench/scale.test.ts).
 */
import { markdownTable, median } from "./lib.js";

/** What one `llama-diffusion-cli … --log-prefix --log-timestamps` run printed about its timing. */
export interface LlamaDiffusionLog {
  /** When each denoising step began (ms since the log started), in step order. */
  stepStartsMs: number[];
  /** When the "total time" line was printed: the end of the last step (ms since the log started). */
  endMs: number;
  /** The runner's own summary: total time of the step loop, its time per step and its sampling time per step (ms). */
  totalMs: number;
  perStepMs: number;
  samplingPerStepMs: number;
}

/** llama.cpp's `[M.s.ms.us]` log timestamp ("0.05.123.456") in ms. */
function stampMs(m: string, s: string, ms: string, us: string): number {
  return Number(m) * 60_000 + Number(s) * 1000 + Number(ms) + Number(us) / 1000;
}

const STAMP = String.raw`(\d+)\.(\d{2})\.(\d{3})\.(\d{3})`;

/**
 * Parse the runner's log. The step callback prints "diffusion step: k/N" (after a carriage return,
 * no newline) at the start of step k, before its forward; with `--log-timestamps` each print carries
 * its time, so consecutive starts bound one whole step (forward + sampling), and the summary line
 * "total time: …ms, time per step: …ms, sampling time per step: …ms" ends the last one.
 * Throws (naming what is missing) when the log has no steps or no summary: the run failed.
 */
export function parseLlamaDiffusionLog(text: string): LlamaDiffusionLog {
  // colours are off when the output is not a terminal; strip them anyway
  const plain = text.replace(/\x1b\[[0-9;]*m/g, "");
  const steps = new Map<number, number>();
  for (const m of plain.matchAll(new RegExp(`${STAMP} I \\r?diffusion step: (\\d+)/(\\d+)`, "g"))) {
    const k = Number(m[5]);
    if (!steps.has(k)) steps.set(k, stampMs(m[1], m[2], m[3], m[4]));
  }
  const total = new RegExp(`${STAMP} I \\s*total time: ([\\d.]+)ms, time per step: ([\\d.]+)ms, sampling time per step: ([\\d.]+)ms`).exec(
    plain,
  );
  if (steps.size === 0)
    throw new Error("llama-diffusion-cli log: no timestamped 'diffusion step: k/N' line (expected --log-prefix --log-timestamps)");
  if (!total) throw new Error("llama-diffusion-cli log: no 'total time: …ms, time per step: …ms' line (the run did not finish)");
  const order = [...steps.keys()].sort((a, b) => a - b);
  return {
    stepStartsMs: order.map((k) => steps.get(k)!),
    endMs: stampMs(total[1], total[2], total[3], total[4]),
    totalMs: Number(total[5]),
    perStepMs: Number(total[6]),
    samplingPerStepMs: Number(total[7]),
  };
}

/**
 * Each step's wall time from its start to the next one's (the last one to the summary line). The
 * first step of a process also sizes the compute buffers at this T; `dropFirst` leaves it out, as the
 * engine's side leaves out its first step at each T.
 */
export function stepDurations(log: LlamaDiffusionLog, dropFirst = true): number[] {
  const ends = [...log.stepStartsMs.slice(1), log.endMs];
  const all = log.stepStartsMs.map((s, i) => ends[i] - s);
  return dropFirst ? all.slice(1) : all;
}

/**
 * The llama.cpp commit llama-cpp-python `version` vendors, from its CHANGELOG.md: the first
 * "llama.cpp@<hash>" under the "## [version]" heading; undefined when that entry names none.
 */
export function vendoredLlamaCommit(changelog: string, version: string): string | undefined {
  const head = changelog.indexOf(`## [${version}]`);
  if (head < 0) return undefined;
  const rest = changelog.slice(head + 1);
  const next = rest.indexOf("\n## [");
  const entry = next < 0 ? rest : rest.slice(0, next);
  return /llama\.cpp@([0-9a-f]{7,40})/.exec(entry)?.[1];
}

/** GNU time's `-f "%M %e"` line (peak RSS in KiB, wall seconds), the last such line of `stderr`. */
export function parseGnuTime(stderr: string, marker: string): { peakBytes: number; wallS: number } | undefined {
  const re = new RegExp(`^${marker} (\\d+) ([\\d.]+)$`, "gm");
  let last: RegExpExecArray | undefined;
  for (let m = re.exec(stderr); m; m = re.exec(stderr)) last = m;
  return last ? { peakBytes: Number(last[1]) * 1024, wallS: Number(last[2]) } : undefined;
}

/** One process's measurements at one T: its steps (ms, first left out) and the 1-minute load before → after. */
export interface StepSample {
  stepsMs: number[];
  loadBefore: number;
  loadAfter: number;
}

/** Per shape and T, the engine's and llama.cpp's processes, in the order they ran (interleaved). */
export interface StepRow {
  shape: string;
  T: number;
  ours: StepSample[];
  theirs: StepSample[];
  /** llama.cpp's own "sampling time per step" (ms), one per process. */
  theirSamplingMs: number[];
}

const f0 = (x: number) => x.toFixed(0);
const f1 = (x: number) => x.toFixed(1);
const f2 = (x: number) => x.toFixed(2);

/** "3.1–5.2" over every process's before and after load (or the one value when they agree). */
export function loadRange(samples: readonly StepSample[]): string {
  const xs = samples.flatMap((s) => [s.loadBefore, s.loadAfter]);
  if (xs.length === 0) return "—";
  const lo = Math.min(...xs);
  const hi = Math.max(...xs);
  return lo.toFixed(1) === hi.toFixed(1) ? lo.toFixed(1) : `${lo.toFixed(1)}–${hi.toFixed(1)}`;
}

/** The median over every timed step of every process (each step counts once). */
export const medianStep = (samples: readonly StepSample[]): number => median(samples.flatMap((s) => s.stepsMs));

/** ours / llama.cpp of the medians, or NaN when either side has no step. */
export function stepRatio(row: StepRow): number {
  return medianStep(row.ours) / medianStep(row.theirs);
}

/** The per-step table: medians, the ratio, each process's own median (in run order) and the load. */
export function stepTable(rows: readonly StepRow[]): string {
  return markdownTable(
    [
      "shape",
      "T",
      "ours ms / step (median)",
      "llama.cpp ms / step (median)",
      "ours / llama.cpp",
      "ours: each process's median (steps)",
      "llama.cpp: each process's median (steps)",
      "llama.cpp sampling ms / step",
      "load (1 min, every process before and after)",
    ],
    rows.map((r) => [
      r.shape,
      r.T,
      f0(medianStep(r.ours)),
      f0(medianStep(r.theirs)),
      `**${f2(stepRatio(r))}**`,
      r.ours.map((s) => `${f0(median(s.stepsMs))} (${s.stepsMs.length})`).join(", "),
      r.theirs.map((s) => `${f0(median(s.stepsMs))} (${s.stepsMs.length})`).join(", "),
      r.theirSamplingMs.length ? f1(median(r.theirSamplingMs)) : "—",
      loadRange([...r.ours, ...r.theirs]),
    ]),
  );
}

/** One process's open: wall and CPU seconds to the first step, peak RSS, the load. */
export interface OpenSample {
  openS: number;
  openCpuS?: number;
  peakBytes: number;
  loadBefore: number;
  loadAfter: number;
}

export interface OpenRow {
  shape: string;
  fileBytes: number;
  ours: OpenSample[];
  /** llama.cpp's processes (both T): time from start to its first step, peak RSS of the process. */
  theirs: OpenSample[];
}

const gb = (b: number) => (b / 1e9).toFixed(2);

/** The open-and-memory table: medians, every process's value in run order, peak RSS against the file size. */
export function openTable(rows: readonly OpenRow[]): string {
  return markdownTable(
    [
      "shape",
      "file GB",
      "ours: open s (median; each)",
      "ours: open CPU s (median)",
      "ours: peak RSS GB (max; × file)",
      "llama.cpp: start to first step s (median; each)",
      "llama.cpp: peak RSS GB (max; × file)",
      "load (1 min)",
    ],
    rows.map((r) => {
      const oursPeak = Math.max(...r.ours.map((s) => s.peakBytes));
      const theirPeak = Math.max(...r.theirs.map((s) => s.peakBytes));
      const cpu = r.ours.map((s) => s.openCpuS).filter((x): x is number => x !== undefined);
      const loads = [...r.ours, ...r.theirs].map((s) => ({ stepsMs: [], loadBefore: s.loadBefore, loadAfter: s.loadAfter }));
      return [
        r.shape,
        gb(r.fileBytes),
        `${f1(median(r.ours.map((s) => s.openS)))}; ${r.ours.map((s) => f1(s.openS)).join(", ")}`,
        cpu.length ? f1(median(cpu)) : "—",
        `${gb(oursPeak)}; ${f2(oursPeak / r.fileBytes)}×`,
        `${f1(median(r.theirs.map((s) => s.openS)))}; ${r.theirs.map((s) => f1(s.openS)).join(", ")}`,
        `${gb(theirPeak)}; ${f2(theirPeak / r.fileBytes)}×`,
        loadRange(loads),
      ];
    }),
  );
}

/**
 * The scale benchmark's pure parts (bench/scale-report.ts) on hand-made input: llama.cpp's
 * timestamped diffusion log into per-step times, GNU time's line, the vendored commit out of a
 * changelog, and the tables' medians and ratios (values worked by hand below).
 */
import { describe, expect, it } from "vitest";
import {
  loadRange,
  medianStep,
  openTable,
  parseGnuTime,
  parseLlamaDiffusionLog,
  stepDurations,
  stepRatio,
  stepTable,
  vendoredLlamaCommit,
  type StepRow,
} from "../../bench/scale-report.js";

// As llama-diffusion-cli prints with --log-prefix --log-timestamps: "M.ss.mmm.uuu I " before every
// message; the progress bar's messages start with "\r" and end without a newline.
const bar = (k: number, n: number) =>
  `\rdiffusion step: ${k}/${n} [${"=".repeat((k * 50) / n)}${" ".repeat(50 - (k * 50) / n)}] ${(k * 100) / n}%`;
const LOG = [
  "0.00.000.120 I build: 1 (unknown) with cc for x86_64-linux-gnu\n",
  "0.00.950.000 I llama_model_loader: loaded meta data with 30 key-value pairs\n",
  "0.01.990.000 I diffusion_params: - steps                     u32              = 4\n",
  `0.02.000.000 I ${bar(0, 4)}`,
  `0.09.500.000 I ${bar(1, 4)}`,
  `0.16.750.250 I ${bar(2, 4)}`,
  `0.23.900.000 I ${bar(3, 4)}`,
  "0.31.000.500 I \ntotal time: 29000.50ms, time per step: 7250.12ms, sampling time per step: 12.34ms\n",
  "0.31.100.000 I \nsome generated text\n",
].join("");

describe("llama.cpp's diffusion log", () => {
  it("gives each step's start, the end of the last step and the runner's own summary", () => {
    const log = parseLlamaDiffusionLog(LOG);
    expect(log.stepStartsMs).toEqual([2000, 9500, 16750.25, 23900]);
    expect(log.endMs).toBeCloseTo(31000.5, 9);
    expect(log).toMatchObject({ totalMs: 29000.5, perStepMs: 7250.12, samplingPerStepMs: 12.34 });
  });

  it("times a step from its start to the next one's, the last to the summary line, the first left out", () => {
    const log = parseLlamaDiffusionLog(LOG);
    expect(stepDurations(log, false)).toEqual([7500, 7250.25, 7149.75, 7100.5]);
    expect(stepDurations(log)).toEqual([7250.25, 7149.75, 7100.5]);
  });

  it("reads minutes past the hour mark and strips colour codes", () => {
    const log = parseLlamaDiffusionLog(
      `\x1b[34m1.59.999.999\x1b[0m I ${bar(0, 1)}\x1b[34m2.00.001.000\x1b[0m I \ntotal time: 1.00ms, time per step: 1.00ms, sampling time per step: 0.10ms\n`,
    );
    expect(log.stepStartsMs).toEqual([119999.999]);
    expect(stepDurations(log, false)[0]).toBeCloseTo(1.001, 9);
  });

  it("refuses a log without timestamps or without the summary (a failed run), saying what is missing", () => {
    expect(() => parseLlamaDiffusionLog(`${bar(0, 4)}${bar(1, 4)}`)).toThrow(/--log-timestamps/);
    expect(() => parseLlamaDiffusionLog(LOG.split("0.31.000.500")[0])).toThrow(/total time/);
  });
});

describe("helpers", () => {
  it("takes GNU time's last marked line: KiB to bytes, wall seconds", () => {
    const err = "noise\nFSTIME 100 1.00\nmore\nFSTIME 7734064 95.31\n";
    expect(parseGnuTime(err, "FSTIME")).toEqual({ peakBytes: 7734064 * 1024, wallS: 95.31 });
    expect(parseGnuTime("Command exited with non-zero status 1\n", "FSTIME")).toBeUndefined();
  });

  it("finds the llama.cpp commit under the pinned version's changelog entry only", () => {
    const changelog = [
      "# Changelog",
      "## [Unreleased]",
      "## [0.3.36]",
      "- feat: update llama.cpp to ggml-org/llama.cpp@0c1e57098",
      "- fix: something",
      "## [0.3.35]",
      "- feat: update llama.cpp to ggml-org/llama.cpp@4df29be4f",
      "## [0.3.34]",
      "- docs",
    ].join("\n");
    expect(vendoredLlamaCommit(changelog, "0.3.36")).toBe("0c1e57098");
    expect(vendoredLlamaCommit(changelog, "0.3.35")).toBe("4df29be4f");
    expect(vendoredLlamaCommit(changelog, "0.3.34")).toBeUndefined();
    expect(vendoredLlamaCommit(changelog, "9.9.9")).toBeUndefined();
  });
});

describe("the tables", () => {
  // ours: processes with steps [10, 11, 12] and [13, 9, 20] → all steps 9 10 11 12 13 20, median 11.5
  // llama.cpp: [8, 7] and [6, 9] → 6 7 8 9, median 7.5; ratio 11.5 / 7.5 = 1.5333…
  const row: StepRow = {
    shape: "llada-8b",
    T: 256,
    ours: [
      { stepsMs: [10, 11, 12], loadBefore: 3.04, loadAfter: 4.2 },
      { stepsMs: [13, 9, 20], loadBefore: 5.16, loadAfter: 4 },
    ],
    theirs: [
      { stepsMs: [8, 7], loadBefore: 4.5, loadAfter: 4.5 },
      { stepsMs: [6, 9], loadBefore: 3.5, loadAfter: 3.2 },
    ],
    theirSamplingMs: [1.2, 1.6],
  };

  it("medians every timed step of every process, and divides ours by llama.cpp's", () => {
    expect(medianStep(row.ours)).toBe(11.5);
    expect(medianStep(row.theirs)).toBe(7.5);
    expect(stepRatio(row)).toBeCloseTo(11.5 / 7.5, 12);
    expect(loadRange([...row.ours, ...row.theirs])).toBe("3.0–5.2");
    expect(loadRange([{ stepsMs: [], loadBefore: 2.01, loadAfter: 1.99 }])).toBe("2.0");
  });

  it("prints the medians, the ratio, each process's median with its step count, llama.cpp's sampling and the load", () => {
    const lines = stepTable([row]).split("\n");
    expect(lines).toHaveLength(3);
    expect(lines[2]).toBe("| llada-8b | 256 | 12 | 8 | **1.53** | 11 (3), 13 (3) | 8 (2), 8 (2) | 1.4 | 3.0–5.2 |");
  });

  it("prints open medians, every process's open and the peak RSS against the file size", () => {
    const s = (openS: number, peakBytes: number, openCpuS?: number) => ({ openS, peakBytes, openCpuS, loadBefore: 6, loadAfter: 7 });
    const t = openTable([
      { shape: "dream-7b", fileBytes: 4e9, ours: [s(15, 4.8e9, 7), s(13, 5e9, 8)], theirs: [s(3, 8e9), s(4, 7.9e9), s(5, 7e9)] },
    ]);
    expect(t.split("\n")[2]).toBe(
      "| dream-7b | 4.00 | 14.0; 15.0, 13.0 | 7.5 | 5.00; 1.25× | 4.0; 3.0, 4.0, 5.0 | 8.00; 2.00× | 6.0–7.0 |",
    );
  });
});

/**
 * The real-base model cards (scripts/eval-real-models.ts `--card-only`) rendered from fixture JSON written
 * here: the 8- and 32-slot oracle rows with their intervals, the long-answer table, the twin's statement that
 * greedy decoding has no canvas, the same-data paragraph computed from both training.json files (identical
 * and not), and the phase-4 validation columns of the learning curve. Asserts the text a reader sees.
 */
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";

const ROOT = path.resolve(__dirname, "..", "..");
const MDM = "smollm2-135m-dream-world";
const TWIN = "smollm2-135m-causal-world";
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "fs-real-card-"));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

const phase = (from_step: number, extra: object = {}) => ({
  from_step,
  lr: 5e-4,
  warmup: 20,
  schedule: "cosine",
  min_lr: 2e-5,
  oracle_share: 0.5,
  ...extra,
});

function training(steps: number, phaseStarts: number[], tokens: number, valExtra: unknown[]) {
  return {
    steps,
    tokens,
    batch: 8,
    seed: 1234,
    trainable_params: 4920192,
    delta_bytes: 9883016,
    train_seconds: 6000,
    phases: phaseStarts.map((s, i) => phase(s, i === phaseStarts.length - 1 ? { canvas: "8-64", long_share: 0.3, phase_steps: 600 } : {})),
    loss_curve: [
      [100, 0.5, 4],
      [451, 0.2, 4],
      [551, 0.3, 4],
    ],
    val_curve: [
      [100, 0.5, 16],
      [451, 1, 16],
      [551, 0.875, 16],
    ],
    val_extra: valExtra,
  };
}

function engine(results: object, decoder: string) {
  return {
    model: "x",
    delta_sha256_16: "0123456789abcdef",
    delta_step: 751,
    data: "models/world/eval-heldout.jsonl.gz",
    evaluator: "e",
    checkpoint: "c",
    decoder,
    prompt: "p",
    results,
    sampler: {},
    extraction: "up-to-eos",
    threads: 2,
    batch_size: 8,
    commit: "c",
    date: "2026-12-07T01:00:00.000Z",
    seconds: 1,
  };
}

const short = (n: number, accuracy: number, ci: [number, number], slots: number, label: string, spq: number) => ({
  n,
  errors: 0,
  accuracy,
  f1: accuracy,
  exact_match: accuracy,
  accuracy_ci: ci,
  seconds: spq * n,
  seconds_per_question: spq,
  slots,
  steps: slots,
  label,
});
const long = (n: number, recall: number, rci: [number, number], precision: number, pci: [number, number], spq: number) => ({
  n,
  errors: 1,
  recall,
  recall_ci: rci,
  precision,
  precision_ci: pci,
  f1: 0.8,
  complete: 0.42,
  seconds: spq * n,
  seconds_per_question: spq,
  slots: 64,
  steps: 64,
  label: "all-golds@64",
  data: "models/world/eval-heldout-long.jsonl.gz",
});

/** Both models' folders under a fresh --dir; `twinPhases`/`twinSteps` set how the twin's history differs. */
function fixture(name: string, twinPhases: number[], twinSteps: number): string {
  const dir = path.join(tmp, name);
  const write = (model: string, file: string, v: unknown) => {
    fs.mkdirSync(path.join(dir, model), { recursive: true });
    fs.writeFileSync(path.join(dir, model, file), JSON.stringify(v));
  };
  write(
    MDM,
    "training.json",
    training(751, [0, 90, 220, 451], 700000, [
      [451, "short_oracle", 32, 8, "accuracy", 1.0],
      [451, "long_oracle_16steps", 64, 8, "recall", 0.0],
      [551, "short_oracle", 32, 8, "accuracy", 0.875],
      [551, "long_oracle_16steps", 64, 8, "recall", 0.6],
      [551, "long_oracle_16steps", 64, 8, "precision", 0.55],
    ]),
  );
  write(TWIN, "training.json", training(twinSteps, twinPhases, 650000, [[580, "long_oracle", 64, 8, "recall", 0.9271]]));
  write(
    MDM,
    "eval-engine.json",
    engine(
      {
        oracle: short(300, 0.94, [0.9072, 0.9617], 8, "oracle", 1.9),
        "oracle@32": { ...short(300, 0.9133, [0.8762, 0.9399], 32, "oracle@32", 8.2), threads: 1, date: "2026-12-08T02:00:00.000Z" },
        "long_oracle@64": long(100, 0.87, [0.82, 0.91], 0.8, [0.74, 0.85], 31.5),
      },
      "Dream <img src=x> sampler",
    ),
  );
  write(MDM, "eval-torch.json", {
    delta_step: "751",
    results: {
      oracle: { n: 100, accuracy: 0.92, f1: 0.91 },
      "oracle@32": { n: 100, accuracy: 0.9, f1: 0.9, gen: 32 },
      "long_oracle@64": { n: 100, recall: 0.85, precision: 0.8, f1: 0.8 },
    },
  });
  write(
    TWIN,
    "eval-engine.json",
    engine(
      { oracle: short(300, 1, [0.9874, 1], 10, "oracle", 0.4), "long_oracle@64": long(100, 0.95, [0.92, 0.97], 0.9, [0.86, 0.93], 2.5) },
      "ARM",
    ),
  );
  return dir;
}

function renderCards(dir: string): { mdm: string; twin: string } {
  const r = spawnSync(
    process.execPath,
    ["--import", "tsx", path.join(ROOT, "scripts", "eval-real-models.ts"), "--card-only", "--dir", dir],
    {
      cwd: ROOT,
      encoding: "utf8",
      timeout: 60_000,
    },
  );
  expect(r.stderr).toBe("");
  expect(r.status).toBe(0);
  return {
    mdm: fs.readFileSync(path.join(dir, MDM, "README.md"), "utf8"),
    twin: fs.readFileSync(path.join(dir, TWIN, "README.md"), "utf8"),
  };
}

describe("eval-real-models --card-only", () => {
  it("renders the 8- and 32-slot oracle, long answers with intervals, and the phase-4 learning-curve columns", () => {
    const { mdm, twin } = renderCards(fixture("unequal", [0, 90, 220, 480], 751));
    expect(mdm).toContain("| oracle | 8 in 8 steps | 92 % (0.91), n = 100 | **94 %** [91, 96], n = 300 | 1.9 |");
    expect(mdm).toContain("| oracle | 32 in 32 steps | 90 % (0.90), n = 100 | **91 %** [88, 94], n = 300 | 8.2 |");
    expect(mdm).toContain(
      "| gold passages | 64 in 64 steps | 85 % / 80 %, n = 100 | **87 %** [82, 91], n = 100, 1 error | 80 % [74, 85] | 42 % | 31.5 |",
    );
    expect(mdm).toContain("Wilson score interval, 95 %");
    expect(mdm).toContain("percentile bootstrap over questions, 95 %, 2000 resamples, seed 0");
    expect(mdm).toContain("Dream &lt;img src=x&gt; sampler"); // file text is escaped, never markup
    // Each setting's threads and date (older entries: the file's own).
    expect(mdm).toContain("sampler; 2 threads, 2026-12-07: oracle, long_oracle@64; 1 thread, 2026-12-08: oracle@32.");
    expect(mdm).not.toContain("<img");
    // Learning curve: val_extra rows become columns at their steps; a step without a measurement shows "–".
    expect(mdm).toContain(
      "| step | val oracle | n | mean loss | val oracle @32 | val long recall @64 (16 steps) | val long precision @64 (16 steps) |",
    );
    expect(mdm).toContain("| 551 | 88 % | 16 | 0.300 | 88 % (n = 8) | 60 % (n = 8) | 55 % (n = 8) |");
    expect(mdm).toContain("| 451 | 100 % | 16 | 0.200 | 100 % (n = 8) | 0 % (n = 8) | – |");
    // The twin: no 32-slot row, and the card says why; its long answers at up to 64 new tokens.
    expect(twin).not.toMatch(/\| oracle \| ≤ 32/);
    expect(twin).toContain("No row at 32 slots: greedy decoding has no canvas");
    expect(twin).toContain("| oracle | ≤ 10 new | – | **100 %** [99, 100], n = 300 | 0.4 |");
    expect(twin).toContain("| gold passages | ≤ 64 new | – | **95 %** [92, 97], n = 100, 1 error | 90 % [86, 93] | 42 % | 2.5 |");
    expect(twin).toContain("| step | val oracle | n | mean loss | val long recall @64 |");
    // Same data and steps, computed from both training.json files: here the phases' lengths differ.
    const line =
      "Training data and steps (`training.json` of both): MDM 90 + 130 + 231 + 300 = 751 steps, twin 90 + 130 + 260 + 271 = 751 steps, by phase; 8 examples a step (MDM 6,008, twin 6,008 examples; 700,000 and 650,000 tokens processed";
    expect(mdm).toContain(line);
    expect(twin).toContain(line);
    expect(mdm).toContain("**Not identical**: phase 3: MDM 231, twin 260; phase 4: MDM 300, twin 271.");
    expect(mdm).toContain("MDM canvas 8-64 slots, 30 % long-answer examples");
  });

  it("a measurement of an earlier delta names the command that measures the committed one: torch's for torch", () => {
    const dir = fixture("stale-torch", [0, 90, 220, 451], 751);
    const torch = JSON.parse(fs.readFileSync(path.join(dir, MDM, "eval-torch.json"), "utf8"));
    fs.writeFileSync(path.join(dir, MDM, "eval-torch.json"), JSON.stringify({ ...torch, delta_step: "451" }));
    const { mdm, twin } = renderCards(dir);
    expect(mdm).toContain(
      "**Measured on an earlier delta:** torch step 451; the committed delta is step 751. `training/real/eval_qa.py` (as `training/real/finish.sh` runs it) measures it with torch.",
    );
    expect(mdm).not.toContain("large-runs.sh` measures it");
    expect(twin).not.toContain("Measured on an earlier delta");
  });

  it("says identical data and steps only when every phase has the same steps", () => {
    const { twin } = renderCards(fixture("equal", [0, 90, 220, 451], 751));
    expect(twin).toContain("MDM 90 + 130 + 231 + 300 = 751 steps, twin 90 + 130 + 231 + 300 = 751 steps, by phase");
    expect(twin).toContain("**The twin and the MDM were trained on identical data for identical steps**");
    expect(twin).not.toContain("Not identical");
  });

  it("skips a phase listed twice (a model published while its own continuation ran) instead of counting 0 steps", () => {
    // the published MDM's training.json lists phase 4 twice (from_step 451 both times): 0 + 300 steps, not a
    // fifth phase; a twin retrained without the duplicate has the same four phases
    const { twin } = renderCards(fixture("duplicate", [0, 90, 220, 451, 451], 751));
    expect(twin).toContain("twin 90 + 130 + 231 + 300 = 751 steps, by phase");
    expect(twin).toContain("**The twin and the MDM were trained on identical data for identical steps**");
  });
});

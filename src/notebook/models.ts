/**
 * Which of a notebook's models exist under the one model path (`FLOATSCOPE_MODELS`).
 *
 * The figure notebooks compare up to four model families. A researcher may have only some of the
 * checkpoints (or the tiny models may still be training), so every notebook first asks
 * `findModels` which ones are there, runs on those, and shows one line per missing model saying
 * where it looked and how to get it. A model "exists" when its folder holds a config.json: that is
 * the file `openCheckpoint` reads first, and the training job publishes it with the weights.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { escapeMarkdown, markdownCode } from "../display/escape.js";
import { TINY_MODEL_NAMES, canonicalFamily, isFamily } from "../families/index.js";

/**
 * The real tier (fetched by scripts/setup.sh into `.cache/real-models/` at the repository root):
 * family → file name, for `findModels(<repo>/.cache/real-models, ["llama"], REAL_MODEL_NAMES)`.
 */
export const REAL_MODELS_DIR = ".cache/real-models";
export const REAL_MODEL_NAMES: Readonly<Record<string, string>> = {
  llama: "SmolLM2-135M-Instruct.Q4_1.gguf",
};

/**
 * The real-base tier, beside it in `.cache/real-models/`: SmolLM2-135M adapted on the synthetic world into a
 * Dream-style MDM and, with the same data, budget and delta size, its causal twin (scripts/setup.sh merges the
 * committed LoRA deltas of `models/<name>/` into these folders; training/real/README.md). The two differ only in
 * the training objective.
 */
export const REAL_BASE_MODEL_NAMES: Readonly<Record<string, string>> = {
  dream: "smollm2-135m-dream-world",
  llama: "smollm2-135m-causal-world",
};

/** Text every missing-model line starts with, and the line shown when none is usable (tools grep for these). */
export const MODEL_MISSING_MARK = "Model missing:";
export const NO_MODEL_MARK = "No model available for this notebook";

export interface ModelFolder {
  family: string;
  /** Folder name inside the models folder. */
  name: string;
  /** `<modelsDir>/<name>` as given (not resolved, so notes show the path the user set). */
  dir: string;
}

export interface MissingModel extends ModelFolder {
  /** Why it does not count: no folder, not a folder, or no config.json in it. */
  reason: string;
}

export interface FoundModels {
  modelsDir: string;
  /** In the order of the requested families. */
  present: ModelFolder[];
  missing: MissingModel[];
  /** family → folder name, present families only (what the notebooks loop over). */
  names: Record<string, string>;
  /** One markdown line per missing model (empty when all are present). */
  notes: string[];
  /** True when no requested model is usable. */
  none: boolean;
  /** Markdown + plain text for `show()`: the missing-model lines, or nothing to say when all are there. */
  toMimeBundle(): Record<string, string>;
}

/** How to get a model that is not there (the same advice for every family). */
export const HOW_TO_GET_MODELS =
  "train the tiny models with `training/run_all.sh` (it publishes each into `models/` when its run ends), " +
  "or point `FLOATSCOPE_MODELS` (the folder) / `FLOATSCOPE_MODEL_NAMES` (family → folder name) at real checkpoints";

/**
 * Look for each family's folder `<modelsDir>/<names[family] ?? TINY_MODEL_NAMES[family]>` and split them into
 * present (a folder with config.json) and missing (with the reason). Nothing is loaded. Family words in
 * `families` and in the keys of `names` may be aliases (FAMILY_ALIASES); the result speaks the family words.
 *
 * @example
 *   const found = findModels("../models", ["llada", "dream"], JSON.parse(process.env.FLOATSCOPE_MODEL_NAMES ?? "{}"));
 *   show(found);                       // the missing-model lines, if any
 *   for (const [family, name] of Object.entries(found.names)) { … }
 */
export function findModels(modelsDir: string, families: readonly string[], names: Record<string, string> = {}): FoundModels {
  const present: ModelFolder[] = [];
  const missing: MissingModel[] = [];
  // Aliases in the override map count as their family (an explicit canonical key wins).
  const byFamily: Record<string, string> = {};
  for (const [k, v] of Object.entries(names))
    if (k === canonicalFamily(k) || !(canonicalFamily(k) in names)) byFamily[canonicalFamily(k)] = v;
  for (const family of [...new Set(families.map(canonicalFamily))]) {
    const name = byFamily[family] ?? (isFamily(family) ? TINY_MODEL_NAMES[family] : `tiny-${family}`);
    const dir = path.join(modelsDir, name);
    const reason = absentBecause(dir);
    if (reason === null) present.push({ family, name, dir });
    else missing.push({ family, name, dir, reason });
  }
  const notes = missing.map((m) => missingLine(m, "markdown"));
  const none = present.length === 0;
  const result: FoundModels = {
    modelsDir,
    present,
    missing,
    names: Object.fromEntries(present.map((p) => [p.family, p.name])),
    notes,
    none,
    toMimeBundle() {
      return { "text/markdown": modelsNote(result), "text/plain": modelsNote(result, "text") };
    },
  };
  return result;
}

/**
 * Folder names and paths are user text (FLOATSCOPE_MODELS, FLOATSCOPE_MODEL_NAMES): in Markdown they are
 * escaped (display/escape.ts), so a folder called `<script>…` is shown, never run; as text they are as given.
 */
function fmt(as: "markdown" | "text") {
  return as === "markdown"
    ? { name: escapeMarkdown, path: markdownCode, bold: (s: string) => `**${s}**` }
    : { name: String, path: String, bold: String };
}

function missingLine(m: MissingModel, as: "markdown" | "text"): string {
  const f = fmt(as);
  return `- ${f.bold(MODEL_MISSING_MARK)} ${m.family} — looked for ${f.path(m.dir)}: ${m.reason}.`;
}

/**
 * The note a notebook shows: nothing when all models are there, else what is missing and how to get it.
 * Markdown by default; `"text"` gives the same note as plain text (names as given).
 */
export function modelsNote(found: FoundModels, as: "markdown" | "text" = "markdown"): string {
  const f = fmt(as);
  if (found.missing.length === 0)
    return `All ${found.present.length} model(s) found in ${f.path(found.modelsDir)}: ${found.present.map((p) => f.name(p.name)).join(", ")}.`;
  const head = found.none
    ? `${f.bold(NO_MODEL_MARK)} — none of its ${found.missing.length} model(s) is in ${f.path(found.modelsDir)}, so it stops here (no figure).`
    : `Running on ${found.present.map((p) => `${f.name(p.name)} (${p.family})`).join(", ")}; the figures and text below cover only these.`;
  const how = as === "markdown" ? HOW_TO_GET_MODELS : HOW_TO_GET_MODELS.replace(/`/g, "");
  return `${head}\n\n${found.missing.map((m) => missingLine(m, as)).join("\n")}\n\nTo get them: ${how}.`;
}

function absentBecause(dir: string): string | null {
  let stat: fs.Stats;
  try {
    stat = fs.statSync(dir);
  } catch {
    return dir.toLowerCase().endsWith(".gguf") ? "no such file (bash scripts/setup.sh fetches the real tier)" : "no such folder";
  }
  // A GGUF checkpoint is one file (openCheckpoint reads config and tokenizer from its metadata).
  if (dir.toLowerCase().endsWith(".gguf")) return stat.isFile() ? null : "exists but is not a file";
  if (!stat.isDirectory()) return "exists but is not a folder";
  if (!fs.existsSync(path.join(dir, "config.json"))) return "the folder has no config.json (a run still writing it, or not a checkpoint)";
  return null;
}

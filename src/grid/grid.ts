/**
 * Evaluation grids: models × datasets × settings × seeds, cut into work units with stable ids, and
 * each shard's deterministic share of them.
 *
 * A grid file (JSON) names what to evaluate; `expandGrid` turns it into units. A unit is one model
 * on one slice of one dataset in one setting with one seed (`chunk` questions, default 100), so a
 * grid of a few settings on a big file still spreads over many shards. Unit ids spell out what they
 * are (`tiny-llada|heldout|gold@2/k4|s0|0-100`): the same grid gives the same ids on every machine,
 * and a unit's rows can be found by id in any shard file.
 *
 * Shard i of n (1-based) takes the units whose index in grid order is ≡ i−1 (mod n). Round robin over
 * the model-major order gives every shard a mix of models and settings, so shards take similar time.
 *
 * Gold positions in a grid are relative to k: "first" (0), "middle" (⌊k/2⌋), "last" (k), "every"
 * (0…k), a fixed index, or "cycle"/"random" (contexts.ts). Settings that come out the same (k = 0:
 * first = middle = last) are kept once.
 */
import * as path from "node:path";
import { FloatscopeError, GridError, SettingsError } from "../util/errors.js";
import { readFileBounded } from "../util/paths.js";

/** A grid file is a few kilobytes of JSON; anything near this is not one. */
const GRID_MAX_BYTES = 64 * 2 ** 20;
import { printable, unsafeCharIn } from "../util/shell.js";
import { settingLabel, validateSetting, type DistractorSource, type EvalSetting } from "../qa/contexts.js";
import { policyLabel } from "../samplers/interventions.js";
import { MEASURES, type MeasureName } from "./measures.js";

export type GridGoldPosition = "first" | "middle" | "last" | "every" | "cycle" | "random" | number;

export type GridSetting =
  | { kind: "closed-book" }
  | { kind: "oracle" }
  | {
      kind: "distractors";
      /** One count, a list, or an inclusive range {from, to}. */
      k: number | number[] | { from: number; to: number };
      /** One position or a list (default "first"). */
      goldPosition?: GridGoldPosition | GridGoldPosition[];
      /** Default "record" (the record's own ctxs); "pool" draws other questions' gold passages. */
      source?: DistractorSource;
    };

export interface GridModel {
  /** Label in rows and unit ids (default: the folder's name). */
  name?: string;
  path: string;
  /** The tier its findings are filed under when the grid records measures (default "user"; e.g. "tiny", "real"). */
  tier?: string;
}

export interface GridDataset {
  /** Label in rows and unit ids (default: the file name without .jsonl/.gz). */
  name?: string;
  /** jsonl(.gz); relative to the grid file; `${VAR}` is read from the environment. */
  path: string;
  /** Evaluate rows skip … skip+limit−1 of the file (after reading all of it, for pool distractors). */
  skip?: number;
  limit?: number;
}

export interface GridSpec {
  /** Label of the grid (default: the grid file's name). */
  name?: string;
  models: (string | GridModel)[];
  datasets: (string | GridDataset)[];
  settings: GridSetting[];
  /** Seeds of distractor/position draws and of the sampler (default [0]). */
  seeds?: number[];
  /** Questions per work unit (default 100). */
  chunk?: number;
  /** Questions per forward batch (default 8). Batching does not change deterministic predictions. */
  batchSize?: number;
  /**
   * Attention-intervention policies to cross with everything else (CLI spellings: "none", "anchors",
   * "first", "random", "sink", …; default ["none"]). Plain units keep their ids; the others get `|iv=<policy>`.
   */
  interventions?: string[];
  /**
   * Per-sample attention measures every unit records beside accuracy (measures.ts; default none), e.g.
   * ["sink"]. Units decode with the probes these read; merge pools them into findings.
   */
  measures?: string[];
  /**
   * The settings (labels, e.g. "gold@cycle/k4") whose units record the measures (default: every setting). The
   * other units decode without the measures' probes: a grid can take accuracy in many settings and the
   * attention numbers in one.
   */
  measuresOn?: string[];
}

/** A grid after validation: every path absolute, every list explicit, every setting expanded. */
export interface ResolvedGrid {
  name: string;
  /** The grid file (absolute), or "(inline)". */
  file: string;
  models: { name: string; path: string; tier: string }[];
  datasets: { name: string; path: string; skip: number; limit: number | null }[];
  settings: EvalSetting[];
  seeds: number[];
  chunk: number;
  batchSize: number;
  /** Canonical policy names (`policyLabel`), "none" for plain runs. */
  interventions: string[];
  /** The measures every unit records (empty: accuracy only). */
  measures: MeasureName[];
  /** The setting labels whose units record the measures; null: every setting. */
  measuresOn: string[] | null;
}

export interface WorkUnit {
  /** `model|dataset|setting|s<seed>|<start>-<end>` (rows of the evaluated slice, end exclusive). */
  id: string;
  /** Position in grid order (0-based). */
  index: number;
  model: string;
  dataset: string;
  /** `settingLabel(setting)`. */
  setting: string;
  evalSetting: EvalSetting;
  seed: number;
  /** The intervention policy's canonical name ("none": a plain run). */
  intervention: string;
  /** Indices into the dataset's selected records (after skip/limit), end exclusive. */
  start: number;
  end: number;
}

const GRID = "grid";

function bad(file: string, field: string, expected: string, found: unknown, hint?: string): GridError {
  return new GridError("Bad grid spec", { file, field, expected, found: typeof found === "string" ? found : JSON.stringify(found), hint });
}

/**
 * A grid, model or dataset name: a non-empty string without control characters. Names reach unit ids,
 * shard files, tables, folder names and job scripts (src/cli/slurm.ts), and grids are shared: a line
 * break in a name would end a line of a script or a header wherever it lands.
 */
function checkName(v: unknown, file: string, field: string): string {
  if (typeof v !== "string" || v === "") throw bad(file, field, "a non-empty string", v);
  const c = unsafeCharIn(v);
  if (c)
    throw bad(
      file,
      field,
      "a name without control characters (line breaks, tabs, escapes, bidirectional controls)",
      `${c} of ${printable(v)}`,
    );
  return v;
}

function nonNegInt(v: unknown): v is number {
  return typeof v === "number" && Number.isInteger(v) && v >= 0;
}

/** `${VAR}` → the environment's value (a missing variable is an error that names it). */
function expandEnv(p: string, file: string, field: string): string {
  return p.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_, name: string) => {
    const v = process.env[name];
    if (!v) throw bad(file, field, `the environment variable ${name} to be set`, p, `export ${name}=/path/to/the/file`);
    return v;
  });
}

function stripExt(name: string): string {
  return name.replace(/\.gz$/, "").replace(/\.jsonl?$/, "");
}

function kList(k: unknown, file: string, field: string): number[] {
  if (nonNegInt(k)) return [k];
  if (Array.isArray(k) && k.length > 0 && k.every(nonNegInt)) return k as number[];
  if (k && typeof k === "object" && nonNegInt((k as { from?: unknown }).from) && nonNegInt((k as { to?: unknown }).to)) {
    const { from, to } = k as { from: number; to: number };
    if (from <= to) return Array.from({ length: to - from + 1 }, (_, i) => from + i);
  }
  throw bad(file, field, "an integer ≥ 0, a non-empty list of them, or {from, to} with from ≤ to", k);
}

function positionsFor(p: GridGoldPosition, k: number, file: string, field: string): (number | "cycle" | "random")[] {
  if (p === "first") return [0];
  if (p === "middle") return [Math.floor(k / 2)];
  if (p === "last") return [k];
  if (p === "every") return Array.from({ length: k + 1 }, (_, i) => i);
  if (p === "cycle" || p === "random") return [p];
  if (nonNegInt(p)) {
    if (p > k) throw bad(file, field, `a 0-based index ≤ k (${k})`, p, 'use "last" for the end of every k');
    return [p];
  }
  throw bad(file, field, '"first", "middle", "last", "every", "cycle", "random" or a 0-based index', p);
}

/** Expand one grid setting into evaluation settings (deduplicated by label, in order). */
export function expandSetting(s: GridSetting, file = GRID, field = "settings"): EvalSetting[] {
  const kind = (s as { kind?: unknown })?.kind;
  if (kind === "closed-book" || kind === "oracle") return [{ kind }];
  if (kind !== "distractors") throw bad(file, `${field}.kind`, '"closed-book", "oracle" or "distractors"', kind);
  const d = s as Extract<GridSetting, { kind: "distractors" }>;
  const source = d.source ?? "record";
  if (source !== "record" && source !== "pool") throw bad(file, `${field}.source`, '"record" or "pool"', source);
  const positions = d.goldPosition === undefined ? ["first" as const] : Array.isArray(d.goldPosition) ? d.goldPosition : [d.goldPosition];
  if (positions.length === 0) throw bad(file, `${field}.goldPosition`, "a position or a non-empty list", positions);
  const out: EvalSetting[] = [];
  for (const k of kList(d.k, file, `${field}.k`)) {
    for (const p of positions) {
      for (const goldPosition of positionsFor(p, k, file, `${field}.goldPosition`)) {
        out.push(validateSetting({ kind: "distractors", k, goldPosition, source }));
      }
    }
  }
  return out;
}

/** Validate a parsed grid spec and resolve its paths against `baseDir` (the grid file's folder). */
export function resolveGrid(spec: unknown, file: string, baseDir = path.dirname(path.resolve(file))): ResolvedGrid {
  if (!spec || typeof spec !== "object" || Array.isArray(spec))
    throw bad(file, "(top level)", "a JSON object {models, datasets, settings, …}", typeof spec);
  const g = spec as GridSpec;
  const known = new Set([
    "name",
    "models",
    "datasets",
    "settings",
    "seeds",
    "chunk",
    "batchSize",
    "interventions",
    "measures",
    "measuresOn",
    "description",
  ]);
  for (const key of Object.keys(g)) if (!known.has(key)) throw bad(file, key, `one of ${[...known].join(", ")}`, key);
  const list = (v: unknown, field: string): unknown[] => {
    if (!Array.isArray(v) || v.length === 0) throw bad(file, field, "a non-empty list", v);
    return v;
  };
  const names = new Set<string>();
  const unique = (name: string, field: string) => {
    if (name.includes("|")) throw bad(file, field, "a name without '|'", name);
    if (names.has(name)) throw bad(file, field, "names that differ (set `name` on one of them)", name);
    names.add(name);
  };
  const models = list(g.models, "models").map((m, i) => {
    const field = `models[${i}]`;
    const o = typeof m === "string" ? { path: m } : (m as GridModel);
    if (!o || typeof o.path !== "string" || o.path === "") throw bad(file, field, "a folder path or {name, path}", m);
    const p = path.resolve(baseDir, expandEnv(o.path, file, field));
    const name = checkName(o.name ?? path.basename(p), file, o.name === undefined ? `${field} (its folder name)` : `${field}.name`);
    unique(name, field);
    const tier = o.tier === undefined ? "user" : checkName(o.tier, file, `${field}.tier`);
    return { name, path: p, tier };
  });
  names.clear();
  const datasets = list(g.datasets, "datasets").map((d, i) => {
    const field = `datasets[${i}]`;
    const o = typeof d === "string" ? { path: d } : (d as GridDataset);
    if (!o || typeof o.path !== "string" || o.path === "") throw bad(file, field, "a jsonl(.gz) path or {name, path, skip?, limit?}", d);
    if (o.skip !== undefined && !nonNegInt(o.skip)) throw bad(file, `${field}.skip`, "an integer ≥ 0", o.skip);
    if (o.limit !== undefined && o.limit !== null && !(nonNegInt(o.limit) && o.limit > 0))
      throw bad(file, `${field}.limit`, "an integer ≥ 1 (or null: all)", o.limit);
    const p = path.resolve(baseDir, expandEnv(o.path, file, field));
    const name = checkName(o.name ?? stripExt(path.basename(p)), file, o.name === undefined ? `${field} (its file name)` : `${field}.name`);
    unique(name, field);
    return { name, path: p, skip: o.skip ?? 0, limit: o.limit ?? null };
  });
  const seen = new Set<string>();
  const settings: EvalSetting[] = [];
  list(g.settings, "settings").forEach((s, i) => {
    for (const e of expandSetting(s as GridSetting, file, `settings[${i}]`)) {
      const label = settingLabel(e);
      if (!seen.has(label)) {
        seen.add(label);
        settings.push(e);
      }
    }
  });
  const seeds =
    g.seeds === undefined
      ? [0]
      : list(g.seeds, "seeds").map((s, i) => {
          if (!nonNegInt(s)) throw bad(file, `seeds[${i}]`, "an integer ≥ 0", s);
          return s;
        });
  if (new Set(seeds).size !== seeds.length) throw bad(file, "seeds", "distinct seeds", seeds);
  const chunk = g.chunk ?? 100;
  if (!(nonNegInt(chunk) && chunk > 0)) throw bad(file, "chunk", "an integer ≥ 1 (questions per work unit)", chunk);
  const batchSize = g.batchSize ?? 8;
  if (!(nonNegInt(batchSize) && batchSize > 0)) throw bad(file, "batchSize", "an integer ≥ 1", batchSize);
  const interventions =
    g.interventions === undefined
      ? ["none"]
      : list(g.interventions, "interventions").map((v, i) => {
          if (typeof v !== "string") throw bad(file, `interventions[${i}]`, 'a policy name such as "anchors"', v);
          try {
            return policyLabel(v);
          } catch (e) {
            throw bad(file, `interventions[${i}]`, (e as { expected?: string }).expected ?? "a known policy", v);
          }
        });
  if (new Set(interventions).size !== interventions.length) throw bad(file, "interventions", "distinct policies", interventions);
  const measures =
    g.measures === undefined
      ? []
      : (list(g.measures, "measures").map((v, i) => {
          if (!(MEASURES as readonly unknown[]).includes(v)) throw bad(file, `measures[${i}]`, `one of ${MEASURES.join(", ")}`, v);
          return v;
        }) as MeasureName[]);
  if (new Set(measures).size !== measures.length) throw bad(file, "measures", "distinct measures", measures);
  const labels = settings.map(settingLabel);
  const measuresOn =
    g.measuresOn === undefined
      ? null
      : list(g.measuresOn, "measuresOn").map((v, i) => {
          if (typeof v !== "string" || !labels.includes(v))
            throw bad(file, `measuresOn[${i}]`, `a setting of the grid: ${labels.join(", ")}`, v);
          return v;
        });
  if (measuresOn && measures.length === 0) throw bad(file, "measuresOn", 'measures to record (set "measures" too)', measuresOn);
  if (measuresOn && new Set(measuresOn).size !== measuresOn.length) throw bad(file, "measuresOn", "distinct settings", measuresOn);
  const name = checkName(
    g.name ?? stripExt(path.basename(file)).replace(/\.json$/, ""),
    file,
    g.name === undefined ? "name (the grid file's name)" : "name",
  );
  return { name, file: path.resolve(file), models, datasets, settings, seeds, chunk, batchSize, interventions, measures, measuresOn };
}

/**
 * The default shard folder of a grid, grid-runs/<name> (relative to the working folder). Refused when the
 * name is not one plain folder name: "../../x", "a/b" or ".." would put the runs somewhere else.
 */
export function defaultRunFolder(grid: ResolvedGrid): string {
  const n = grid.name;
  if (n === "." || n === ".." || /[/\\]/.test(n))
    throw new GridError("The grid's name cannot be the default run folder grid-runs/<name>", {
      file: grid.file,
      field: "name",
      expected: "one folder name (no '/' or '\\', not '.' or '..')",
      found: printable(n),
      hint: "name the folder with --out, or rename the grid",
    });
  return path.join("grid-runs", n);
}

/** Read and resolve a grid file. */
export function readGrid(file: string): ResolvedGrid {
  let text: string;
  try {
    // Checked before it is opened (a FIFO would block, a folder is EISDIR): the library's callers get the CLI's rule.
    text = readFileBounded(file, { what: "grid file", error: GridError, maxBytes: GRID_MAX_BYTES }).toString("utf8");
  } catch (e) {
    if (e instanceof FloatscopeError) throw e;
    throw new GridError("Cannot read the grid file", {
      file,
      expected: "a readable JSON file",
      found: (e as NodeJS.ErrnoException).code ?? String(e),
    });
  }
  let spec: unknown;
  try {
    spec = JSON.parse(text);
  } catch (e) {
    throw new GridError("Grid file is not valid JSON", { file, found: (e as Error).message.slice(0, 200) });
  }
  return resolveGrid(spec, file);
}

/**
 * Every work unit of a grid, in grid order (model, dataset, seed, setting, slice).
 * @param sizes number of selected records of each dataset (after skip/limit), by dataset name.
 */
export function expandGrid(grid: ResolvedGrid, sizes: Record<string, number>): WorkUnit[] {
  const units: WorkUnit[] = [];
  for (const m of grid.models) {
    for (const d of grid.datasets) {
      const n = sizes[d.name];
      if (!nonNegInt(n))
        throw new GridError("Dataset size unknown", {
          file: grid.file,
          field: `datasets.${d.name}`,
          expected: "the number of selected records",
        });
      for (const seed of grid.seeds) {
        for (const s of grid.settings) {
          const evalSetting: EvalSetting = s.kind === "distractors" ? { ...s, seed } : s;
          const label = settingLabel(s);
          for (const intervention of grid.interventions) {
            const iv = intervention === "none" ? "" : `|iv=${intervention}`;
            for (let start = 0; start < n; start += grid.chunk) {
              const end = Math.min(n, start + grid.chunk);
              units.push({
                id: `${m.name}|${d.name}|${label}${iv}|s${seed}|${start}-${end}`,
                index: units.length,
                model: m.name,
                dataset: d.name,
                setting: label,
                evalSetting,
                seed,
                intervention,
                start,
                end,
              });
            }
          }
        }
      }
    }
  }
  return units;
}

/** "3/8" → {index: 3, count: 8} (1-based index). */
export function parseShard(text: string): { index: number; count: number } {
  const m = /^(\d+)\/(\d+)$/.exec(text.trim());
  const index = m ? Number(m[1]) : NaN;
  const count = m ? Number(m[2]) : NaN;
  if (!m || count < 1 || index < 1 || index > count) {
    throw new SettingsError("Bad shard", { field: "--shard", expected: "i/n with 1 ≤ i ≤ n, e.g. 2/4", found: JSON.stringify(text) });
  }
  return { index, count };
}

/** The units of shard `index` of `count` (1-based): every count-th unit in grid order. */
export function shardUnits(units: readonly WorkUnit[], index: number, count: number): WorkUnit[] {
  return units.filter((u) => u.index % count === index - 1);
}

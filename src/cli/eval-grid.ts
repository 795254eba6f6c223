/**
 * `floatscope eval --grid grid.json [--shard i/n] [--out dir]`: run one shard of an evaluation grid
 * (src/eval/grid.ts, docs/cluster.md) into `<dir>/shard-i-of-n.jsonl`, resumably. SIGTERM/SIGINT
 * (Slurm's scancel, a pre-empted node, Ctrl-C) stop after the current batch with every finished row
 * saved; running the same command again continues.
 */
import * as path from "node:path";
import { defaultRunFolder, parseShard, readGrid } from "../eval/grid.js";
import { prepareGrid, runShard } from "../eval/shard.js";
import { intList, parseFlags, UsageError, type CliIO } from "./args.js";
import { EXIT } from "./exit.js";

export const GRID_HELP = `Usage: floatscope eval --grid <grid.json> [--shard i/n] [--out <dir>] [options]

Runs shard i of n (1-based; default 1/1, the whole grid) of an evaluation grid: models × datasets ×
settings × seeds (docs/cluster.md). Rows go to <dir>/shard-i-of-n.jsonl with a manifest (floatscope
version, settings, seeds, model and data hashes); rerunning resumes. Then: floatscope merge <dir>.

  --grid <file>          grid spec (JSON)
  --shard <i/n>          which share to run (default 1/1)
  --out <dir>            folder for shard files (default grid-runs/<grid name>)
  --batch-size <n>       questions per forward batch (default: the grid's, 8)
  --device <d>           cpu | cuda | auto (default cpu)
  --threads <n>          intra-op threads
  -h, --help             this help`;

export async function runGridEval(argv: string[], io: CliIO): Promise<number> {
  const { values: v, positionals } = parseFlags("eval", argv, {
    grid: { type: "string" },
    shard: { type: "string" },
    out: { type: "string" },
    "batch-size": { type: "string" },
    device: { type: "string" },
    threads: { type: "string" },
  });
  if (positionals.length)
    throw new UsageError("`floatscope eval --grid` takes no model folder (the grid names the models)", {
      field: "<model-dir>",
      expected: "no positional arguments",
      found: positionals.join(" "),
    });
  const gridFile = String(v.grid);
  let shard: { index: number; count: number };
  try {
    shard = parseShard(String(v.shard ?? "1/1"));
  } catch {
    throw new UsageError("Bad --shard", { field: "--shard", expected: "i/n with 1 ≤ i ≤ n, e.g. 2/4", found: JSON.stringify(v.shard) });
  }
  const int = (flag: string) => (v[flag] === undefined ? undefined : intList("eval", flag, String(v[flag]))[0]);
  const device = v.device === undefined ? "cpu" : String(v.device);
  if (device !== "cpu" && device !== "cuda" && device !== "auto")
    throw new UsageError("Bad --device", { field: "--device", expected: "cpu | cuda | auto", found: device });
  const grid = readGrid(gridFile);
  const outDir = String(v.out ?? defaultRunFolder(grid));
  const pg = await prepareGrid(grid);
  const controller = new AbortController();
  const stop = (sig: string) => () => {
    io.err(`eval: ${sig}: stopping after the current batch (finished rows are saved; rerun to resume)`);
    controller.abort();
  };
  const onTerm = stop("SIGTERM"),
    onInt = stop("SIGINT");
  process.once("SIGTERM", onTerm);
  process.once("SIGINT", onInt);
  const t0 = Date.now();
  let lastUnit = "";
  try {
    const s = await runShard(pg, {
      index: shard.index,
      count: shard.count,
      outDir,
      threads: int("threads"),
      device,
      batchSize: int("batch-size"),
      signal: controller.signal,
      warn: io.err,
      onProgress: (p) => {
        if (p.unit.id !== lastUnit || p.questionsDone === p.questions) {
          lastUnit = p.unit.id;
          io.err(
            `eval: shard ${shard.index}/${shard.count}: unit ${p.unitsDone + 1}/${p.units} ${p.unit.id} · ${p.questionsDone}/${p.questions} questions (${p.resumed} resumed, ${p.errors} errors)`,
          );
        }
      },
    });
    const secs = ((Date.now() - t0) / 1000).toFixed(1);
    io.out(
      `shard ${shard.index}/${shard.count} of grid "${grid.name}": ${s.units} units, ${s.questions} questions — ran ${s.ran}, resumed ${s.resumed}, ${s.errors} errors, ${secs} s → ${s.file}`,
    );
    if (s.aborted) {
      io.err(`eval: interrupted; rerun the same command to continue`);
      return EXIT.interrupted;
    }
    if (s.errors > 0) {
      io.err(`eval: ${s.errors} questions failed (their rows carry the error); rerunning retries them`);
      return 1;
    }
    return 0;
  } finally {
    process.off("SIGTERM", onTerm);
    process.off("SIGINT", onInt);
  }
}

/**
 * `floatscope status <dir | shard files…>`: how far a grid run has got, from its shard files alone
 * (src/grid/merge.ts): per shard, units and questions done and failed; shards not started.
 */
import { describeMissing, collectShards, summarizeProgress } from "../grid/merge.js";
import { flagHelp, flagSpec, parseFlags, UsageError, type CliIO, type FlagRow } from "./args.js";
import { shardsPath, type CliCommand } from "./command-types.js";
import { shardInputs } from "./inputs.js";

/** The flags of `floatscope status`: the parse options and the help both come from here. */
const STATUS_ROWS: FlagRow[] = [{ name: "json", type: "boolean", help: "one JSON object instead of the table" }];

const HELP = `Usage: floatscope status <shard-dir | shard files…> [--json]

Progress of a grid run (floatscope eval --grid … --shard i/n) from its shard files: per shard the
units and questions done and failed, the shards with no file yet, the unfinished units. Exit code 0
when every question of every shard is done, 1 otherwise.

${flagHelp(STATUS_ROWS, 21)}
  -h, --help         this help`;

export const command: CliCommand = {
  help: HELP,
  flags: flagSpec(STATUS_ROWS),
  paths: [shardsPath(() => [])],
  async run(argv: string[], io: CliIO): Promise<number> {
    const { values: v, positionals } = parseFlags("status", argv, flagSpec(STATUS_ROWS));
    if (positionals.length === 0)
      throw new UsageError("`floatscope status` needs shard files", {
        field: "<shards>",
        expected: "a folder of shard-*.jsonl or the files",
        found: "nothing",
      });
    const { progress } = collectShards(shardInputs("status", positionals));
    const s = summarizeProgress(progress);
    const complete = s.done === s.questions;
    if (v.json) {
      io.out(
        JSON.stringify({
          grid: progress.manifest.grid,
          fingerprint: progress.manifest.fingerprint,
          floatscope: progress.manifest.floatscope,
          complete,
          ...s,
          missing: describeMissing(progress, Infinity),
        }),
      );
      return complete ? 0 : 1;
    }
    const pct = (a: number, b: number) => (b ? `${((100 * a) / b).toFixed(1)} %` : "–");
    io.out(
      [
        `grid "${progress.manifest.grid}" (floatscope ${progress.manifest.floatscope}, ${progress.manifest.fingerprint.slice(0, 19)}…): ${s.done}/${s.questions} questions (${pct(s.done, s.questions)}), ${s.unitsDone}/${s.units} units, ${s.failed} failed`,
        "shard\tfile\tunits done\tquestions done\tfailed",
        ...s.shards.map(
          (x) =>
            `${x.index}/${progress.shardCount}\t${x.present ? "yes" : "MISSING"}\t${x.unitsDone}/${x.units}\t${x.done}/${x.questions} (${pct(x.done, x.questions)})\t${x.failed}`,
        ),
      ].join("\n"),
    );
    const missing = describeMissing(progress);
    if (missing.length) io.out(["still to do:", ...missing.map((m) => `  ${m}`)].join("\n"));
    return complete ? 0 : 1;
  },
};

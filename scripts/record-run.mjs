// One line of findings/runs.jsonl: the provenance of one invocation of a scripts/large-runs.sh step (a
// resumed step adds a line per invocation, so the lines together give the run's commits, machine and wall
// time). For a grid step, the decode seconds per model are summed from its shard files' rows' own `ms`
// (every row, whichever invocation wrote it; a row written twice counts once, the last).
//
//   node scripts/record-run.mjs <step> <started-epoch-s> <load-at-start> <commit-at-start> <clean|dirty|unknown> [run-dir]
//
// The commit is the one checked out when the step started (HEAD may move while a step runs for hours), and
// whether tracked files differed from it then (`dirty`: a run on uncommitted code says so).
// RECORD_FINISHED_EPOCH and RECORD_NOTE (optional) record an invocation after the fact, saying how.
// RECORD_PHASE=start writes the invocation's start line (`"phase": "started"`: commit, machine, start load) as the
// step begins, so a step killed before its end (SIGKILL, a machine that goes away) still leaves a line: a
// "started" line with no "finished" line of the same step and `started` time is an invocation that did not end.
import * as fs from "node:fs";
import * as os from "node:os";

const [step, startedS, load0, commit, state, runDir] = process.argv.slice(2);
if (!step || !startedS) {
  console.error(
    "usage: node scripts/record-run.mjs <step> <started-epoch-s> <load-at-start> <commit-at-start> <clean|dirty|unknown> [run-dir]",
  );
  process.exit(2);
}
const started = Number(startedS) * 1000;
const phase = process.env.RECORD_PHASE === "start" ? "started" : "finished";
const finished = process.env.RECORD_FINISHED_EPOCH ? Number(process.env.RECORD_FINISHED_EPOCH) * 1000 : Date.now();
const record = {
  step,
  phase,
  commit: commit || null,
  dirty: state === "dirty" ? true : state === "clean" ? false : null,
  started: new Date(started).toISOString(),
  ...(phase === "finished" ? { finished: new Date(finished).toISOString(), wallSeconds: Math.round((finished - started) / 1000) } : {}),
  machine: {
    cpu: os.cpus()[0]?.model ?? "unknown",
    cores: os.cpus().length,
    memGiB: +(os.totalmem() / 2 ** 30).toFixed(1),
    node: process.version,
  },
  ...(process.env.RECORD_NOTE ? { note: process.env.RECORD_NOTE } : {}),
  load: {
    start: load0 ?? null,
    ...(phase === "finished" ? { end: fs.readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ") } : {}),
  },
};
if (phase === "finished" && runDir && fs.existsSync(runDir)) {
  const last = new Map();
  for (const f of fs
    .readdirSync(runDir)
    .filter((n) => /^shard-.*\.jsonl$/.test(n))
    .sort()) {
    for (const line of fs.readFileSync(`${runDir}/${f}`, "utf8").split("\n")) {
      if (!line.startsWith("{")) continue;
      const r = JSON.parse(line);
      if (typeof r.model !== "string" || typeof r.ms !== "number") continue; // the manifest line
      last.set(JSON.stringify([r.unit, r.id, r.setting, r.intervention, r.seed]), r);
    }
  }
  const decode = {};
  for (const r of last.values()) {
    const d = (decode[r.model] ??= { rows: 0, seconds: 0 });
    d.rows += 1;
    d.seconds += r.ms / 1000;
  }
  for (const d of Object.values(decode)) d.seconds = Math.round(d.seconds);
  record.decode = decode;
}
fs.appendFileSync("findings/runs.jsonl", JSON.stringify(record) + "\n");
console.log(
  phase === "started"
    ? `[large-runs] start of "${step}" → findings/runs.jsonl (commit ${String(record.commit).slice(0, 7)})`
    : `[large-runs] provenance of "${step}" → findings/runs.jsonl (${record.wallSeconds} s, commit ${String(record.commit).slice(0, 7)}${record.dirty ? ", uncommitted changes" : ""})`,
);

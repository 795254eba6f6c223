/**
 * Child process of every-command-paths.test.ts: runs `main()` in-process for each command line the
 * parent sends and replies with the exit code and output. It is a separate process because a
 * command that opened a FIFO for reading would block this whole process (a synchronous open never
 * returns); the parent times each reply and kills this process when one does not come in time.
 */
import { main } from "../../src/cli/main.js";

interface Job {
  id: number;
  argv: string[];
}

process.on("message", (job: Job) => {
  let out = "",
    err = "";
  const t0 = performance.now();
  main(job.argv, { out: (t) => (out += t + "\n"), err: (t) => (err += t + "\n") }).then(
    (code) => process.send!({ id: job.id, code, out, err, ms: performance.now() - t0 }),
    (e: unknown) => process.send!({ id: job.id, code: -1, out, err: err + `escaped main(): ${(e as Error)?.stack ?? String(e)}`, ms: 0 }),
  );
});
process.send!({ ready: true });

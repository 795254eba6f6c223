/**
 * Child process of torn-trace-cli.test.ts: re-writes a trace with the real TraceWriter, stops after
 * `complete` records (meta + complete−1 steps), says how many bytes that is, then starts one more
 * step record made large (megabytes of token strings) so that the parent's SIGKILL lands inside its
 * write, and never finishes: the file is what a writer killed mid-record leaves.
 *
 *   node --import tsx torn-writer.ts <source.fstrace> <out.fstrace> <complete records> <MiB>
 */
import { readTrace } from "../../src/trace/reader.js";
import { headerOf, TraceWriter } from "../../src/trace/writer.js";

const [src, out, completeArg, mibArg] = process.argv.slice(2);
const trace = readTrace(src);
const steps = Number(completeArg) - 1;
if (trace.steps.length <= steps) throw new Error(`${src} has ${trace.steps.length} steps; need more than ${steps}`);
const w = TraceWriter.create(out, headerOf(trace));
for (let i = 0; i < steps; i++) w.writeStep(trace.steps[i]);
process.stdout.write(`ready ${w.bytesWritten}\n`);
w.writeStep(trace.steps[steps], ["x".repeat(Number(mibArg) * 2 ** 20)]);
process.stdout.write(`wrote ${w.bytesWritten}\n`);
// Never end the trace: only the parent's SIGKILL stops this process.
setInterval(() => {}, 1000);

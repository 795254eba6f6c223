// Worker-thread entry for the fuzz suite: register tsx's loader, then run the TypeScript worker.
// (A worker thread does not inherit vitest's transform, so the .ts sources need a loader of their own.)
import { workerData } from "node:worker_threads";
import { register } from "tsx/esm/api";

register();
await import(workerData.entry);

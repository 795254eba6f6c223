import { getEventListeners } from "node:events";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { openModel } from "../../src/model/open.js";
import { generate } from "../../src/samplers/generate.js";

const DIR = path.resolve(import.meta.dirname, "../../models/tiny-llada");

describe("a caller's abort signal shared by many runs", () => {
  it("carries no listener of ours once each generate call has returned", async () => {
    const m = await openModel(DIR, {});
    try {
      const caller = new AbortController();
      for (let i = 0; i < 3; i++) {
        await generate(
          m.engine,
          ["Where does Sela Doru live ?"],
          { ...m.preset.sampler, genLength: 2, blockLength: 2, steps: 1 },
          {
            tokenizer: m.tokenizer,
            signal: caller.signal,
            stopOnInterrupt: false,
          },
        );
        // Before the fix every call left its relay behind: 1, 2, 3 listeners.
        expect(getEventListeners(caller.signal, "abort")).toHaveLength(0);
      }
    } finally {
      await m.dispose();
    }
  });
});

/** A checkpoint folder's own decoder preset (floatscope-preset.json): read, validated, and preferred over the defaults. */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { checkpointPreset, PRESET_FILE } from "../../src/model/presets.js";
import { CheckpointError } from "../../src/util/errors.js";

const folder = (preset?: unknown) => {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), "floatscope-preset-"));
  if (preset !== undefined) fs.writeFileSync(path.join(d, PRESET_FILE), typeof preset === "string" ? preset : JSON.stringify(preset));
  return d;
};

describe("checkpointPreset", () => {
  it("returns the folder's preset as written, and null without the file", () => {
    const p = { promptFormat: "tiny-world", sampler: { sampler: "dream", genLength: 8, steps: 8 }, extraction: "up-to-eos" };
    expect(checkpointPreset(folder(p))).toEqual(p);
    expect(checkpointPreset(folder())).toBeNull();
  });

  it("the committed presets of the SmolLM2 adaptations are valid", () => {
    for (const name of ["smollm2-135m-dream-world", "smollm2-135m-causal-world"]) {
      const d = path.join(__dirname, "../../models", name);
      expect(checkpointPreset(d)?.promptFormat, name).toBe("tiny-world");
    }
  });

  it("a malformed preset is a CheckpointError naming the field", () => {
    const bad = (p: unknown) => () => checkpointPreset(folder(p));
    expect(bad("{not json")).toThrow(CheckpointError);
    expect(bad({ promptFormat: "chatml", sampler: {}, extraction: "none" })).toThrow(/promptFormat/);
    try {
      checkpointPreset(folder({ promptFormat: "tiny-world", sampler: {}, extraction: "all" }));
      expect.unreachable();
    } catch (e) {
      expect((e as CheckpointError).field).toBe("extraction");
    }
    expect(bad({ promptFormat: "tiny-world", sampler: [1], extraction: "none" })).toThrow(/sampler/);
  });
});

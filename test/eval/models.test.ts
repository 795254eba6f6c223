import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { findModels, MODEL_MISSING_MARK, modelsNote, NO_MODEL_MARK } from "../../src/notebook/models.js";
import * as notebookEntry from "../../src/entry/notebook.js";
import * as lib from "../../src/index.js";

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "fs-models-"));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

function checkpoint(name: string, withConfig = true): void {
  fs.mkdirSync(path.join(tmp, name), { recursive: true });
  if (withConfig) fs.writeFileSync(path.join(tmp, name, "config.json"), "{}");
}
checkpoint("tiny-llada");
checkpoint("tiny-qwen", false); // a run still publishing: folder without config.json
checkpoint("LLaDA-8B-Instruct");
fs.writeFileSync(path.join(tmp, "tiny-dream"), "not a folder");

describe("findModels", () => {
  it("splits the requested families into present (folder with config.json) and missing, with the reason", () => {
    const f = findModels(tmp, ["llama", "qwen2", "llada", "dream"]);
    expect(f.present).toEqual([{ family: "llada", name: "tiny-llada", dir: path.join(tmp, "tiny-llada") }]);
    expect(f.names).toEqual({ llada: "tiny-llada" });
    expect(f.none).toBe(false);
    const why = Object.fromEntries(f.missing.map((m) => [m.family, m.reason]));
    expect(Object.keys(why)).toEqual(["llama", "qwen2", "dream"]); // requested order
    expect(why.llama).toMatch(/no such folder/);
    expect(why.qwen2).toMatch(/no config\.json/);
    expect(why.dream).toMatch(/not a folder/);
    // one line per missing model: where it looked and how to get it
    expect(f.notes).toHaveLength(3);
    expect(f.notes[0]).toContain(MODEL_MISSING_MARK);
    expect(f.notes[0]).toContain(path.join(tmp, "tiny-llama"));
    const note = modelsNote(f);
    expect(note).toMatch(/training\/run_all\.sh/);
    expect(note).toMatch(/FLOATSCOPE_MODELS/);
    expect(note).toMatch(/FLOATSCOPE_MODEL_NAMES/);
    expect(note).toContain("tiny-llada (llada)");
    expect(note).not.toContain(NO_MODEL_MARK);
    const bundle = f.toMimeBundle();
    expect(bundle["text/markdown"]).toBe(note);
    expect(bundle["text/plain"]).not.toMatch(/[*`]/);
  });

  it("uses the name overrides (FLOATSCOPE_MODEL_NAMES) instead of the tiny folder names", () => {
    const f = findModels(tmp, ["llada", "dream"], { llada: "LLaDA-8B-Instruct", dream: "Dream-v0-Instruct-7B" });
    expect(f.names).toEqual({ llada: "LLaDA-8B-Instruct" });
    expect(f.missing.map((m) => m.name)).toEqual(["Dream-v0-Instruct-7B"]);
  });

  it("accepts the alias `qwen` for the family `qwen2`, in the family list and in the name overrides", () => {
    const viaList = findModels(tmp, ["qwen", "llada"]);
    expect(viaList.missing.map((m) => [m.family, m.name])).toEqual([["qwen2", "tiny-qwen"]]);
    const viaNames = findModels(tmp, ["qwen2", "llada"], { qwen: "LLaDA-8B-Instruct" });
    expect(viaNames.names).toEqual({ qwen2: "LLaDA-8B-Instruct", llada: "tiny-llada" });
    // the canonical key wins over its alias
    expect(findModels(tmp, ["qwen2"], { qwen: "nowhere", qwen2: "LLaDA-8B-Instruct" }).names).toEqual({ qwen2: "LLaDA-8B-Instruct" });
  });

  it("says so when none is usable, and when all are there", () => {
    const none = findModels(path.join(tmp, "nowhere"), ["llama", "qwen2"]);
    expect(none.none).toBe(true);
    expect(none.present).toEqual([]);
    expect(none.names).toEqual({});
    expect(modelsNote(none)).toContain(NO_MODEL_MARK);
    expect(none.missing.every((m) => m.reason === "no such folder")).toBe(true);
    const all = findModels(tmp, ["llada"]);
    expect(all.missing).toEqual([]);
    expect(all.notes).toEqual([]);
    expect(modelsNote(all)).toMatch(/All 1 model\(s\) found/);
  });

  it("is exported from the package entry, its marks from floatscope/notebook", () => {
    expect(lib.findModels).toBe(findModels);
    expect(notebookEntry.NO_MODEL_MARK).toBe(NO_MODEL_MARK);
  });
});

/**
 * save() and folders: a missing folder is refused like the CLI without --mkdir
 * (a typed error naming it, nothing created) unless `{ mkdir: true }`; a folder or a FIFO at the
 * file's name is refused before anything is drawn; and `save(scrubber(traces), "x.svg")` writes the
 * scrubber's static image (it used to be refused as "kind undefined").
 */
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { figureSvg, save } from "../../src/figures/save.js";
import { scrubber } from "../../src/figures/scrubber.js";
import { scrubberSvg } from "../../src/figures/scrubber-svg.js";
import { SettingsError } from "../../src/util/errors.js";
import { syntheticTrace } from "../widgets/synthetic-trace.js";
import { FIGURE_INPUTS } from "./figure-inputs.js";

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "fs-save-folders-"));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

function thrown(f: () => unknown): SettingsError {
  try {
    f();
  } catch (e) {
    return e as SettingsError;
  }
  throw new Error("did not throw");
}

describe("save() follows the CLI's folder rule", () => {
  it("a missing folder is a SettingsError naming it, with the option in the hint; nothing is created", () => {
    const file = path.join(dir, "no", "such", "fig.svg");
    const e = thrown(() => save(FIGURE_INPUTS.absorption, file));
    expect(e).toBeInstanceOf(SettingsError);
    expect(e.message).toMatch(/^The folder of the save\(\) file does not exist/);
    expect(e.file).toBe(path.join(dir, "no", "such"));
    expect(e.hint).toBe("create it first, or pass { mkdir: true }");
    expect(fs.existsSync(path.join(dir, "no"))).toBe(false);
  });

  it("{ mkdir: true } creates the missing folders and writes the figure", () => {
    const file = path.join(dir, "made", "here", "fig.svg");
    const r = save(FIGURE_INPUTS.absorption, file, { mkdir: true });
    expect(r.path).toBe(file);
    expect(fs.readFileSync(file, "utf8")).toBe(figureSvg(FIGURE_INPUTS.absorption));
  });

  it("a folder or a FIFO at the file's name is refused (a FIFO is never opened)", () => {
    const folder = path.join(dir, "taken.svg");
    fs.mkdirSync(folder);
    expect(thrown(() => save(FIGURE_INPUTS.qk, folder)).message).toMatch(/is a folder, not a regular file or a new file name/);
    const fifo = path.join(dir, "pipe.png");
    expect(spawnSync("mkfifo", [fifo]).status).toBe(0);
    expect(thrown(() => save(FIGURE_INPUTS.qk, fifo)).message).toMatch(/is a FIFO \(named pipe\)/);
  });

  it("an existing file is replaced, in an existing folder, without mkdir", () => {
    const file = path.join(dir, "again.svg");
    fs.writeFileSync(file, "old");
    save(FIGURE_INPUTS.qk, file);
    expect(fs.readFileSync(file, "utf8")).toBe(figureSvg(FIGURE_INPUTS.qk));
  });
});

describe("save(scrubber(traces), …)", () => {
  const fig = scrubber([syntheticTrace({ promptLength: 6, genLength: 8, steps: 8, layers: 4, heads: 2 })]);

  it("writes the scrubber's static image as SVG: the picture show() sends beside the widget", () => {
    const r = save(fig, path.join(dir, "scrub.svg"));
    const svg = fs.readFileSync(r.path, "utf8");
    expect(svg).toBe(scrubberSvg(fig.payload));
    expect(svg).toBe(String(fig.toMimeBundle()["image/svg+xml"]));
    expect(r.format).toBe("svg");
    expect(r.width).toBeGreaterThan(0);
  });

  it("and as PNG", () => {
    const r = save(fig, path.join(dir, "scrub.png"), { scale: 1 });
    expect(fs.readFileSync(r.path).subarray(1, 4).toString("ascii")).toBe("PNG");
    expect(r.width).toBeGreaterThan(0);
  });
});

/**
 * The README's own-prompt example ("Your own prompt on several models, side by side") runs as it
 * stands: the ```ts block after its marker comment is executed twice —
 * - through the library's TypeScript source (vitest's transform), with notebooks/ as the working
 *   directory like JupyterLab, its `show()` captured: a multi-run scrubber with one run per model;
 * - in the installed "TypeScript (floatscope)" kernel (tslab compiles it with TS 5.0 against the built
 *   `src/dist/*.d.ts`, so a type error in the example fails here), when setup has run and the build
 *   has `compare`.
 * The only rewrite is the package name → this checkout's src/index.ts for the first run.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { captureDisplays } from "../../src/display/sink.js";
import { MIME_SCRUBBER } from "../../src/protocol/payloads.js";
import { KernelClient } from "../kernel/driver.js";
import { INSTALLED_KERNEL_JSON, NOTEBOOKS, ROOT, setupMissing } from "../kernel/env.js";

const MARK = "<!-- own-prompt example:";

/** The ```ts block that follows the marker comment in README.md. */
export function readmeExample(readme: string): string {
  const at = readme.indexOf(MARK);
  if (at < 0) throw new Error(`README.md has no ${MARK} … --> marker`);
  const m = /```ts\n([\s\S]*?)\n```/.exec(readme.slice(at));
  if (!m) throw new Error("no ```ts block after the own-prompt marker");
  return m[1];
}

const CODE = readmeExample(readFileSync(join(ROOT, "README.md"), "utf8"));
const haveModels = ["tiny-llada", "tiny-llama"].every((m) => existsSync(join(ROOT, "models", m, "config.json")));
const tmp = mkdtempSync(join(tmpdir(), "floatscope-readme-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

interface ScrubberPayloadLike {
  runs: { label: string; tokens: string[] }[];
}

describe("README own-prompt example", () => {
  it("is the documented call (compare + show, two models, passages as strings, pattern: true)", () => {
    expect(CODE).toMatch(/import \{ compare, show \} from "floatscope";/);
    expect(CODE).toMatch(/passages: \["/);
    expect(CODE).toMatch(/pattern: true/);
  });

  it.runIf(haveModels)(
    "runs through the library source and shows one scrubber with a run per model",
    async () => {
      const src = CODE.replace(/from "floatscope"/g, `from ${JSON.stringify(join(ROOT, "src", "index.ts"))}`);
      const file = join(tmp, "example.ts");
      writeFileSync(file, src);
      const cwd = process.cwd();
      const cap = captureDisplays();
      try {
        process.chdir(NOTEBOOKS);
        await import(pathToFileURL(file).href);
      } finally {
        process.chdir(cwd);
        cap.restore();
      }
      expect(cap.messages).toHaveLength(1);
      const data = cap.messages[0].message.data as Record<string, unknown>;
      const payload = data[MIME_SCRUBBER] as ScrubberPayloadLike;
      expect(payload.runs).toHaveLength(2);
      expect(payload.runs.map((r) => r.label).join(" ")).toMatch(/tiny-llada.*tiny-llama/);
      expect(String(data["image/svg+xml"])).toMatch(/^<svg/);
    },
    180_000,
  );

  const missing = setupMissing();
  const built = existsSync(join(ROOT, "src", "dist", "compare.js"));
  it.runIf(haveModels && missing === null && built)(
    "runs in the installed kernel (TS 5.0 type-checks it) and displays the scrubber",
    async () => {
      const kernel = await KernelClient.start(INSTALLED_KERNEL_JSON, NOTEBOOKS);
      try {
        const r = await kernel.execute(CODE);
        const stderr = r.iopub
          .filter((m) => m.header.msg_type === "stream" && m.content.name === "stderr")
          .map((m) => m.content.text)
          .join("");
        const err = r.iopub.find((m) => m.header.msg_type === "error");
        expect(r.reply.content.status, `${stderr}\n${err ? JSON.stringify(err.content).slice(0, 2000) : ""}`).toBe("ok");
        const shown = r.iopub.filter((m) => m.header.msg_type === "display_data").map((m) => m.content.data as Record<string, unknown>);
        expect(shown.some((d) => (d[MIME_SCRUBBER] as ScrubberPayloadLike | undefined)?.runs.length === 2)).toBe(true);
      } finally {
        await kernel.shutdown();
      }
    },
    240_000,
  );
});

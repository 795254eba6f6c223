/**
 * src/util/paths.ts on real file-system objects: what each kind of path is called, bounded reads,
 * non-blocking opens, and the output checks (nothing created unless asked; each folder created is
 * announced).
 */
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as net from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { CheckpointError } from "../../src/util/errors.js";
import {
  PathError,
  checkOutputDirectory,
  checkOutputFile,
  inspectPath,
  openRegularFile,
  optionalFile,
  readFileBounded,
  requireDirectory,
  requireFile,
} from "../../src/util/paths.js";

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "fs-paths-"));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));
const p = (...parts: string[]) => path.join(tmp, ...parts);

function thrown(f: () => unknown): Error {
  try {
    f();
  } catch (e) {
    return e as Error;
  }
  throw new Error("did not throw");
}

describe("inspectPath", () => {
  it("names every kind of thing a path can be", async () => {
    fs.writeFileSync(p("file"), "abc");
    fs.mkdirSync(p("dir"));
    fs.symlinkSync(p("nowhere"), p("dangling"));
    fs.symlinkSync(p("loop2"), p("loop1"));
    fs.symlinkSync(p("loop1"), p("loop2"));
    fs.symlinkSync(p("file"), p("link-to-file"));
    expect(spawnSync("mkfifo", [p("fifo")]).status).toBe(0);
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(p("sock"), resolve));
    try {
      const kinds = Object.fromEntries(
        ["file", "dir", "missing", "dangling", "loop1", "link-to-file", "fifo", "sock"].map((n) => [n, inspectPath(p(n)).kind]),
      );
      expect(kinds).toEqual({
        file: "file",
        dir: "directory",
        missing: "missing",
        dangling: "dangling-link",
        loop1: "link-loop",
        "link-to-file": "file",
        fifo: "fifo",
        sock: "socket",
      });
      expect(inspectPath(p("file", "below")).kind).toBe("not-a-directory");
      expect(inspectPath("/dev/null").kind).toBe("character-device");
      expect(inspectPath(p("link-to-file"))).toMatchObject({ realPath: p("file"), size: 3 });
    } finally {
      server.close();
    }
  });
});

describe("checks on paths we read", () => {
  it("requireFile / requireDirectory / optionalFile throw the caller's error class with the path and its kind", () => {
    const e = thrown(() => requireFile(p("dir"), { what: "weights file", error: CheckpointError, field: "(file)" })) as CheckpointError;
    expect(e).toBeInstanceOf(CheckpointError);
    expect(e.file).toBe(p("dir"));
    expect(e.found).toBe("a folder");
    expect(thrown(() => requireDirectory(p("file"), { what: "checkpoint folder" }))).toBeInstanceOf(PathError);
    expect(optionalFile(p("missing"), { what: "x" })).toBeUndefined();
    expect(thrown(() => optionalFile(p("dangling"), { what: "tokenizer.json" })).message).toMatch(
      /symbolic link whose target does not exist/,
    );
    expect(thrown(() => optionalFile(p("loop1"), { what: "config.json" })).message).toMatch(/symbolic link loop/);
  });

  it("a FIFO is refused without blocking, by requireFile and by openRegularFile", () => {
    const t0 = performance.now();
    expect(thrown(() => openRegularFile(p("fifo"), { what: "weights file" })).message).toMatch(/a FIFO \(named pipe\), not a regular file/);
    expect(performance.now() - t0).toBeLessThan(2000);
  });

  it("readFileBounded refuses a file over the cap before reading it, and reads a file under it whole", () => {
    fs.writeFileSync(p("big"), Buffer.alloc(1000, 65));
    const e = thrown(() => readFileBounded(p("big"), { what: "config.json", maxBytes: 999 }));
    expect(e.message).toMatch(/config\.json is too large[\s\S]*at most 999 bytes[\s\S]*1000 bytes/);
    expect(readFileBounded(p("big"), { what: "config.json", maxBytes: 1000 }).length).toBe(1000);
  });
});

describe("checks on paths we write", () => {
  it("checkOutputFile: a folder or FIFO is refused; a missing folder only with mkdir, each created folder announced", () => {
    expect(thrown(() => checkOutputFile(p("dir"), { what: "--out file" })).message).toMatch(/--out file is a folder/);
    expect(thrown(() => checkOutputFile(p("fifo"), { what: "--out file" })).message).toMatch(/FIFO/);
    const target = p("a", "b", "c", "out.bin");
    expect(thrown(() => checkOutputFile(target, { what: "--out file", mkdirHint: "pass --mkdir" })).message).toMatch(
      /does not exist[\s\S]*hint: pass --mkdir/,
    );
    expect(fs.existsSync(p("a"))).toBe(false);
    const created: string[] = [];
    expect(checkOutputFile(target, { what: "--out file", mkdir: true, onCreate: (d) => created.push(d) })).toBe(target);
    expect(created).toEqual([p("a"), p("a", "b"), p("a", "b", "c")]);
    expect(fs.existsSync(target)).toBe(false); // only the folders: the file is the caller's to write
    expect(checkOutputFile(p("file"), { what: "--out file" })).toBe(p("file"));
    expect(thrown(() => checkOutputFile(p("file", "x"), { what: "--out file", mkdir: true })).message).toMatch(
      /a path through something that is not a folder/,
    );
  });

  it("checkOutputDirectory creates the folder itself (announced) but not missing parents unless mkdir", () => {
    const created: string[] = [];
    expect(checkOutputDirectory(p("traces"), { what: "--traces folder", onCreate: (d) => created.push(d) })).toBe(p("traces"));
    expect(created).toEqual([p("traces")]);
    expect(thrown(() => checkOutputDirectory(p("x", "traces"), { what: "--traces folder" })).message).toMatch(/does not exist/);
    expect(thrown(() => checkOutputDirectory(p("file"), { what: "--traces folder" })).message).toMatch(/is a regular file, not a folder/);
  });
});

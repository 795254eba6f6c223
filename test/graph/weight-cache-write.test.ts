/**
 * The weight cache writes a decoded tensor in bounded calls (fs.writeSync refuses more than
 * 2 GiB − 1 bytes at once; a Dream-7B float32 embedding is 2.18 GB): a small chunk bound here
 * stands in for the 1 GiB one, so the loop is exercised without writing gigabytes.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { writeAllAt } from "../../src/graph/build/weight-cache.js";
import { RuntimeError } from "../../src/util/errors.js";

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "floatscope-wc-write-"));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe("writeAllAt", () => {
  it("writes every byte at the offset in calls of at most maxChunk bytes", () => {
    const file = path.join(dir, "a.bin");
    const data = Uint8Array.from({ length: 1000 }, (_, i) => (i * 37 + 11) & 255);
    const fd = fs.openSync(file, "w");
    try {
      fs.writeSync(fd, Buffer.from("head"), 0, 4, 0);
      writeAllAt(fd, data, 64, file, 7); // 143 calls, the last one 6 bytes
    } finally {
      fs.closeSync(fd);
    }
    const back = fs.readFileSync(file);
    expect(back.length).toBe(1064);
    expect(back.subarray(0, 4).toString()).toBe("head");
    expect([...back.subarray(4, 64)].every((b) => b === 0)).toBe(true);
    expect(Buffer.compare(back.subarray(64), Buffer.from(data))).toBe(0);
  });

  it.skipIf(!fs.existsSync("/dev/full"))("a full disk (Linux's /dev/full) is a RuntimeError naming the file", () => {
    const fd = fs.openSync("/dev/full", "w");
    let e: unknown;
    try {
      writeAllAt(fd, new Uint8Array(4096), 0, "/dev/full");
    } catch (x) {
      e = x;
    } finally {
      fs.closeSync(fd);
    }
    expect(e).toBeInstanceOf(RuntimeError);
    expect((e as RuntimeError).file).toBe("/dev/full");
    expect((e as RuntimeError).found).toBe("ENOSPC");
  });
});

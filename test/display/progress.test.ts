import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { inspect } from "node:util";
import { captureDisplays, setDisplaySink, type DisplayCapture } from "../../src/display/sink.js";
import { progress, progressText } from "../../src/display/progress.js";
import { SettingsError } from "../../src/util/errors.js";
import { parseHtml, texts } from "./markup.js";

let cap: DisplayCapture | null = null;
beforeEach(() => {
  vi.useFakeTimers();
  vi.setSystemTime(new Date("2026-01-01T00:00:00Z"));
});
afterEach(() => {
  cap?.restore();
  cap = null;
  vi.useRealTimers();
});

describe("progress() in a notebook", () => {
  it("is one output: display_data first, then update_display_data with the same id", () => {
    cap = captureDisplays();
    const p = progress(4, { label: "steps" });
    for (let i = 0; i < 4; i++) {
      vi.advanceTimersByTime(150);
      p.tick();
    }
    p.done();
    const ids = new Set(cap.messages.map((m) => m.message.transient.display_id));
    expect(ids.size).toBe(1);
    expect(cap.messages.map((m) => m.update)).toEqual([false, true, true, true, true, true]);
    for (const { message } of cap.messages) expect(Object.keys(message.data).sort()).toEqual(["text/html", "text/plain"]);
    const last = cap.messages.at(-1)!.message.data["text/plain"] as string;
    expect(last).toMatch(/^steps {2}4\/4 \[█{20}\] 100% · done in 0\.6 s$/);
  });

  it("throttles to about 10 Hz however fast the loop ticks", () => {
    cap = captureDisplays();
    const p = progress(1000);
    for (let i = 0; i < 1000; i++) {
      vi.advanceTimersByTime(10); // 1000 ticks over 10 s
      p.tick();
    }
    p.done();
    // 1 initial + at most one per 100 ms over 10 s + the final redraw
    expect(cap.messages.length).toBeGreaterThanOrEqual(95);
    expect(cap.messages.length).toBeLessThanOrEqual(102);
  });

  it("always sends the final state, even when throttled, and ignores updates after done()", () => {
    cap = captureDisplays();
    const p = progress(10);
    p.update(7);
    p.done();
    p.update(9);
    expect(cap.messages).toHaveLength(2);
    expect(cap.messages[1].message.data["text/plain"]).toContain("7/10");
    expect(p.value).toBe(7);
  });

  it("clamps values and escapes the label in HTML", () => {
    cap = captureDisplays();
    const label = '<script>x</script> & "q"';
    const p = progress(5, { label });
    p.update(99);
    p.done();
    const doc = parseHtml(cap.messages.at(-1)!.message.data["text/html"] as string);
    expect(doc.querySelectorAll("script").length).toBe(0);
    expect(texts(doc, ".floatscope-progress > span")[0]).toBe(label);
    expect(p.value).toBe(5);
  });

  it("prints briefly as a cell's last expression", () => {
    cap = captureDisplays();
    const p = progress(3, { label: "x" });
    p.tick();
    expect(inspect(p)).toBe("Progress(x: 1/3)");
  });
});

describe("progress() outside a kernel", () => {
  it("writes lines to the stream instead of failing", () => {
    setDisplaySink(null);
    const lines: string[] = [];
    const p = progress(3, { label: "eval", stream: { write: (s: string) => lines.push(s) } });
    p.tick();
    vi.advanceTimersByTime(2500);
    p.tick();
    p.done();
    expect(lines).toHaveLength(3); // start, one throttled line after 2 s, done
    expect(lines[0]).toBe(`eval  0/3 [${"░".repeat(20)}] 0% · 0.0 s elapsed\n`);
    expect(lines[2]).toMatch(/^eval {2}2\/3 .* done in 2\.5 s\n$/);
  });

  it("redraws in place on a terminal", () => {
    setDisplaySink(null);
    const out: string[] = [];
    const p = progress(2, { stream: { write: (s: string) => out.push(s), isTTY: true } });
    vi.advanceTimersByTime(200);
    p.tick();
    p.done();
    expect(out.every((s) => s.startsWith("\r"))).toBe(true);
    expect(out.at(-1)!.endsWith("\n")).toBe(true);
  });
});

describe("progress() arguments", () => {
  it.each([[-1], [NaN], [Infinity], ["10"]])("rejects total %s", (total) => {
    expect(() => progress(total as number)).toThrow(SettingsError);
  });

  it("estimates the remaining time from the pace so far", () => {
    expect(progressText({ label: "", value: 25, total: 100, elapsedMs: 10_000, final: false })).toBe(
      `25/100 [${"█".repeat(5)}${"░".repeat(15)}] 25% · 10.0 s elapsed · ETA 30.0 s`,
    );
  });
});

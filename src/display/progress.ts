/**
 * `progress(total)`: a progress display for long loops (sampling steps, prompts of an eval).
 *
 * In a notebook it is one output updated in place through `update_display_data`, throttled to
 * about 10 Hz: Jupyter servers drop iopub messages above ~1000/s, and every update resends the
 * whole bundle (text/plain + a small text/html bar). Outside a kernel (scripts, CLI, tests
 * without a sink) it writes to stderr instead: `\r`-redrawn on a terminal, a line every couple of
 * seconds in logs.
 */
import { inspect } from "node:util";
import { SettingsError } from "../util/errors.js";
import { escapeMarkup } from "../figures/svg.js";
import type { MimeBundle } from "./mime.js";
import { currentSink, hasSink, newDisplayId } from "./sink.js";

export interface ProgressOptions {
  /** Shown before the counter, e.g. "sampling". */
  label?: string;
  /** Minimum time between two updates in a notebook (default 100 ms ≈ 10 Hz). */
  minIntervalMs?: number;
  /** Where to write outside a kernel (default process.stderr). */
  stream?: { write(chunk: string): unknown; isTTY?: boolean };
}

export interface Progress {
  readonly total: number;
  readonly value: number;
  /** Set the absolute position (clamped to [0, total]). */
  update(value: number): void;
  /** Advance by `by` (default 1). */
  tick(by?: number): void;
  /** Final redraw (always sent, never throttled). Further updates are ignored. */
  done(): void;
}

/**
 * @example
 *   const p = progress(steps.length, { label: "denoising" });
 *   for (const s of steps) { await sampler.step(s); p.tick(); }
 *   p.done();
 */
export function progress(total: number, options: ProgressOptions = {}): Progress {
  if (typeof total !== "number" || !Number.isFinite(total) || total < 0) {
    throw new SettingsError("progress() needs a finite, non-negative total", {
      field: "total",
      expected: "a number ≥ 0",
      found: String(total),
    });
  }
  const label = options.label ?? "";
  if (typeof label !== "string")
    throw new SettingsError("progress() label must be a string", { field: "label", expected: "string", found: typeof label });
  const inNotebook = hasSink();
  const stream = options.stream ?? process.stderr;
  const tty = stream.isTTY === true;
  const minInterval = options.minIntervalMs ?? (inNotebook || tty ? 100 : 2000);
  const displayId = newDisplayId();
  const started = Date.now();
  let value = 0;
  let lastEmit = -Infinity;
  let emitted = false;
  let finished = false;

  const emit = (final: boolean): void => {
    const state: ProgressState = { label, value, total, elapsedMs: Date.now() - started, final };
    if (inNotebook) {
      currentSink("progress()")({ data: progressBundle(state), metadata: {}, transient: { display_id: displayId } }, emitted);
    } else {
      const line = progressText(state);
      stream.write(tty ? `\r${line}${final ? "\n" : ""}` : `${line}\n`);
    }
    emitted = true;
    lastEmit = Date.now();
  };
  const maybeEmit = (): void => {
    if (!finished && Date.now() - lastEmit >= minInterval) emit(false);
  };

  const handle: Progress & { [inspect.custom](): string } = {
    get total() {
      return total;
    },
    get value() {
      return value;
    },
    update(v: number) {
      if (finished) return;
      value = Math.min(total, Math.max(0, Number.isFinite(v) ? v : 0));
      maybeEmit();
    },
    tick(by = 1) {
      handle.update(value + by);
    },
    done() {
      if (finished) return;
      finished = true;
      emit(true);
    },
    [inspect.custom]() {
      return `Progress(${label ? `${label}: ` : ""}${value}/${total}${finished ? ", done" : ""})`;
    },
  };
  emit(false); // show the empty bar at once, so the user sees the loop has started
  return handle;
}

/** Everything a progress redraw shows. */
export interface ProgressState {
  label: string;
  value: number;
  total: number;
  elapsedMs: number;
  final: boolean;
}

function duration(ms: number): string {
  const s = ms / 1000;
  if (s < 60) return `${s.toFixed(1)} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min ${Math.round(s - m * 60)} s`;
  return `${Math.floor(m / 60)} h ${m % 60} min`;
}

function fraction(st: ProgressState): number {
  return st.total === 0 ? 1 : st.value / st.total;
}

/** One line of text, e.g. "sampling  12/64 [████░░░░░░░░░░░░░░░░]  19% · 3.1 s elapsed · ETA 13.4 s". */
export function progressText(st: ProgressState): string {
  const f = fraction(st);
  const filled = Math.round(f * 20);
  const bar = "█".repeat(filled) + "░".repeat(20 - filled);
  const head = `${st.label ? `${st.label}  ` : ""}${st.value}/${st.total} [${bar}] ${Math.floor(f * 100)}%`;
  if (st.final) return `${head} · done in ${duration(st.elapsedMs)}`;
  const eta = st.value > 0 && st.value < st.total ? ` · ETA ${duration((st.elapsedMs / st.value) * (st.total - st.value))}` : "";
  return `${head} · ${duration(st.elapsedMs)} elapsed${eta}`;
}

/** The bundle sent at each redraw: text/plain plus a small self-contained HTML bar (escaped label). */
export function progressBundle(st: ProgressState): MimeBundle {
  const pct = Math.floor(fraction(st) * 100);
  const color = st.final ? "#3a7d44" : "#4a7bd0";
  const status = progressText({ ...st, label: "" });
  const html =
    `<div class="floatscope-progress" style="display:flex;align-items:center;gap:8px;font-family:system-ui,sans-serif;font-size:12px">` +
    (st.label ? `<span>${escapeMarkup(st.label)}</span>` : "") +
    `<div style="width:200px;height:10px;background:#e6e6e6;border-radius:3px;overflow:hidden">` +
    `<div style="width:${pct}%;height:100%;background:${color}"></div></div>` +
    `<span style="color:#555">${escapeMarkup(status.replace(/ \[[█░]+\]/, ""))}</span></div>`;
  return { "text/html": html, "text/plain": progressText(st) };
}

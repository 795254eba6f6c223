/**
 * Which scrubber the export commands act on: the one the user last clicked or focused, else the
 * most recently created one still on the page.
 */
import type { ScrubberView } from "./view.js";

const live = new Set<ScrubberView>();
let last: ScrubberView | null = null;

export function registerScrubber(v: ScrubberView): void {
  live.add(v);
  last = v;
  const mark = () => (last = v);
  v.root.addEventListener("pointerdown", mark);
  v.root.addEventListener("focusin", mark);
}

export function unregisterScrubber(v: ScrubberView): void {
  live.delete(v);
  if (last === v) last = null;
}

export function activeScrubber(): ScrubberView | null {
  if (last && live.has(last) && last.root.isConnected) return last;
  const connected = [...live].filter((v) => v.root.isConnected);
  return connected.length ? connected[connected.length - 1] : null;
}

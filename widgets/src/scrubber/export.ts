/**
 * Export the scrubber's current view for papers: a PNG composed from the live canvases, and a
 * standalone SVG whose heat images are embedded PNGs at native resolution (one pixel per cell)
 * and whose text, step marker and token strip are vectors. All text is escaped.
 */
import { escapeXml, tokenLabel } from "../dom.js";
import type { ScrubberPayload } from "../protocol.js";
import { COLORS, type PanelView } from "./draw.js";
import type { PanelElements } from "./view.js";

const GAP = 16;
const TITLE_H = 22;

function dataUrl(c: HTMLCanvasElement | null): string | null {
  if (!c) return null;
  try {
    const u = c.toDataURL("image/png");
    return typeof u === "string" && u.startsWith("data:image/png") ? u : null;
  } catch {
    return null;
  }
}

export function scrubberPng(panels: PanelElements[], payload: ScrubberPayload): Promise<Blob | null> {
  const scale = 2;
  const w = panels.reduce((a, p) => a + p.width, 0) + GAP * (panels.length + 1);
  const h = TITLE_H * 2 + Math.max(...panels.map((p) => p.temporalHeight + p.strip.height + p.mapSize + 3 * GAP));
  const c = document.createElement("canvas");
  c.width = w * scale;
  c.height = h * scale;
  const ctx = c.getContext("2d");
  if (!ctx) return Promise.resolve(null);
  ctx.scale(scale, scale);
  ctx.fillStyle = "#fff";
  ctx.fillRect(0, 0, w, h);
  ctx.fillStyle = "#222";
  ctx.font = "14px sans-serif";
  ctx.fillText(payload.title ?? "attention scrubber", GAP, 16);
  let x = GAP;
  for (const p of panels) {
    ctx.font = "12px sans-serif";
    ctx.fillStyle = "#222";
    ctx.fillText(p.title.textContent ?? "", x, TITLE_H + 14);
    let y = TITLE_H * 2;
    ctx.drawImage(p.temporal, x, y, p.width, p.temporalHeight);
    y += p.temporalHeight + 2;
    ctx.drawImage(p.strip, x, y, p.width, p.strip.height);
    y += p.strip.height + GAP;
    ctx.drawImage(p.map, x, y, p.mapSize, p.mapSize);
    x += p.width + GAP;
  }
  return new Promise((resolve) => c.toBlob((b) => resolve(b), "image/png"));
}

/** Merge consecutive positions of equal colour into one rect (fewer SVG elements). */
function runs(colors: string[]): [number, number, string][] {
  const out: [number, number, string][] = [];
  for (let j = 0; j < colors.length; j++) {
    const last = out[out.length - 1];
    if (last && last[2] === colors[j] && last[0] + last[1] === j) last[1]++;
    else out.push([j, 1, colors[j]]);
  }
  return out;
}

export function scrubberSvg(panels: PanelElements[], payload: ScrubberPayload, viewOf: (p: PanelElements) => PanelView): string {
  const labelH = 90;
  const w = panels.reduce((a, p) => a + p.width, 0) + GAP * (panels.length + 1);
  const h = TITLE_H * 2 + Math.max(...panels.map((p) => p.temporalHeight + p.strip.height + labelH + p.mapSize + 3 * GAP));
  const parts: string[] = [];
  parts.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}" viewBox="0 0 ${w} ${h}" font-family="sans-serif">`,
    `<title>${escapeXml(payload.title ?? "attention scrubber")}</title>`,
    `<desc>${escapeXml("prompt: " + payload.prompt)}</desc>`,
    `<rect width="${w}" height="${h}" fill="#fff"/>`,
    `<text x="${GAP}" y="16" font-size="14">${escapeXml(payload.title ?? "attention scrubber")}</text>`,
  );
  let x = GAP;
  for (const p of panels) {
    const v = viewOf(p);
    const d = p.data;
    parts.push(`<g transform="translate(${x},0)">`);
    parts.push(`<text x="0" y="${TITLE_H + 14}" font-size="12">${escapeXml(p.title.textContent ?? "")}</text>`);
    let y = TITLE_H * 2;
    const heat = dataUrl(p.images.temporal(v.layer, v.head, v.showAnchors, v.scale));
    if (heat) {
      parts.push(
        `<image x="0" y="${y}" width="${p.width}" height="${p.temporalHeight}" preserveAspectRatio="none" style="image-rendering:pixelated" href="${heat}"/>`,
      );
    }
    const rowH = p.temporalHeight / Math.max(1, d.S);
    parts.push(
      `<rect x="0" y="${(y + v.step * rowH).toFixed(2)}" width="${p.width}" height="${rowH.toFixed(2)}" fill="none" stroke="${COLORS.step}" stroke-width="1.5"/>`,
    );
    y += p.temporalHeight + 2;
    const colW = p.width / Math.max(1, d.N);
    const colors: string[] = [];
    for (let j = 0; j < d.N; j++) {
      const st = d.tokenState(v.step, j);
      colors.push(st === "masked" && d.unmaskedAt[j] === d.run.steps[v.step] ? COLORS.justUnmasked : COLORS[st]);
    }
    for (const [j, n, c] of runs(colors)) {
      parts.push(`<rect x="${(j * colW).toFixed(2)}" y="${y}" width="${(n * colW).toFixed(2)}" height="${p.strip.height}" fill="${c}"/>`);
    }
    if (v.showAnchors) {
      const a = d.anchorRow(v.step, v.layer);
      for (let j = 0; j < d.N; j++) {
        if (a[j])
          parts.push(
            `<rect x="${(j * colW).toFixed(2)}" y="${y - 4}" width="${Math.max(2, colW).toFixed(2)}" height="4" fill="${COLORS.anchor}"/>`,
          );
      }
    }
    y += p.strip.height + 4;
    // Token labels when they fit; each is a <text> with escaped content and a <title> tooltip.
    if (d.N <= 96) {
      for (let j = 0; j < d.N; j++) {
        const cx = ((j + 0.5) * colW).toFixed(2);
        // the readable text (d.tokens), not the raw token, in the label and its tooltip alike
        const t = d.tokens[j] ?? "";
        parts.push(
          `<text transform="translate(${cx},${y + 4}) rotate(60)" font-size="${Math.min(10, colW * 0.9).toFixed(1)}"><title>${escapeXml(t)}</title>${escapeXml(tokenLabel(t, 14))}</text>`,
        );
      }
    }
    y += labelH;
    const map = dataUrl(p.images.map(v.step, v.layer, v.head, v.scale));
    if (map) {
      parts.push(
        `<image x="0" y="${y}" width="${p.mapSize}" height="${p.mapSize}" preserveAspectRatio="none" style="image-rendering:pixelated" href="${map}"/>`,
      );
    }
    parts.push(`<text x="0" y="${y + p.mapSize + 14}" font-size="11">${escapeXml(p.mapNote.textContent ?? "")}</text>`);
    parts.push("</g>");
    x += p.width + GAP;
  }
  parts.push("</svg>");
  return parts.join("\n");
}

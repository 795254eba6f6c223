/**
 * Floating-token types — the paper's RQ2 ("what do the floating tokens look like?"), which it answers
 * only by eye; Rulli et al. 2025 (Table 2) count sink tokens the same way (whitespace, mask, ".").
 *
 * Definition: each anchor found by the shared detector is classified from its token as structural —
 * `mask`, `special` (BOS/EOS/pad ids and <|…|> / <…> template tokens), `newline`, `whitespace`,
 * `punctuation` — or `lexical`; we report the share of each type per layer band.
 *
 * Upstream has no such analysis. Token strings may be raw vocabulary pieces (byte-level "Ġ"/"Ċ",
 * SentencePiece "▁", "<0x0A>") or decoded text; both are understood.
 */
import type { TokenTypesSpec } from "./figure-data.js";
import type { Trace } from "../trace/types.js";
import { SettingsError } from "../util/errors.js";
import { type AnchorOptions, passAnchors, resolveRule } from "./anchors.js";
import { type PassRef, partialWarnings, resolveLayers } from "./probes-access.js";
import { type ColumnTable, longTable, sampleLabel, type Rows } from "./tables.js";

export const TOKEN_TYPES = ["mask", "special", "newline", "whitespace", "punctuation", "lexical", "unknown"] as const;
export type TokenType = (typeof TOKEN_TYPES)[number];

/** The special ids of a model (what makes a token `special` or `mask` by id). */
export interface SpecialIds {
  maskTokenId?: number;
  bosTokenId?: number;
  eosTokenIds?: number[];
  padTokenId?: number;
}

/** Raw vocabulary piece → the text it stands for (byte-level BPE, SentencePiece, byte fallback). */
export function pieceText(piece: string): string {
  return piece
    .replace(/<0x([0-9A-Fa-f]{2})>/g, (_, h: string) => String.fromCharCode(parseInt(h, 16)))
    .replace(/[Ġ▁]/g, " ")
    .replace(/Ċ/g, "\n")
    .replace(/ĉ/g, "\t");
}

/**
 * Classify one token. `piece` undefined means the string is unknown (a canvas id that is neither the final
 * token nor the mask): such tokens are `unknown` unless their id is special.
 */
export function classifyToken(piece: string | undefined, id: number, ids: SpecialIds): TokenType {
  if (ids.maskTokenId !== undefined && id === ids.maskTokenId) return "mask";
  if (id === ids.bosTokenId || id === ids.padTokenId || (ids.eosTokenIds ?? []).includes(id)) return "special";
  if (piece === undefined) return "unknown";
  if (/^<\|[^|]*\|>$/.test(piece) || (/^<[^<>\s]+>$/.test(piece) && !/^<0x[0-9A-Fa-f]{2}>$/.test(piece))) return "special";
  const text = pieceText(piece);
  if (text.length === 0) return "special"; // an empty piece can only be a control token
  if (/^\s+$/u.test(text)) return text.includes("\n") ? "newline" : "whitespace";
  if (/^\s*[\p{P}\p{S}]+\s*$/u.test(text)) return "punctuation";
  return "lexical";
}

/** Structural = anything but lexical (and unknown). */
export function isStructural(t: TokenType): boolean {
  return t !== "lexical" && t !== "unknown";
}

/** Band of each layer: `n` equal bands over [0, L) (default 3, shallow/middle/deep), or explicit inclusive ranges. */
export function layerBands(
  numLayers: number,
  bands: number | [number, number][] = Math.min(3, numLayers),
): { name: string; layers: [number, number] }[] {
  if (Array.isArray(bands)) return bands.map(([a, b]) => ({ name: `layers ${a}–${b}`, layers: [a, b] }));
  if (!Number.isInteger(bands) || bands < 1 || bands > numLayers)
    throw new SettingsError("bad band count", { field: "bands", expected: `an integer in [1, ${numLayers}]`, found: String(bands) });
  return Array.from({ length: bands }, (_, b) => {
    const a = Math.ceil((b * numLayers) / bands);
    const e = Math.ceil(((b + 1) * numLayers) / bands) - 1;
    return { name: `layers ${a}–${e}`, layers: [a, e] as [number, number] };
  });
}

export interface TokenTypeOptions extends AnchorOptions {
  /** "final" (default), "steps" (every denoising step) or one step index. */
  pass?: "final" | "steps" | number;
  /** Layer bands: a count of equal bands (default 3) or inclusive [first, last] ranges. */
  bands?: number | [number, number][];
  layers?: number[] | "all";
  models?: string[];
  samples?: string[];
}

export interface TokenTypeResult {
  /** One row per anchor: model, sample, step (−1 = final pass), layer, band, position, token, type, structural. */
  table: Rows<{
    model: string;
    sample: string;
    step: number;
    layer: number;
    band: string;
    position: number;
    token: string;
    type: string;
    structural: boolean;
  }>;
  /** One row per (model, band, type): count, share. */
  shares: ColumnTable;
  spec: TokenTypesSpec;
}

/**
 * Classify the anchors of each layer and report type shares per layer band.
 * @example
 * tokenTypes(traces, { rule: "top-k", topK: 3, pass: "steps" }).shares.print();
 */
export function tokenTypes(traces: Trace | Trace[], opts: TokenTypeOptions = {}): TokenTypeResult {
  const list = Array.isArray(traces) ? traces : [traces];
  const rows = {
    model: [] as string[],
    sample: [] as string[],
    step: [] as number[],
    layer: [] as number[],
    band: [] as string[],
    position: [] as number[],
    token: [] as string[],
    type: [] as string[],
    structural: [] as boolean[],
  };
  const bandsOf = new Map<string, { name: string; layers: [number, number] }[]>();
  list.forEach((trace, i) => {
    const model = opts.models?.[i] ?? trace.model.name;
    const sample = sampleLabel(trace.settings, i, opts.samples);
    const bands = layerBands(trace.model.numLayers, opts.bands);
    bandsOf.set(model, bands);
    const rule = resolveRule(opts, "absorption", trace.model.causal);
    const passes: PassRef[] = opts.pass === "steps" ? trace.steps.map((_, s) => s) : ([opts.pass ?? "final"] as PassRef[]);
    for (const pass of passes) {
      const seq = pass === "final" ? trace.final.sequence : trace.steps[pass].canvas;
      for (const layer of resolveLayers(trace, pass, "received", opts.layers, model)) {
        const band = bands.find((b) => b.layers[0] <= layer && layer <= b.layers[1]);
        for (const j of passAnchors(trace, pass, layer, rule, model).anchors) {
          const id = seq[j];
          const known = id === trace.final.sequence[j] ? trace.tokens[j] : undefined;
          const type = classifyToken(known, id, trace.model);
          rows.model.push(model);
          rows.sample.push(sample);
          rows.step.push(pass === "final" ? -1 : trace.steps[pass].step);
          rows.layer.push(layer);
          rows.band.push(band?.name ?? "none");
          rows.position.push(j);
          rows.token.push(known ?? (type === "mask" ? "<mask>" : `#${id}`));
          rows.type.push(type);
          rows.structural.push(isStructural(type));
        }
      }
    }
  });
  const table = longTable({
    ...rows,
    step: Int32Array.from(rows.step),
    layer: Int32Array.from(rows.layer),
    position: Int32Array.from(rows.position),
  });
  const sh = { model: [] as string[], band: [] as string[], type: [] as string[], count: [] as number[], share: [] as number[] };
  const specBands: TokenTypesSpec["bands"] = [];
  const used = TOKEN_TYPES.filter((t) => t !== "unknown" || rows.type.includes("unknown"));
  const firstModel = list.length ? (opts.models?.[0] ?? list[0].model.name) : "";
  for (const [model, bands] of bandsOf) {
    for (const b of bands) {
      const idx = rows.model.flatMap((m, r) => (m === model && rows.band[r] === b.name ? [r] : []));
      const shares = used.map((t) => {
        const count = idx.filter((r) => rows.type[r] === t).length;
        sh.model.push(model);
        sh.band.push(b.name);
        sh.type.push(t);
        sh.count.push(count);
        sh.share.push(idx.length ? count / idx.length : NaN);
        return idx.length ? count / idx.length : 0;
      });
      if (model === firstModel) specBands.push({ band: b.name, layers: b.layers, count: idx.length, shares });
    }
  }
  const shares = longTable({ ...sh, count: Int32Array.from(sh.count), share: Float64Array.from(sh.share) });
  const spec: TokenTypesSpec = {
    kind: "token-types",
    warnings: partialWarnings(list),
    model: firstModel,
    types: [...used],
    bands: specBands,
  };
  return { table, shares, spec };
}

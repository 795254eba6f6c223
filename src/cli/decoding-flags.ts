/**
 * The decoding flags `generate` and `eval` share (`--sampler`, `--alg`, `--gen-length`, `--steps`,
 * `--block-length`, `--temperature`): one spelling, one help text and one list of unmasking orders
 * (from the samplers' own table), so the two commands cannot drift apart. Only their defaults differ —
 * `generate` starts from the family's sampler, `eval` from the checkpoint's preset — and each command
 * parses the values into its run settings itself, because `eval` overlays them on a preset.
 */
import { ALGS, SAMPLERS } from "../samplers/config.js";
import type { FlagRow } from "./args.js";

export interface DecodingDefaults {
  /** Whose settings apply when a flag is absent, in words: "the family's", "the preset's". */
  of: string;
  /** `--gen-length`'s default, shown in the help (absent: `of`'s). */
  genLength?: string;
}

/** The rows of the shared decoding flags, in help order. */
export function decodingRows(d: DecodingDefaults): FlagRow[] {
  // Without a --gen-length default, steps and block length fall back to the same settings (eval:
  // the preset's), and to gen-length once it is given.
  const followsGen = d.genLength !== undefined ? "gen-length" : `${d.of}; gen-length when --gen-length is given`;
  return [
    {
      name: "sampler",
      type: "string",
      value: "<s>",
      help: [
        `${SAMPLERS.join(" | ")} (default: ${d.of}); the engine aligns logits to positions,`,
        "so a Dream-style model also runs under llada",
      ],
    },
    {
      name: "alg",
      type: "string",
      value: "<a>",
      help: ["the unmasking order (default: the sampler's):", ...SAMPLERS.map((k) => `${k}: ${ALGS[k].join(" | ")}`)],
    },
    d.genLength !== undefined
      ? { name: "gen-length", type: "string", value: "<n>", help: "new tokens", default: d.genLength }
      : { name: "gen-length", type: "string", value: "<n>", help: `new tokens (default: ${d.of})` },
    { name: "steps", type: "string", value: "<n>", help: `denoising steps (default: ${followsGen})` },
    {
      name: "block-length",
      type: "string",
      value: "<n>",
      help: ["LLaDA block length: gen-length / block-length blocks, left to right", `(default: ${followsGen})`],
    },
    { name: "temperature", type: "string", value: "<x>", help: "τ (LLaDA: Gumbel temperature; Dream / ARM: logits are divided by τ)" },
  ];
}

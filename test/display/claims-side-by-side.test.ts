/**
 * Notebook 10's "committed large runs" section: the notebook's own verdicts beside a committed run's,
 * one row per claim with the n each verdict rests on, and each findings file named with its provenance.
 * Hand-made findings whose verdicts differ between the two sources; the expected text is worked out by
 * hand from the rules in docs/claims.md (threshold 50 % for the sink, ARM > MDM for absorption).
 */
import { describe, expect, it } from "vitest";
import { findingsFileLine, judgeClaims, collectFindings, verdictsSideBySide } from "../../src/display/claims.js";
import { findings, type Finding } from "../../src/display/findings.js";

const SINK = "top-1 key at position 0, % of (step, layer) cells";
const ABS = "absorption, % (rule upstream, mean over layers)";
const f = (
  claim: Finding["claim"],
  model: string,
  family: string,
  tier: string,
  quantity: string,
  value: number,
  ci95: [number, number],
  n: number,
): Finding => ({
  claim,
  model,
  family,
  tier,
  quantity,
  value,
  ci95,
  n,
});

/** The notebook's small run: an executed notebook whose findings output holds one ARM's sink share at n = 2. */
const notebook = {
  file: "02-absorption.ipynb",
  json: {
    cells: [
      {
        cell_type: "code",
        source: "",
        outputs: [
          {
            output_type: "display_data",
            data: findings("02-absorption", [f("sink-fixed-arm", "tiny-llama", "llama", "tiny", SINK, 60, [30, 90], 2)]).toMimeBundle(),
            metadata: {},
          },
        ],
      },
    ],
  },
};
/** The committed run: a findings file (as `floatscope merge --findings` writes it) at n = 100, two tiers. */
const committedJson = {
  notebook: "grid claims",
  findings: [
    f("sink-fixed-arm", "tiny-llama", "llama", "tiny", SINK, 75, [70, 80], 100),
    f("absorption-arm-vs-mdm", "smollm2-135m-causal-world", "llama", "real-base", ABS, 39.5, [35, 44], 100),
    f("absorption-arm-vs-mdm", "smollm2-135m-dream-world", "dream", "real-base", ABS, 6.4, [5, 8], 100),
  ],
  provenance: { grid: "claims", fingerprint: "sha256:1700667b3e667742b02136f9c65459ce", floatscope: "0.1.0" },
  report: {},
};

describe("verdictsSideBySide", () => {
  it("puts the small run's verdict beside the committed run's, per claim, with n (and the n an inconclusive one needs)", () => {
    const ours = judgeClaims(collectFindings([notebook]));
    const committed = judgeClaims(collectFindings([{ file: "claims.findings.json", json: committedJson }]));
    const table = verdictsSideBySide(ours, committed, ["this notebook (small n)", "committed run"]);
    // Sink, ours: 60 [30, 90] vs the bound 50 overlaps → inconclusive; n* = ⌊(30·√2 / 10)²⌋ + 1 = 19.
    // Sink, committed: 75 [70, 80] > 50 → reproduced. Absorption, real-base: [35, 44] above [5, 8] → reproduced.
    // A tiny tier with only an ARM has no MDM; real-base has both, so its other claims lack the number.
    const none = "tiny: not measured; real-base: not measured";
    expect(table).toBe(
      [
        "| claim | this notebook (small n) | committed run |",
        "|---|---|---|",
        "| ARMs keep one fixed attention sink (the first token) across layers | tiny: inconclusive at this n (n = 2; needs n = 19) | tiny: reproduced (n = 100); real-base: not measured |",
        `| MDMs' anchors float across denoising steps and layers | tiny: not measured | ${none} |`,
        "| ARMs absorb more attention into their sink than MDMs into their anchors | tiny: not measured | tiny: not measured; real-base: reproduced (n = 100) |",
        `| Shallow layers anchor structural tokens, deep layers content tokens | tiny: not measured | ${none} |`,
        `| Floating keys win by direction (cos θ) more than by norm | tiny: not measured | ${none} |`,
        `| Retrieval heads sit in deep layers | tiny: not measured | ${none} |`,
        `| MDMs gain more from retrieved passages than ARMs | tiny: not measured | ${none} |`,
        `| MDMs degrade less as distractors are added | tiny: not measured | ${none} |`,
        `| MDMs depend less on the gold passage's position | tiny: not measured | ${none} |`,
      ].join("\n"),
    );
  });

  it("escapes the headers and tier names (user text) so they cannot break the table", () => {
    const odd = { ...committedJson, findings: [{ ...committedJson.findings[0], tier: "a|b" }] };
    const table = verdictsSideBySide([], judgeClaims(collectFindings([{ file: "x.findings.json", json: odd }])), [
      "mine|",
      "<b>theirs</b>",
    ]);
    expect(table.split("\n")[0]).toBe("| claim | mine\\| | &lt;b&gt;theirs&lt;/b&gt; |");
    expect(table.split("\n")[2]).toBe(
      "| ARMs keep one fixed attention sink (the first token) across layers | — | a\\|b: reproduced (n = 100) |",
    );
  });
});

describe("findingsFileLine", () => {
  it("names a grid's findings file with its fingerprint, the n of its findings and the commit that added it", () => {
    expect(findingsFileLine("claims.findings.json", committedJson, "91ffb05 on 2026-12-07")).toBe(
      "- `claims.findings.json`: 3 findings, n = 100; grid `claims` (fingerprint `sha256:1700667b3e66`…), floatscope 0.1.0; committed in 91ffb05 on 2026-12-07",
    );
  });

  it("names a measurement script's file with its commit, date and wall time; says when git has no commit of it", () => {
    const json = {
      notebook: "frontier",
      findings: [
        f("sink-fixed-arm", "tiny-llama", "llama", "tiny", SINK, 75, [70, 80], 100),
        f("sink-fixed-arm", "tiny-qwen", "qwen2", "tiny", SINK, 71, [60, 80], 300),
      ],
      provenance: { commit: "0123456789abcdef0123", dirty: true, date: "2026-12-07T03:04:05.000Z", wallSeconds: 5400 },
    };
    expect(findingsFileLine("frontier.findings.json", json, null)).toBe(
      "- `frontier.findings.json`: 2 findings, n = 100–300; run at commit `0123456789ab` (with uncommitted changes), on 2026-12-07, wall time 1.50 h; not committed",
    );
    expect(findingsFileLine("f.findings.json", { ...json, provenance: { ...json.provenance, dirty: false, wallSeconds: 90 } })).toBe(
      "- `f.findings.json`: 2 findings, n = 100–300; run at commit `0123456789ab`, on 2026-12-07, wall time 1.50 min",
    );
    expect(findingsFileLine("g.findings.json", { notebook: "g", findings: [] })).toBe(
      "- `g.findings.json`: 0 findings; no provenance recorded in the file",
    );
  });

  it("rejects a findings file whose findings are malformed, naming the file", () => {
    expect(() => findingsFileLine("bad.findings.json", { notebook: "x", findings: [{ claim: "sink-fixed-arm" }] })).toThrow(
      /bad\.findings\.json/,
    );
  });
});

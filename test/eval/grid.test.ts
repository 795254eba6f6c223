import { describe, expect, it } from "vitest";
import { settingLabel } from "../../src/qa/contexts.js";
import { expandGrid, expandSetting, parseShard, resolveGrid, shardUnits } from "../../src/grid/grid.js";
import { GridError, SettingsError } from "../../src/util/errors.js";

const base = { models: ["/m/tiny-llada", "/m/tiny-qwen"], datasets: [{ name: "d", path: "/d.jsonl" }] };

describe("grid settings", () => {
  it("first / middle / last / every are positions relative to k, deduplicated", () => {
    const labels = (s: Parameters<typeof expandSetting>[0]) => expandSetting(s).map(settingLabel);
    expect(labels({ kind: "distractors", k: [0, 4, 5], goldPosition: ["first", "middle", "last"] })).toEqual([
      "gold@0/k0",
      "gold@0/k0",
      "gold@0/k0",
      "gold@0/k4",
      "gold@2/k4",
      "gold@4/k4",
      "gold@0/k5",
      "gold@2/k5",
      "gold@5/k5",
    ]);
    expect(labels({ kind: "distractors", k: 3, goldPosition: "every", source: "pool" })).toEqual([
      "gold@0/k3/pool",
      "gold@1/k3/pool",
      "gold@2/k3/pool",
      "gold@3/k3/pool",
    ]);
    expect(labels({ kind: "distractors", k: { from: 0, to: 10 } })).toHaveLength(11);
    // resolveGrid keeps each label once, in first-seen order.
    const g = resolveGrid(
      {
        ...base,
        settings: [{ kind: "oracle" }, { kind: "distractors", k: [0, 2], goldPosition: ["first", "middle", "last"] }, { kind: "oracle" }],
      },
      "/g/grid.json",
    );
    expect(g.settings.map(settingLabel)).toEqual(["oracle", "gold@0/k0", "gold@0/k2", "gold@1/k2", "gold@2/k2"]);
  });
  it("bad specs name the field", () => {
    const bad = (spec: unknown, field: RegExp) => {
      try {
        resolveGrid(spec, "/g/grid.json");
      } catch (e) {
        expect(e).toBeInstanceOf(GridError);
        expect((e as GridError).field).toMatch(field);
        return;
      }
      throw new Error("accepted a bad grid");
    };
    bad({ ...base, settings: [{ kind: "distractors", k: 3, goldPosition: 5 }] }, /settings\[0\]\.goldPosition/);
    bad({ ...base, settings: [{ kind: "distractors", k: -1 }] }, /settings\[0\]\.k/);
    bad({ ...base, settings: [{ kind: "sideways" }] }, /settings\[0\]\.kind/);
    bad({ ...base, settings: [] }, /^settings$/);
    bad({ ...base, models: ["/a/tiny", "/b/tiny"], settings: [{ kind: "oracle" }] }, /models\[1\]/);
    bad({ ...base, settings: [{ kind: "oracle" }], seeds: [1, 1] }, /seeds/);
    bad({ ...base, settings: [{ kind: "oracle" }], shards: 3 }, /shards/);
    bad({ ...base, datasets: ["${FLOATSCOPE_SURELY_UNSET_VAR}"], settings: [{ kind: "oracle" }] }, /datasets\[0\]/);
  });
});

describe("work units and shards", () => {
  const grid = resolveGrid(
    {
      ...base,
      settings: [{ kind: "closed-book" }, { kind: "distractors", k: 2, goldPosition: ["first", "last"] }],
      seeds: [0, 7],
      chunk: 4,
    },
    "/g/grid.json",
  );
  const units = expandGrid(grid, { d: 10 });
  it("cover every (model, seed, setting, question) once, with ids that spell out what they are", () => {
    // 2 models × 2 seeds × 3 settings × ceil(10 / 4) slices
    expect(units).toHaveLength(2 * 2 * 3 * 3);
    expect(new Set(units.map((u) => u.id)).size).toBe(units.length);
    expect(units[0].id).toBe("tiny-llada|d|closed-book|s0|0-4");
    expect(units[2].id).toBe("tiny-llada|d|closed-book|s0|8-10");
    const last = units[units.length - 1];
    expect(last.id).toBe("tiny-qwen|d|gold@2/k2|s7|8-10");
    expect(last.evalSetting).toEqual({ kind: "distractors", k: 2, goldPosition: 2, source: "record", seed: 7 });
    // The same grid gives the same ids (no randomness, no machine state).
    expect(
      expandGrid(
        resolveGrid(
          {
            ...base,
            settings: [{ kind: "closed-book" }, { kind: "distractors", k: 2, goldPosition: ["first", "last"] }],
            seeds: [0, 7],
            chunk: 4,
          },
          "/elsewhere/grid.json",
        ),
        { d: 10 },
      ).map((u) => u.id),
    ).toEqual(units.map((u) => u.id));
  });
  it("shards partition the units and differ in size by at most one", () => {
    for (const n of [1, 2, 5, 36, 50]) {
      const parts = Array.from({ length: n }, (_, i) => shardUnits(units, i + 1, n));
      const ids = parts
        .flat()
        .map((u) => u.id)
        .sort();
      expect(ids).toEqual(units.map((u) => u.id).sort());
      const sizes = parts.map((p) => p.length);
      expect(Math.max(...sizes) - Math.min(...sizes)).toBeLessThanOrEqual(1);
    }
    // Round robin: shard 1 of 4 mixes models.
    expect(new Set(shardUnits(units, 1, 4).map((u) => u.model)).size).toBe(2);
  });
  it("parses i/n and refuses what is not a shard", () => {
    expect(parseShard("3/8")).toEqual({ index: 3, count: 8 });
    for (const bad of ["0/4", "5/4", "1", "a/b", "1/0", "-1/4"]) expect(() => parseShard(bad)).toThrow(SettingsError);
  });
});

describe("interventions in a grid", () => {
  it("cross every unit with each policy; plain units keep their ids, the others say the policy", () => {
    const grid = resolveGrid(
      { ...base, settings: [{ kind: "oracle" }], interventions: ["none", "first", "random:2"], chunk: 10 },
      "/g/grid.json",
    );
    expect(grid.interventions).toEqual(["none", "first", "random:2"]);
    const ids = expandGrid(grid, { d: 10 }).map((u) => u.id);
    expect(ids.slice(0, 3)).toEqual([
      "tiny-llada|d|oracle|s0|0-10",
      "tiny-llada|d|oracle|iv=first|s0|0-10",
      "tiny-llada|d|oracle|iv=random:2|s0|0-10",
    ]);
    // Without the field the grid is exactly the plain grid.
    expect(
      expandGrid(resolveGrid({ ...base, settings: [{ kind: "oracle" }], chunk: 10 }, "/g/grid.json"), { d: 10 }).map((u) => u.id),
    ).toEqual(ids.filter((id) => !id.includes("|iv=")));
  });
  it("refuses unknown and repeated policies, naming the entry", () => {
    expect(() => resolveGrid({ ...base, settings: [{ kind: "oracle" }], interventions: ["none", "mute"] }, "/g/grid.json")).toThrow(
      /interventions\[1\]/,
    );
    expect(() => resolveGrid({ ...base, settings: [{ kind: "oracle" }], interventions: ["first", "first"] }, "/g/grid.json")).toThrow(
      /distinct policies/,
    );
  });
});

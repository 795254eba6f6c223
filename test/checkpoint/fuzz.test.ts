/**
 * Seeded fuzzing of the checkpoint reader: hundreds of deterministic mutations of safetensors
 * headers, config.json and the shard index. Every case must end in a typed FloatscopeError that
 * names the file and the field — no crash, no hang, no giant allocation.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openCheckpoint } from "../../src/checkpoint/checkpoint.js";
import { resolveModelSpec } from "../../src/graph/adapters/index.js";
import { FloatscopeError } from "../../src/util/errors.js";
import { rng, writeTinyCheckpoint } from "../support/family-checkpoints.js";

// ~1000 small files: tmpfs when the machine has one (creating/removing them on a busy disk is slow).
const root = fs.mkdtempSync(path.join(fs.existsSync("/dev/shm") ? "/dev/shm" : os.tmpdir(), "fs-fuzz-"));
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

const rand = rng(20261130);
/** Placeholder that rewriteHeader turns into 5000 nested arrays. */
const DEEP = "\u0000deep\u0000";
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)];
const int = (n: number) => Math.floor(rand() * n);

/** Pristine checkpoints to copy from: single-file llama, sharded llada, single-file qwen2. */
const bases = {
  llama: path.join(root, "base-llama"),
  llada: path.join(root, "base-llada"),
  qwen2: path.join(root, "base-qwen2"),
};
writeTinyCheckpoint(bases.llama, "llama", { layers: 2 });
writeTinyCheckpoint(bases.llada, "llada", { layers: 2, shards: 3, dtype: "BF16", vocab: 16, embeddingSize: 20 });
/** One sparse 17 MiB file shared by the "config too large" cases (symlinked in; never read). */
const bigFile = path.join(root, "big-config.json");
fs.writeFileSync(bigFile, "");
fs.truncateSync(bigFile, 17 * 1024 * 1024);
writeTinyCheckpoint(bases.qwen2, "qwen2", { layers: 1, dtype: "F16" });
for (const d of Object.values(bases)) {
  // The fuzz flips bytes in headers; metadata values ("pt") could be flipped harmlessly, so drop them.
  for (const f of fs.readdirSync(d).filter((f) => f.endsWith(".safetensors")))
    rewriteHeader(path.join(d, f), (h) => {
      delete h.__metadata__;
    });
}

let caseNo = 0;
function copyBase(base: string): string {
  const dir = path.join(root, `case-${caseNo++}`);
  fs.mkdirSync(dir);
  for (const f of fs.readdirSync(base)) fs.copyFileSync(path.join(base, f), path.join(dir, f));
  return dir;
}

function splitFile(file: string): { header: Buffer; data: Buffer } {
  const buf = fs.readFileSync(file);
  const n = Number(buf.readBigUInt64LE(0));
  return { header: buf.subarray(8, 8 + n), data: buf.subarray(8 + n) };
}

function writeFile(file: string, header: Buffer, data: Buffer, lengthField?: bigint) {
  const len = Buffer.alloc(8);
  len.writeBigUInt64LE(lengthField ?? BigInt(header.length));
  fs.writeFileSync(file, Buffer.concat([len, header, data]));
}

function rewriteHeader(file: string, edit: (h: Record<string, any>) => void) {
  const { header, data } = splitFile(file);
  const h = JSON.parse(header.toString("utf8"));
  edit(h);
  // A value equal to DEEP becomes 5000 nested arrays (JSON.stringify itself cannot nest that deep).
  const text = JSON.stringify(h).replace(JSON.stringify(DEEP), deep(5000));
  writeFile(file, Buffer.from(text), data);
}

function weightFiles(dir: string): string[] {
  return fs
    .readdirSync(dir)
    .filter((f) => f.endsWith(".safetensors"))
    .map((f) => path.join(dir, f));
}

function deep(depth: number): string {
  return "[".repeat(depth) + "]".repeat(depth);
}

type Mutation = (dir: string) => string;

/** Safetensors mutations; each returns a label. */
const stMutations: Mutation[] = [
  (dir) => {
    const f = pick(weightFiles(dir));
    const size = fs.statSync(f).size;
    fs.truncateSync(f, int(size)); // any strict prefix
    return "truncated file";
  },
  (dir) => {
    const f = pick(weightFiles(dir));
    const { header, data } = splitFile(f);
    const size = BigInt(8 + header.length + data.length);
    const len = pick([
      0n,
      2n ** 64n - 1n,
      2n ** 40n,
      size,
      size - 7n,
      BigInt(header.length) + BigInt(data.length) + 1n,
      BigInt(200 * 1024 * 1024),
    ]);
    writeFile(f, header, data, len);
    return `header length ${len}`;
  },
  (dir) => {
    const f = pick(weightFiles(dir));
    rewriteHeader(f, (h) => {
      const name = pick(Object.keys(h));
      h[name].dtype = pick(["F8", "f32", "", 5, null, "constructor", "toString", "F32 ", ["F32"], "I4"]);
    });
    return "wrong dtype string";
  },
  (dir) => {
    const f = pick(weightFiles(dir));
    rewriteHeader(f, (h) => {
      const name = pick(Object.keys(h));
      h[name].shape = pick([
        [-1, 8],
        [2.5],
        ["8"],
        [1e9, 1e9, 1e9],
        [2 ** 53, 2],
        null,
        7,
        [[8]],
        [h[name].shape[0] + 1],
        [...h[name].shape, 2],
      ]);
    });
    return "shape/bytes mismatch";
  },
  (dir) => {
    const f = pick(weightFiles(dir));
    rewriteHeader(f, (h) => {
      const names = Object.keys(h);
      const name = pick(names);
      const [b, e] = h[name].data_offsets;
      const other = h[pick(names.filter((n) => n !== name))] ?? h[name];
      h[name].data_offsets = pick([
        [e, b === e ? e - 1 : b],
        [b + 1, e + 1],
        [b, e + 4],
        [b, 1e15],
        [-4, e - b - 4],
        [b, e, 0],
        "0,4",
        [b + 0.5, e + 0.5],
        [other.data_offsets[0] + 2, other.data_offsets[0] + 2 + (e - b)],
        [1e300, 1e300],
        null,
      ]);
    });
    return "lying offsets";
  },
  (dir) => {
    const f = pick(weightFiles(dir));
    rewriteHeader(f, (h) => {
      const names = Object.keys(h);
      const a = pick(names);
      const b = pick(names.filter((n) => n !== a));
      // Same length as b, start inside a's range: overlap with a (or lie about bytes).
      h[b].data_offsets = [h[a].data_offsets[0], h[a].data_offsets[0] + (h[b].data_offsets[1] - h[b].data_offsets[0])];
    });
    return "overlapping ranges";
  },
  (dir) => {
    const f = pick(weightFiles(dir));
    rewriteHeader(f, (h) => {
      const name = pick(Object.keys(h));
      h[name] = pick([null, [], "x", 3, {}, { dtype: "F32" }, DEEP]);
    });
    return "entry not an object";
  },
  (dir) => {
    const f = pick(weightFiles(dir));
    const { data } = splitFile(f);
    const header = pick(["[]", "null", "7", '"s"', "{", deep(20000), '{"__metadata__": 5}', '{"__metadata__": {"a": 1}}', "\u0000\u0001"]);
    writeFile(f, Buffer.from(header), data);
    return "header not an object";
  },
  (dir) => {
    const f = pick(weightFiles(dir));
    const { header, data } = splitFile(f);
    const text = header.toString("latin1");
    // Flip one non-space header byte to a different printable non-space character.
    const positions = [...text].map((c, i) => (c === " " ? -1 : i)).filter((i) => i >= 0);
    const i = pick(positions);
    let c = text[i];
    while (c === text[i]) c = String.fromCharCode(33 + int(94));
    const mutated = Buffer.from(text.slice(0, i) + c + text.slice(i + 1), "latin1");
    writeFile(f, mutated, data);
    return `header byte ${i} '${text[i]}'→'${c}'`;
  },
];

const REQUIRED: Record<string, string[]> = {
  llama: ["hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size", "vocab_size", "max_position_embeddings"],
  llada: ["d_model", "n_layers", "n_heads", "mlp_hidden_size", "embedding_size", "max_sequence_length"],
  qwen2: ["hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size", "vocab_size", "max_position_embeddings"],
};

function configMutations(family: keyof typeof REQUIRED): Mutation[] {
  const cfgFile = (dir: string) => path.join(dir, "config.json");
  const edit = (dir: string, f: (c: Record<string, unknown>) => void) => {
    const c = JSON.parse(fs.readFileSync(cfgFile(dir), "utf8"));
    f(c);
    fs.writeFileSync(cfgFile(dir), JSON.stringify(c));
  };
  return [
    (dir) => {
      fs.writeFileSync(
        cfgFile(dir),
        pick(["[]", "null", "42", '"config"', "true", "", "{", '{"a":}', deep(100000), `{"a":${deep(100000)}`]),
      );
      return "config not an object / not JSON";
    },
    (dir) => {
      edit(dir, (c) => {
        c.architectures = pick([["GPT2LMHeadModel"], ["BertModel"]]);
        c.model_type = pick(["gpt2", "bert", undefined]);
      });
      return "unknown architecture";
    },
    (dir) => {
      const key = pick(REQUIRED[family]);
      edit(dir, (c) => {
        delete c[key];
      });
      return `missing ${key}`;
    },
    (dir) => {
      const key = pick(REQUIRED[family]);
      const v = pick([1e9, -5, 0, 2.5, "8", null, 1e308, true, [], {}, 2 ** 60]);
      edit(dir, (c) => {
        c[key] = v;
      });
      return `absurd ${key}=${JSON.stringify(v)}`;
    },
    (dir) => {
      const bad: [string, unknown][] = [
        ["rms_norm_eps", -1],
        ["rope_theta", -3],
        ["rope_theta", "big"],
        ["eos_token_id", [1, -2]],
        ["bos_token_id", 1e12],
      ];
      if (family === "llada") bad.push(["mask_token_id", 2.5], ["mask_token_id", -1], ["block_type", "sequential"]);
      const [key, v] = pick(bad);
      edit(dir, (c) => {
        c[key] = v;
      });
      return `bad ${key}`;
    },
    (dir) => {
      fs.rmSync(cfgFile(dir));
      fs.symlinkSync(bigFile, cfgFile(dir));
      return "config too large";
    },
  ];
}

const indexMutations: Mutation[] = [
  (dir) => {
    fs.rmSync(pick(weightFiles(dir)));
    return "missing shard";
  },
  (dir) => {
    const p = path.join(dir, "model.safetensors.index.json");
    const idx = JSON.parse(fs.readFileSync(p, "utf8"));
    const names = Object.keys(idx.weight_map);
    const name = pick(names);
    const m = int(7);
    if (m === 0) idx.weight_map[name] = "model-00009-of-00009.safetensors";
    if (m === 1) idx.weight_map[name] = pick(["../x.safetensors", "/etc/passwd", "", 5, null, "sub/dir.safetensors"]);
    if (m === 2) idx.weight_map = pick([[], null, "x", 5]);
    if (m === 3) idx.metadata = { total_size: pick([-1, 1e18, 2.5, "abc", [], {}]) };
    if (m === 4) idx.weight_map = {};
    if (m === 5) {
      const other = Object.values(idx.weight_map).find((s) => s !== idx.weight_map[name]);
      idx.weight_map[name] = other;
    }
    if (m === 6) idx.weight_map[`${name}.ghost`] = idx.weight_map[name];
    fs.writeFileSync(p, JSON.stringify(idx));
    return `index mutation ${m}`;
  },
  (dir) => {
    fs.writeFileSync(path.join(dir, "model.safetensors.index.json"), pick(["[]", "{", "null", deep(50000)]));
    return "index not an object";
  },
  (dir) => {
    // A tensor's header entry removed from its shard (the index still lists it).
    const f = pick(weightFiles(dir));
    rewriteHeader(f, (h) => {
      delete h[pick(Object.keys(h))];
    });
    return "tensor missing from shard";
  },
];

describe("checkpoint fuzz", () => {
  it("hundreds of seeded mutations each end in a typed error naming file and field", () => {
    const plan: [string, keyof typeof bases, Mutation][] = [];
    for (let i = 0; i < 160; i++) plan.push(["safetensors", pick(["llama", "llada", "qwen2"] as const), pick(stMutations)]);
    for (let i = 0; i < 120; i++) {
      const fam = pick(["llama", "llada", "qwen2"] as const);
      plan.push(["config", fam, pick(configMutations(fam))]);
    }
    for (let i = 0; i < 60; i++) plan.push(["index", "llada", pick(indexMutations)]);

    if (global.gc) global.gc();
    const rss0 = process.memoryUsage().rss;
    let peak = rss0;
    const cpu0 = process.cpuUsage();
    const failures: string[] = [];
    const seen = new Map<string, number>();
    for (const [kind, base, mutate] of plan) {
      const dir = copyBase(bases[base]);
      const label = `${kind}/${base}: ${mutate(dir)}`;
      try {
        const ck = openCheckpoint(dir);
        resolveModelSpec(ck);
        failures.push(`${label}: no error`);
      } catch (e) {
        if (!(e instanceof FloatscopeError)) {
          failures.push(`${label}: untyped ${(e as Error)?.constructor?.name}: ${(e as Error)?.message}`);
        } else if (!e.file || !e.field) {
          failures.push(`${label}: error without file/field: ${e.message}`);
        } else {
          seen.set(e.constructor.name, (seen.get(e.constructor.name) ?? 0) + 1);
        }
      }
      peak = Math.max(peak, process.memoryUsage().rss);
    }
    // CPU time, not wall time: the CI machine is shared, and a hang would show up as CPU too.
    const cpu = process.cpuUsage(cpu0);
    const ms = (cpu.user + cpu.system) / 1000;
    console.log(
      `fuzz: ${plan.length} cases, ${[...seen].map(([k, v]) => `${v} ${k}`).join(", ")}; CPU ${ms.toFixed(0)} ms; RSS growth ${((peak - rss0) / 1e6).toFixed(1)} MB`,
    );
    expect(failures, failures.slice(0, 10).join("\n")).toEqual([]);
    expect(plan.length).toBeGreaterThanOrEqual(300);
    expect(seen.get("CheckpointError")).toBeGreaterThan(250);
    expect(peak - rss0).toBeLessThan(200 * 1024 * 1024);
    expect(ms).toBeLessThan(10_000);
  });
});

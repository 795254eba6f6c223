/**
 * `openCheckpoint(dir)`: read and validate a Hugging Face checkpoint folder without loading any
 * tensor data.
 *
 * What is read: config.json (required), generation_config.json (optional), the weights —
 * `model.safetensors`, or `model.safetensors.index.json` plus its shards — and the tokenizer files
 * (tokenizer.json, tokenizer_config.json, chat_template.jinja / chat_template.json).
 *
 * Why every file is `realpath`ed: in the HF hub cache `snapshots/<rev>/x` is a symlink into
 * `blobs/<sha>`, and onnxruntime refuses external data that resolves outside the model folder
 * (docs/engine.md). `TensorInfo.file` is therefore always the real blob path.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { CheckpointError } from "../util/errors.js";
import { inspectPath, optionalFile, readFileBounded, requireDirectory, requireFile } from "../util/paths.js";
import { MAX_TOKENIZER_BYTES, describeValue, readJsonObject, type JsonObject } from "./config.js";
import { openGgufCheckpoint } from "./gguf/open.js";
import { readSafetensorsHeader, type SafetensorsHeader } from "./safetensors.js";
import type { Checkpoint, TensorInfo, TokenizerFiles } from "./types.js";

export const SINGLE_WEIGHTS_FILE = "model.safetensors";
export const INDEX_FILE = "model.safetensors.index.json";
/** More shards than this is not a checkpoint, it is a corrupt index. */
const MAX_SHARDS = 10_000;

/**
 * Open a checkpoint folder, or a `.gguf` file (gguf/open.ts: same shape, config and tokenizer from
 * its metadata). Throws `CheckpointError` naming the file and field on any problem.
 */
export function openCheckpoint(dir: string): Checkpoint {
  const abs = path.resolve(dir);
  if (abs.toLowerCase().endsWith(".gguf")) {
    requireFile(abs, {
      what: "GGUF file",
      error: CheckpointError,
      field: "(file)",
      hint: "give a .gguf file or a folder with config.json and *.safetensors",
    });
    return openGgufCheckpoint(abs);
  }
  // Kind, readability, loops and dangling links first: "has no config.json" must not be what a
  // symlink loop or an unreadable folder says.
  requireDirectory(abs, {
    what: "checkpoint folder",
    error: CheckpointError,
    field: "(folder)",
    hint: "give a folder with config.json and *.safetensors, or a .gguf file",
  });
  const configPath = path.join(abs, "config.json");
  if (inspectPath(configPath).kind === "missing") {
    throw new CheckpointError("Checkpoint has no config.json", {
      file: configPath,
      field: "(file)",
      expected: "config.json from the Hugging Face checkpoint",
    });
  }
  const config = readJsonObject(configPath);
  const genPath = path.join(abs, "generation_config.json");
  const generationConfig = checkedOptional(genPath, "generation_config.json") ? readJsonObject(genPath) : undefined;
  const tensors = readWeights(abs);
  const tokenizer = readTokenizerFiles(abs);
  return { dir: abs, format: "safetensors", config, generationConfig, tensors, tokenizer };
}

/** Same precedence as transformers' `from_pretrained`: model.safetensors first, then the index. */
function readWeights(dir: string): Map<string, TensorInfo> {
  const single = path.join(dir, SINGLE_WEIGHTS_FILE);
  if (checkedOptional(single, "weights file")) {
    const header = readSafetensorsHeader(single);
    return new Map(header.tensors.map((t) => [t.name, t]));
  }
  const indexPath = path.join(dir, INDEX_FILE);
  if (checkedOptional(indexPath, "shard index")) return readSharded(dir, indexPath);
  const hasBin = fs.readdirSync(dir).some((f) => f.endsWith(".bin") || f.endsWith(".pt"));
  throw new CheckpointError("Checkpoint has no safetensors weights", {
    file: dir,
    field: "weights",
    expected: `${SINGLE_WEIGHTS_FILE} or ${INDEX_FILE} with its shards`,
    found: hasBin ? "PyTorch .bin/.pt files only" : "no weight files",
    hint: hasBin ? "convert the checkpoint to safetensors (e.g. save_pretrained(..., safe_serialization=True))" : undefined,
  });
}

/**
 * Sharded weights: the index's `weight_map` {tensor: shard file}. Checked: every shard named
 * exists and is a plain file name inside the folder; each tensor really is in the shard the index
 * names; no tensor is in two shards; no shard holds a tensor the index does not list; and
 * `metadata.total_size`, when given, does not exceed the bytes the shards hold.
 */
function readSharded(dir: string, indexPath: string): Map<string, TensorInfo> {
  const index = readJsonObject(indexPath);
  const map = index.weight_map;
  if (map === null || typeof map !== "object" || Array.isArray(map)) {
    throw new CheckpointError("Shard index has no weight_map object", {
      file: indexPath,
      field: "weight_map",
      expected: "{tensor name: shard file name}",
      found: describeValue(map),
    });
  }
  const wanted = new Map<string, string>();
  const shardNames = new Set<string>();
  for (const [name, shard] of Object.entries(map as JsonObject)) {
    if (typeof shard !== "string" || shard === "" || shard !== path.basename(shard) || shard === "." || shard === "..") {
      throw new CheckpointError("Shard index entry is not a shard file name", {
        file: indexPath,
        field: `weight_map.${name}`,
        expected: "a file name in the checkpoint folder (no directories)",
        found: describeValue(shard),
      });
    }
    wanted.set(name, shard);
    shardNames.add(shard);
    if (shardNames.size > MAX_SHARDS) {
      throw new CheckpointError("Shard index names too many shards", {
        file: indexPath,
        field: "weight_map",
        expected: `at most ${MAX_SHARDS} shards`,
      });
    }
  }
  if (wanted.size === 0) {
    throw new CheckpointError("Shard index lists no tensors", { file: indexPath, field: "weight_map", expected: "at least one tensor" });
  }
  const headers = new Map<string, SafetensorsHeader>();
  for (const shard of shardNames) {
    const shardPath = path.join(dir, shard);
    if (!checkedOptional(shardPath, "weight shard")) {
      const example = [...wanted].find(([, s]) => s === shard)?.[0];
      throw new CheckpointError("Shard named in the index is missing", {
        file: indexPath,
        field: `weight_map.${example}`,
        expected: `an existing file ${shard}`,
        found: "no such file",
      });
    }
    headers.set(shard, readSafetensorsHeader(shardPath));
  }
  const tensors = new Map<string, TensorInfo>();
  const seenIn = new Map<string, string>();
  let dataBytes = 0;
  for (const [shard, header] of headers) {
    dataBytes += header.fileSize - header.dataStart;
    for (const t of header.tensors) {
      const other = seenIn.get(t.name);
      if (other !== undefined) {
        throw new CheckpointError("Tensor appears in two shards", {
          file: path.join(dir, shard),
          field: t.name,
          expected: "each tensor in exactly one shard",
          found: `also in ${other}`,
        });
      }
      seenIn.set(t.name, shard);
      const listed = wanted.get(t.name);
      if (listed === undefined) {
        throw new CheckpointError("Shard holds a tensor the index does not list", {
          file: indexPath,
          field: `weight_map.${t.name}`,
          expected: `an entry pointing at ${shard}`,
          found: "missing",
        });
      }
      if (listed !== shard) {
        throw new CheckpointError("Tensor is not in the shard the index names", {
          file: indexPath,
          field: `weight_map.${t.name}`,
          expected: shard,
          found: listed,
        });
      }
      tensors.set(t.name, t);
    }
  }
  for (const [name, shard] of wanted) {
    if (!tensors.has(name)) {
      throw new CheckpointError("Tensor listed in the index is not in its shard", {
        file: path.join(dir, shard),
        field: name,
        expected: `tensor ${name} in ${shard}`,
        found: "missing",
      });
    }
  }
  checkTotalSize(indexPath, index, dataBytes);
  return tensors;
}

function checkTotalSize(indexPath: string, index: JsonObject, dataBytes: number): void {
  const meta = index.metadata;
  if (meta === undefined || meta === null) return;
  if (typeof meta !== "object" || Array.isArray(meta)) {
    throw new CheckpointError("Shard index metadata is not an object", {
      file: indexPath,
      field: "metadata",
      expected: "an object",
      found: describeValue(meta),
    });
  }
  const total = (meta as JsonObject).total_size;
  if (total === undefined || total === null) return;
  // Some writers store it as a string; accept any non-negative integer-valued number.
  const n = typeof total === "string" && /^\d+$/.test(total) ? Number(total) : total;
  if (typeof n !== "number" || !Number.isSafeInteger(n) || n < 0) {
    throw new CheckpointError("Shard index total_size is not a byte count", {
      file: indexPath,
      field: "metadata.total_size",
      expected: "a non-negative integer",
      found: describeValue(total),
    });
  }
  // It may be smaller than the data (writers count tied tensors once), never larger.
  if (n > dataBytes) {
    throw new CheckpointError("Shard index total_size exceeds the data in the shards", {
      file: indexPath,
      field: "metadata.total_size",
      expected: `<= ${dataBytes} bytes (sum of shard data)`,
      found: String(n),
      hint: "a shard is truncated or missing; re-download the checkpoint",
    });
  }
}

/**
 * Tokenizer files. The chat template comes from `chat_template.jinja` when present (newer
 * transformers save it there), else `chat_template.json`, else `tokenizer_config.json`'s
 * `chat_template` (a string, or a list of {name, template} where "default" wins).
 */
export function readTokenizerFiles(dir: string): TokenizerFiles | undefined {
  const tokPath = path.join(dir, "tokenizer.json");
  if (!checkedOptional(tokPath, "tokenizer.json")) return undefined;
  const json = readJsonObject(tokPath, { maxBytes: MAX_TOKENIZER_BYTES });
  const cfgPath = path.join(dir, "tokenizer_config.json");
  const config = checkedOptional(cfgPath, "tokenizer_config.json") ? readJsonObject(cfgPath, { maxBytes: MAX_TOKENIZER_BYTES }) : {};
  let chatTemplate = templateFromConfig(config, cfgPath);
  const jsonTplPath = path.join(dir, "chat_template.json");
  if (checkedOptional(jsonTplPath, "chat_template.json")) {
    chatTemplate = templateFromConfig(readJsonObject(jsonTplPath), jsonTplPath) ?? chatTemplate;
  }
  const jinjaPath = path.join(dir, "chat_template.jinja");
  if (checkedOptional(jinjaPath, "chat_template.jinja")) {
    chatTemplate = readFileBounded(jinjaPath, { what: "chat_template.jinja", error: CheckpointError, maxBytes: 16 * 1024 * 1024 }).toString(
      "utf8",
    );
  }
  return { path: fs.realpathSync(tokPath), json, config, chatTemplate };
}

/**
 * Whether an optional checkpoint file is there. Nothing at all: false. A readable regular file
 * (through any symlinks): true. Anything else — a folder, a FIFO, a dangling link, a loop, an
 * unreadable file — is a CheckpointError naming the path and what it is.
 */
function checkedOptional(file: string, what: string): boolean {
  return optionalFile(file, { what, error: CheckpointError, field: "(file)" }) !== undefined;
}

function templateFromConfig(config: JsonObject, file: string): string | undefined {
  const t = config.chat_template;
  if (t === undefined || t === null) return undefined;
  if (typeof t === "string") return t;
  if (Array.isArray(t)) {
    const named = t.filter((x): x is { name: unknown; template: unknown } => x !== null && typeof x === "object");
    const pick = named.find((x) => x.name === "default") ?? named[0];
    if (pick && typeof pick.template === "string") return pick.template;
  }
  throw new CheckpointError("chat_template has an unknown form", {
    file,
    field: "chat_template",
    expected: "a Jinja string or a list of {name, template}",
    found: describeValue(t),
  });
}

/**
 * Path checks done before a file or folder is opened: what the path is (regular file, folder,
 * FIFO, socket, device, dangling link, symlink loop, missing), whether we may read it, and a
 * bounded read. Every problem is one typed error that names the path and says what it is, so a
 * FIFO named `model.safetensors` is refused instead of blocking `open()` forever, and a folder
 * given where a file is expected is a sentence instead of an EISDIR stack trace.
 *
 * Files are opened with O_NONBLOCK and checked with fstat on the open descriptor: opening a FIFO
 * for reading without it blocks until a writer appears, and checking the descriptor (not the
 * name) means the thing we checked is the thing we read.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { FloatscopeError, type FloatscopeErrorDetails } from "./errors.js";

/** A path that is the wrong kind of thing, unreadable, or missing (when no more specific error class is given). */
export class PathError extends FloatscopeError {}

export type PathKind =
  | "file"
  | "directory"
  | "missing"
  | "dangling-link"
  | "link-loop"
  | "fifo"
  | "socket"
  | "character-device"
  | "block-device"
  | "not-a-directory"
  | "name-too-long"
  | "unreadable"
  | "unwritable"
  | "other";

export interface PathInfo {
  /** Absolute path as given (not resolved). */
  path: string;
  kind: PathKind;
  /** Symlink-resolved path, when it resolves. */
  realPath?: string;
  /** Size in bytes, for regular files. */
  size?: number;
  /** The system error behind `unreadable` / `other` (e.g. "EACCES"). */
  code?: string;
}

/** Constructor of the error to throw (CheckpointError, DatasetError, UsageError…). */
export type ErrorClass = new (summary: string, details?: FloatscopeErrorDetails) => FloatscopeError;

const KIND_WORDS: Record<PathKind, string> = {
  file: "a regular file",
  directory: "a folder",
  missing: "nothing (no such file or folder)",
  "dangling-link": "a symbolic link whose target does not exist",
  "link-loop": "a symbolic link loop",
  fifo: "a FIFO (named pipe)",
  socket: "a socket",
  "character-device": "a character device",
  "block-device": "a block device",
  "not-a-directory": "a path through something that is not a folder",
  "name-too-long": "a name too long for the file system",
  unreadable: "a path we may not read (permission denied)",
  unwritable: "a path we may not write (permission denied)",
  other: "something that cannot be inspected",
};

/** "a FIFO (named pipe)", "a folder", … */
export function describeKind(kind: PathKind): string {
  return KIND_WORDS[kind];
}

function kindOfStats(st: fs.Stats): PathKind {
  if (st.isFile()) return "file";
  if (st.isDirectory()) return "directory";
  if (st.isFIFO()) return "fifo";
  if (st.isSocket()) return "socket";
  if (st.isCharacterDevice()) return "character-device";
  if (st.isBlockDevice()) return "block-device";
  return "other";
}

function codeOf(e: unknown): string | undefined {
  return (e as NodeJS.ErrnoException)?.code;
}

/** What is at `p` (following symlinks; a link that does not resolve says why). Never throws. */
export function inspectPath(p: string): PathInfo {
  const abs = path.resolve(p);
  let st: fs.Stats;
  try {
    st = fs.statSync(abs);
  } catch (e) {
    const code = codeOf(e);
    if (code === "ELOOP") return { path: abs, kind: "link-loop", code };
    if (code === "ENAMETOOLONG") return { path: abs, kind: "name-too-long", code };
    if (code === "ENOTDIR") return { path: abs, kind: "not-a-directory", code };
    if (code === "EACCES" || code === "EPERM") return { path: abs, kind: "unreadable", code };
    if (code === "ENOENT") {
      try {
        if (fs.lstatSync(abs).isSymbolicLink()) return { path: abs, kind: "dangling-link", code };
      } catch {
        /* nothing there at all */
      }
      return { path: abs, kind: "missing", code };
    }
    return { path: abs, kind: "other", code };
  }
  let realPath: string | undefined;
  try {
    realPath = fs.realpathSync(abs);
  } catch {
    realPath = undefined;
  }
  const kind = kindOfStats(st);
  return { path: abs, kind, realPath, ...(kind === "file" ? { size: st.size } : {}) };
}

export interface CheckOptions {
  /** What the path is for, in words ("checkpoint folder", "trace file", "--out file"). */
  what: string;
  /** Error class to throw (default PathError). */
  error?: ErrorClass;
  /** The field or flag the path came from (default "(path)"). */
  field?: string;
  hint?: string;
}

function fail(info: PathInfo, o: CheckOptions, expected: string, extra?: string): never {
  const E = o.error ?? PathError;
  const found = describeKind(info.kind) + (extra ? ` (${extra})` : "") + (info.kind === "other" && info.code ? ` (${info.code})` : "");
  throw new E(info.kind === "missing" ? `The ${o.what} was not found` : `The path given as ${o.what} is ${found}, not ${expected}`, {
    file: info.path,
    field: o.field ?? "(path)",
    expected,
    found,
    hint: o.hint,
  });
}

/** Whether the process may access `abs` with `mode` (fs.constants.R_OK, W_OK, X_OK). */
export function readable(abs: string, mode: number): boolean {
  try {
    fs.accessSync(abs, mode);
    return true;
  } catch {
    return false;
  }
}

/** A readable regular file (symlinks followed). Returns what was found. */
export function requireFile(p: string, o: CheckOptions): PathInfo {
  const info = inspectPath(p);
  if (info.kind !== "file") fail(info, o, "a regular file");
  if (!readable(info.path, fs.constants.R_OK)) fail({ ...info, kind: "unreadable" }, o, "a readable regular file");
  return info;
}

/** A folder we may list and enter. */
export function requireDirectory(p: string, o: CheckOptions): PathInfo {
  const info = inspectPath(p);
  if (info.kind !== "directory") fail(info, o, "a folder");
  if (!readable(info.path, fs.constants.R_OK | fs.constants.X_OK)) fail({ ...info, kind: "unreadable" }, o, "a readable folder");
  return info;
}

/**
 * An optional file: undefined when nothing is there at all; otherwise it must be a readable
 * regular file (a dangling link or a folder with that name is an error, not "absent").
 */
export function optionalFile(p: string, o: CheckOptions): PathInfo | undefined {
  const info = inspectPath(p);
  if (info.kind === "missing") return undefined;
  return requireFile(p, o);
}

/**
 * Open a regular file for reading without ever blocking (O_NONBLOCK: a FIFO opened for reading
 * would wait for a writer) and check the open descriptor. The caller closes `fd`.
 */
export function openRegularFile(p: string, o: CheckOptions): { fd: number; size: number; path: string } {
  const info = requireFile(p, o);
  let fd: number;
  try {
    fd = fs.openSync(info.path, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
  } catch (e) {
    fail({ ...info, kind: codeOf(e) === "EACCES" ? "unreadable" : "other", code: codeOf(e) }, o, "a readable regular file");
  }
  const st = fs.fstatSync(fd);
  if (!st.isFile()) {
    // replaced between the check and the open
    fs.closeSync(fd);
    fail({ ...info, kind: kindOfStats(st) }, o, "a regular file");
  }
  return { fd, size: st.size, path: info.path };
}

/**
 * Read a whole regular file, refusing it before reading when it is larger than `maxBytes`, and
 * reading at most `maxBytes` even if it grows meanwhile.
 */
export function readFileBounded(p: string, o: CheckOptions & { maxBytes: number }): Buffer {
  const { fd, size, path: abs } = openRegularFile(p, o);
  try {
    if (size > o.maxBytes) {
      const E = o.error ?? PathError;
      throw new E(`The ${o.what} is too large`, {
        file: abs,
        field: "(file size)",
        expected: `at most ${o.maxBytes} bytes`,
        found: `${size} bytes`,
        hint: o.hint,
      });
    }
    const buf = Buffer.alloc(size);
    let done = 0;
    while (done < size) {
      const got = fs.readSync(fd, buf, done, size - done, done);
      if (got <= 0) break;
      done += got;
    }
    return done === size ? buf : buf.subarray(0, done);
  } finally {
    fs.closeSync(fd);
  }
}

export interface OutputOptions extends CheckOptions {
  /** Create missing parent folders (the caller says so to the user via `onCreate`). */
  mkdir?: boolean;
  /** Called with each folder created. */
  onCreate?: (dir: string) => void;
  /** Hint when the folder is missing and `mkdir` is off (default "create it first"). */
  mkdirHint?: string;
}

/**
 * A path we are about to write a file to: either nothing is there or a regular file is (which
 * will be replaced); its folder must exist, or is created when `mkdir` is set. Returns the
 * absolute path. Nothing is written here except the folders `mkdir` asked for.
 */
export function checkOutputFile(p: string, o: OutputOptions): string {
  const info = inspectPath(p);
  if (info.kind !== "missing" && info.kind !== "file") fail(info, o, "a regular file or a new file name");
  if (info.kind === "file" && !readable(info.path, fs.constants.W_OK)) fail({ ...info, kind: "unwritable" }, o, "a writable file");
  ensureParent(info.path, o);
  return info.path;
}

/** A folder we are about to write into: created (and announced through `onCreate`) when missing; its parent must exist unless `mkdir`. */
export function checkOutputDirectory(p: string, o: OutputOptions): string {
  const info = inspectPath(p);
  if (info.kind === "directory") {
    if (!readable(info.path, fs.constants.W_OK | fs.constants.X_OK)) fail({ ...info, kind: "unwritable" }, o, "a writable folder");
    return info.path;
  }
  if (info.kind !== "missing") fail(info, o, "a folder or a new folder name");
  ensureParent(info.path, o);
  fs.mkdirSync(info.path);
  o.onCreate?.(info.path);
  return info.path;
}

function ensureParent(abs: string, o: OutputOptions): void {
  const dir = path.dirname(abs);
  const parent = inspectPath(dir);
  if (parent.kind === "directory") {
    if (!readable(dir, fs.constants.W_OK | fs.constants.X_OK))
      fail({ ...parent, kind: "unwritable" }, { ...o, what: `folder of the ${o.what}` }, "a writable folder");
    return;
  }
  if (parent.kind !== "missing" || !o.mkdir) {
    const E = o.error ?? PathError;
    throw new E(`The folder of the ${o.what} ${parent.kind === "missing" ? "does not exist" : "is not a folder"}`, {
      file: dir,
      field: o.field ?? "(path)",
      expected: "an existing folder",
      found: describeKind(parent.kind),
      hint: parent.kind === "missing" ? (o.mkdirHint ?? "create it first") : o.hint,
    });
  }
  // Create the missing chain from the top so each created folder can be announced.
  const missing: string[] = [];
  for (let d = dir; inspectPath(d).kind === "missing"; d = path.dirname(d)) missing.unshift(d);
  const top = inspectPath(path.dirname(missing[0]));
  if (top.kind !== "directory") fail(top, { ...o, what: `folder above the ${o.what}` }, "a folder");
  for (const d of missing) {
    fs.mkdirSync(d);
    o.onCreate?.(d);
  }
}

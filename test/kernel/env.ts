/**
 * Where the installed kernel lives, and whether setup has run (kernel and notebook tests skip,
 * with a message, only when it has not — `npm test` always runs setup first).
 */
import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
export const VENV = join(ROOT, ".venv");
export const VENV_PYTHON = join(VENV, "bin", "python");
export const INSTALLED_KERNEL_JSON = join(VENV, "share", "jupyter", "kernels", "floatscope", "kernel.json");
export const NOTEBOOKS = join(ROOT, "notebooks");

/** Null when the kernel tests can run; otherwise why not (for the skip message). */
export function setupMissing(): string | null {
  if (!existsSync(INSTALLED_KERNEL_JSON)) return `${INSTALLED_KERNEL_JSON} missing — run \`bash scripts/setup.sh\` (npm test does)`;
  if (!existsSync(join(ROOT, "src", "dist", "index.js"))) return "src/dist not built — run `bash scripts/setup.sh`";
  if (!existsSync(VENV_PYTHON)) return ".venv missing — run `bash scripts/setup.sh`";
  return null;
}

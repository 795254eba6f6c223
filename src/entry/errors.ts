/**
 * `floatscope/errors`: The typed errors every layer throws (FloatscopeError and its kinds).
 * A subpath of the package (src/package.json `exports`); the main entry (src/index.ts) re-exports the
 * names most notebooks need.
 */
export {
  FloatscopeError,
  CheckpointError,
  UnsupportedArchitectureError,
  BudgetError,
  ProbeMissingError,
  TraceFormatError,
  SettingsError,
  GridError,
  DisplayError,
  RuntimeError,
  keyword,
} from "../util/errors.js";
export type { FloatscopeErrorDetails } from "../util/errors.js";

/**
 * `floatscope/grid`: Evaluation grids: a grid file → shards run anywhere (Slurm) → one merged table.
 * A subpath of the package (src/package.json `exports`); the main entry (src/index.ts) re-exports the
 * names most notebooks need.
 */
export { resolveGrid, readGrid, expandGrid, expandSetting, parseShard, shardUnits } from "../grid/grid.js";
export type { GridSpec, GridSetting, GridModel, GridDataset, GridGoldPosition, ResolvedGrid, WorkUnit } from "../grid/grid.js";
export {
  prepareGrid,
  runShard,
  readShardFile,
  shardFileName,
  fingerprintModel,
  fingerprintFile,
  floatscopeVersion,
  SHARD_FORMAT,
} from "../grid/shard.js";
export type {
  PreparedGrid,
  ShardManifest,
  ManifestKey,
  ShardRow,
  ShardFile,
  RunShardOptions,
  ShardRunSummary,
  ShardProgress,
} from "../grid/shard.js";
export { mergeShards, collectShards, shardFilesIn, summarizeProgress, describeMissing, GRID_COLUMNS, GRID_TYPES } from "../grid/merge.js";
export type { GridRow, GridProgress, MergeResult, StatusSummary, UnitProgress } from "../grid/merge.js";
export { MEASURES, measureProbes, measureTrace, aggregateMeasures } from "../grid/measures.js";
export type {
  MeasureName,
  SampleMeasures,
  SinkMeasure,
  AbsorptionMeasure,
  DriftMeasure,
  MeasureAggregate,
  MeasuredModel,
  MeasuredSample,
} from "../grid/measures.js";

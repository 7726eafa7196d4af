/** The reference harness's public surface, for the catalogue, the matrix runner and the benchmark. */
export {
  COLUMN_NAMES,
  REFERENCE_COLUMN_CONFIGS,
  columnByName,
  installedVersion,
  readColumnVersions,
} from './columns.js';
export type { ColumnName, ColumnVersions, ReferenceColumn } from './columns.js';
export { startReferenceColumn, startReferenceColumns, stopReferenceColumns } from './wrangler.js';
export type { StartManyOptions, StartOptions, StartedReferenceColumn } from './wrangler.js';
export { describeRequest } from './describe-request.js';
export { runOnReference } from './client.js';
export type { ReferenceRequest } from './wire.js';

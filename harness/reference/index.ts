/** The reference harness's public surface, for the catalogue, the matrix runner and the benchmark. */

export { runOnReference } from './client.js';
export type { ColumnVersions } from './columns.js';
export {
  COLUMN_NAMES,
  columnByName,
  installedVersion,
  readColumnVersions,
} from './columns.js';
export { describeRequest } from './describe-request.js';
export type { ReferenceRequest } from './wire.js';
export { startReferenceColumn } from './wrangler.js';

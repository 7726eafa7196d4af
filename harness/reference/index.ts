/** The reference harness's public surface, for the catalogue, the matrix runner and the benchmark. */

export { runOnReference } from './client.js';
export type { ColumnName, ColumnVersions } from './columns.js';
export type { ReferenceRequest } from './wire.js';
export { startReferenceColumn } from './wrangler.js';

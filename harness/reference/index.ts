/** The reference harness's public surface, for the catalogue, the matrix runner and the benchmark. */

export type { ColumnVersions } from './columns.js';
export type { ReferenceRequest } from './wire.js';
export { runOnReference, startReferenceColumn } from './wrangler.js';

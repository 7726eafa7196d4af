/**
 * Reference columns as running services: `startReferenceColumn` bundles `worker.ts` against one
 * release under `wrangler dev`. Used by the engine's sides, the surface inventory and the benchmark.
 */

import type { Outcome } from '../case-model.js';
import {
  type ColumnName,
  type ColumnVersions,
  columnByName,
  type ReferenceColumn,
  readColumnVersions,
  WRANGLER_BIN,
} from './columns.js';
import { columnStopped } from './messages.js';
import { postReferenceRequest } from './transport.js';
import type { ReferenceRequest } from './wire.js';
import { startWranglerDev } from './wrangler-dev.js';

export interface StartedReferenceColumn {
  column: ReferenceColumn;
  /** Where the worker answers POSTs. */
  url: string;
  versions: ColumnVersions;
  /** One `execute` on this column. Rejects only on infrastructure failure (never for the case's own outcome). */
  run(request: ReferenceRequest): Promise<Outcome>;
  /** The process group of wrangler and everything it spawned. */
  processGroup: number;
  /** wrangler's captured output, for diagnosing a failure. */
  output(): string;
  /** Stops wrangler and everything it spawned. Idempotent. */
  stop(): Promise<void>;
}

export interface StartOptions {
  /** How long one cold start may take. Default 120 s: 10–25 s is usual, but the machine is shared. */
  readyTimeoutMs?: number;
}

const DEFAULT_READY_TIMEOUT_MS = 120_000;

export async function startReferenceColumn(
  name: ColumnName | string,
  options: StartOptions = {},
): Promise<StartedReferenceColumn> {
  const column = columnByName(name);
  const versions = readColumnVersions(column); // Before starting anything: a drifted alias is an error.
  const dev = await startWranglerDev({
    label: column.name,
    wranglerBin: WRANGLER_BIN,
    configPath: column.configPath,
    readyTimeoutMs: options.readyTimeoutMs ?? DEFAULT_READY_TIMEOUT_MS,
  });
  let stopped = false;
  return {
    column,
    url: dev.url,
    versions,
    run: (request) =>
      stopped
        ? Promise.reject(new Error(columnStopped(column.name)))
        : postReferenceRequest(column.name, dev.url, request),
    processGroup: dev.processGroup,
    output: dev.output,
    stop: () => {
      stopped = true;
      return dev.stop();
    },
  };
}

/**
 * Reference columns as running services: `startReferenceColumn` bundles `worker.ts` against one
 * release under `wrangler dev`, and `startReferenceColumns` starts several with bounded
 * parallelism. Used by the catalogue, the matrix runner, the surface inventory and the benchmark.
 */

import { messageOf } from '../../src/protocol/errors.js';
import type { Outcome } from '../case-model.js';
import {
  COLUMN_NAMES,
  type ColumnName,
  type ColumnVersions,
  columnByName,
  type ReferenceColumn,
  readColumnVersions,
  WRANGLER_BIN,
} from './columns.js';
import { columnStopped, columnsFailedToStart } from './messages.js';
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

export interface StartManyOptions extends StartOptions {
  /** How many columns start at once. Default 2, the number of cores. */
  parallelism?: number;
}

const DEFAULT_READY_TIMEOUT_MS = 120_000;
const DEFAULT_PARALLELISM = 2;

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

/** Stops every column given, in parallel; the first failure is rethrown after all have been tried. */
export async function stopReferenceColumns(columns: readonly StartedReferenceColumn[]): Promise<void> {
  const results = await Promise.allSettled(columns.map((column) => column.stop()));
  const failed = results.find((result): result is PromiseRejectedResult => result.status === 'rejected');
  if (failed) throw failed.reason;
}

/**
 * Starts the named columns (default: all), at most `parallelism` at a time, in the order given.
 * If any fails to start, the ones that did are stopped and one error names every failure.
 */
export async function startReferenceColumns(
  names: readonly (ColumnName | string)[] = COLUMN_NAMES,
  options: StartManyOptions = {},
): Promise<StartedReferenceColumn[]> {
  const parallelism = Math.max(1, options.parallelism ?? DEFAULT_PARALLELISM);
  const started: (StartedReferenceColumn | undefined)[] = new Array(names.length);
  const failures: string[] = [];
  let next = 0;
  const lane = async () => {
    while (next < names.length && failures.length === 0) {
      const index = next;
      next += 1;
      const name = names[index] as string;
      try {
        started[index] = await startReferenceColumn(name, options);
      } catch (error) {
        failures.push(`${name}: ${messageOf(error)}`);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(parallelism, names.length) }, lane));
  const running = started.filter((column): column is StartedReferenceColumn => column !== undefined);
  if (failures.length > 0) {
    await stopReferenceColumns(running);
    throw new Error(columnsFailedToStart(failures));
  }
  return running;
}

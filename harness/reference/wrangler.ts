/**
 * Reference columns as running services: `startReferenceColumn` bundles `worker.ts` against one
 * release under `wrangler dev`, and `runOnReference` runs a case there as one POST. Used by the
 * engine's sides, the surface inventory and the benchmark. Node-only.
 */

import { messageOf } from '../../src/protocol/index.js';
import type { Case, Outcome } from '../case-model.js';
import {
  type ColumnName,
  type ColumnVersions,
  columnByName,
  type ReferenceColumn,
  readColumnVersions,
  WRANGLER_BIN,
} from './columns.js';
import { describeRequest } from './describe-request.js';
import { columnRequestFailed, columnRequestTimedOut, columnStopped, columnUnreachable } from './messages.js';
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

/** The longest default timeout of any release (docs/upstream.md, "The default timeout"). */
const LONGEST_DEFAULT_TIMEOUT_MS = 60_000;
/** Room for loading the dynamic worker and the round trip, beyond the in-sandbox timeout. */
const ANSWER_GRACE_MS = 30_000;

/** How long to wait for an answer: the case's own bound, plus grace. */
function answerDeadlineMs(request: ReferenceRequest): number {
  return (request.timeout ?? LONGEST_DEFAULT_TIMEOUT_MS) + ANSWER_GRACE_MS;
}

async function postReferenceRequest(column: string, url: string, request: ReferenceRequest): Promise<Outcome> {
  const deadline = answerDeadlineMs(request);
  let response: Response;
  try {
    response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(request),
      signal: AbortSignal.timeout(deadline),
    });
  } catch (error) {
    if (error instanceof Error && error.name === 'TimeoutError')
      throw new Error(columnRequestTimedOut(column, request.caseId, deadline));
    throw new Error(columnUnreachable(column, request.caseId, messageOf(error)));
  }
  const text = await response.text();
  if (response.status !== 200) throw new Error(columnRequestFailed(column, request.caseId, response.status, text));
  return JSON.parse(text) as Outcome;
}

/**
 * One case on a running column, as a normalized outcome. Refuses (rejects, naming the case) what the
 * reference wire cannot represent, before anything is sent; rejects on infrastructure failure. The
 * case's own outcome, a `threw` included, resolves.
 */
export async function runOnReference(column: StartedReferenceColumn, testCase: Case): Promise<Outcome> {
  return column.run(describeRequest(testCase));
}

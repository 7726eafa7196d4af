/**
 * The body of one POST to a reference worker: everything `DynamicWorkerExecutor` can be told,
 * and nothing it cannot (that is `describeRequest`'s job to refuse). Runtime-neutral: the worker
 * bundles it and uses `parseReferenceRequest` to turn a bad body into a 400.
 */

import { messageOf } from '../../src/protocol/index.js';
import type { CaseConnector, CaseModule, CaseOutbound, CaseProvider } from '../case-model.js';
import { badReferenceBody } from './messages.js';

export interface ReferenceRequest {
  /** The case this request runs, for error messages on both ends. */
  caseId: string;
  code: string;
  /** Declarative providers; the worker materializes them with `harness/tools.ts`. Never `proxySource`. */
  providers: CaseProvider[];
  /** Present: passed as `execute`'s third argument `{connectors}` (0.4.0+ reads it; older lines ignore it). */
  connectors?: CaseConnector[];
  /** Pass the first provider's functions as the deprecated bare record. */
  bareRecord?: boolean;
  /**
   * Constructor option `modules`: source text, or a Worker Loader module kind, which every release
   * hands the loader as it is (its type says text).
   */
  modules?: Record<string, CaseModule>;
  /** Constructor option `timeout` (ms). Absent: the release's default. */
  timeout?: number;
  /**
   * `blocked`: constructor option `globalOutbound: null`. A response: `globalOutbound` is a Fetcher
   * of the worker's own that answers every fetch with it. Absent: the option is left out.
   */
  globalOutbound?: 'blocked' | OutboundResponse;
  /** Answer with the host functions called by the time `execute` settled, as `calls`. */
  recordCalls?: boolean;
}

/** What the Fetcher answers every request with (a case's `outbound: {respond}`). */
export type OutboundResponse = Extract<CaseOutbound, { respond: unknown }>['respond'];

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const TEXT_MODULE_KINDS = new Set(['js', 'cjs', 'text']);

/** Source text, or exactly one of `{js}`, `{cjs}`, `{text}` (text) or `{json}` (any value). */
function isModule(value: unknown): boolean {
  if (typeof value === 'string') return true;
  if (!isRecord(value)) return false;
  const keys = Object.keys(value);
  if (keys.length !== 1) return false;
  const [kind] = keys as [string];
  return kind === 'json' || (TEXT_MODULE_KINDS.has(kind) && typeof value[kind] === 'string');
}

/** Checks the shape the worker relies on; the case schema has already checked the details. */
export function parseReferenceRequest(text: string): ReferenceRequest {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (error) {
    throw new Error(badReferenceBody(`not JSON (${messageOf(error)})`));
  }
  if (!isRecord(body)) throw new Error(badReferenceBody('expected a JSON object'));
  if (typeof body.caseId !== 'string') throw new Error(badReferenceBody('caseId must be a string'));
  if (typeof body.code !== 'string') throw new Error(badReferenceBody('code must be a string'));
  if (!Array.isArray(body.providers) || !body.providers.every((p) => isRecord(p) && isRecord(p.tools))) {
    throw new Error(badReferenceBody('providers must be an array of {name?, tools}'));
  }
  if (
    body.connectors !== undefined &&
    (!Array.isArray(body.connectors) ||
      !body.connectors.every((c) => isRecord(c) && typeof c.name === 'string' && isRecord(c.tools)))
  ) {
    throw new Error(badReferenceBody('connectors must be an array of {name, tools}'));
  }
  if (body.bareRecord !== undefined && typeof body.bareRecord !== 'boolean')
    throw new Error(badReferenceBody('bareRecord must be a boolean'));
  if (body.modules !== undefined && (!isRecord(body.modules) || !Object.values(body.modules).every(isModule))) {
    throw new Error(
      badReferenceBody('modules must map names to source text, or to one of {js}, {cjs}, {text}, {json}'),
    );
  }
  if (body.timeout !== undefined && (typeof body.timeout !== 'number' || !Number.isFinite(body.timeout))) {
    throw new Error(badReferenceBody('timeout must be a finite number'));
  }
  if (body.globalOutbound !== undefined && body.globalOutbound !== 'blocked' && !isRecord(body.globalOutbound))
    throw new Error(
      badReferenceBody('globalOutbound must be "blocked", a response {status?, body?, headers?}, or absent'),
    );
  if (body.recordCalls !== undefined && typeof body.recordCalls !== 'boolean')
    throw new Error(badReferenceBody('recordCalls must be a boolean'));
  return body as unknown as ReferenceRequest;
}

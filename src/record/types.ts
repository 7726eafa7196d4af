/**
 * The run record and the replay comparison: JSON the host keeps, and the typed answer of
 * `replay`. `schema/run-record.schema.json` is the schema of `RunRecord`; docs/observing.md is
 * the prose version of this file.
 */
import type { ExecuteRequest, LogEntry, ProviderDescriptor } from '../protocol/types.js';

/** The `format` every run record carries, beside its `schemaVersion`. */
export const RUN_RECORD_FORMAT = 'codemode-run-record';
/** The version of the record's shape; `schema/run-record.schema.json` describes this one. */
export const RUN_RECORD_SCHEMA_VERSION = 1;

/**
 * A JSON value as the record holds it. Bytes (a `Uint8Array`, an `ArrayBuffer`) are the binary
 * codec's tag object, `{"__codemode_binary_v1__": kind, "data": base64}`, as they crossed.
 */
export type RecordedValue = null | boolean | number | string | RecordedValue[] | { [key: string]: RecordedValue };

/** What the native request asked for, all that running the same code again needs but the tools. */
export interface RecordedRequest {
  code: string;
  providers: ProviderDescriptor[];
  modules?: ExecuteRequest['modules'];
  timeout?: number | null;
  cpuTimeout?: number;
  countHostWaits?: boolean;
}

/** One tool call, in the order the sandbox made it. */
export interface RecordedCall {
  provider: string;
  tool: string;
  /** The argument array as the sandbox sent it. */
  args: RecordedValue;
  /** The tool's value; absent when it returned `undefined` or failed. */
  result?: RecordedValue;
  /** The failure's text, as the sandbox received it. */
  error?: string;
  /** `true` when the host's `dispatch` itself rejected, rather than answering with an error. */
  rejected?: true;
  /** Milliseconds from the start of the run to the call. */
  startMs: number;
  /** Milliseconds the host took to answer; absent when the run ended before it answered. */
  durationMs?: number;
}

/** How the run ended. */
export interface RecordedOutcome {
  /** The settled value; absent when it was `undefined` or the run failed. */
  result?: RecordedValue;
  /** Why JSON could not write the settled value (a BigInt, a cycle), in its place. */
  resultNotJson?: string;
  /** The run's failure text (`ExecuteResult.error`). */
  error?: string;
  /** `execute` itself rejected (cancelled, disposed, refused): its message and code. */
  rejected?: { message: string; code?: string };
}

/** Set when the record hit its size bound and left entries out, so it cannot replay. */
export interface RecordTruncation {
  /** The bound, in bytes of JSON. */
  maxBytes: number;
  /** The tool calls left out, from the first that did not fit to the last. */
  droppedCalls: number;
  /** The console lines left out. */
  droppedLogs: number;
  /** Whether the outcome's value was left out (its error text, if any, is kept). */
  droppedResult: boolean;
  /** What was cut, and how to keep it whole, in words. */
  text: string;
}

/** One execution, as it happened: JSON, versioned, and bounded in size. */
export interface RunRecord {
  format: typeof RUN_RECORD_FORMAT;
  schemaVersion: typeof RUN_RECORD_SCHEMA_VERSION;
  request: RecordedRequest;
  calls: RecordedCall[];
  logs: LogEntry[];
  outcome: RecordedOutcome;
  /** When the run started (ISO 8601), and how long `execute` took, in milliseconds. */
  timing: { startedAt: string; wallMs: number };
  truncated?: RecordTruncation;
}

export type { ReplayOptions } from './replay-options.js';

/** A call as the replayed run made it. */
export interface ReplayedCall {
  provider: string;
  tool: string;
  args: RecordedValue;
}

/** Where the replayed run first parted from the record. */
export type ReplayDivergence =
  /** Call `index` named another provider or tool, or passed other arguments. */
  | { kind: 'call'; index: number; recorded: ReplayedCall; replayed: ReplayedCall }
  /** The replayed run made call `index`, past the last recorded one. */
  | { kind: 'extra-call'; index: number; replayed: ReplayedCall }
  /** The replayed run ended without making recorded call `index`. */
  | { kind: 'missing-call'; index: number; recorded: ReplayedCall }
  /** The calls matched, but the run ended otherwise: another value, another error. */
  | { kind: 'outcome'; recorded: RecordedOutcome; replayed: RecordedOutcome }
  /** Calls and outcome matched, but console line `index` differs (or one side has no such line). */
  | { kind: 'log'; index: number; recorded: LogEntry | null; replayed: LogEntry | null };

/** What `replay` found: the same run, or the first place it differed. */
export type ReplayComparison =
  | { identical: true; replayed: RunRecord }
  | { identical: false; divergence: ReplayDivergence; replayed: RunRecord };

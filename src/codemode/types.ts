/**
 * The public types of the dialect adapter. They restate the dialect's own rather than import them,
 * so they resolve without the optional peer and mean the same whichever release of it a host has
 * installed.
 */
import type { ExecuteRequest, ExecutorCallOptions, ProviderDescriptor } from '../protocol/types.js';
import type { RecordOptions } from '../record/record-options.js';
import type { RunRecord } from '../record/types.js';

/**
 * A host tool function. The dialect types it `(...args: unknown[]) => Promise<unknown>`; this one
 * is wider so that such functions fit, and so do synchronous ones and functions with their own
 * parameter types (`(input: {q: string}) => ...`), which `unknown[]` would refuse.
 */
// biome-ignore lint/suspicious/noExplicitAny: `unknown[]` would refuse functions with typed parameters (see above).
export type ToolFunction = (...args: any[]) => unknown;

/** The dialect's `ResolvedProvider` as `@cloudflare/codemode` 0.4+ declares it. */
export interface DialectProvider {
  name: string;
  fns: Record<string, ToolFunction>;
  /** Sandbox-side JavaScript run after every namespace is bound. */
  prelude?: string | undefined;
}

/** A dialect provider, widened with the two native `ProviderDescriptor` members the dialect has no field for. */
export interface ExtendedProvider extends DialectProvider, Pick<ProviderDescriptor, 'positionalArgs' | 'proxySource'> {}

/** The dialect's `ConnectorBinding`: tool names live behind `callTool`. */
export interface ConnectorBinding {
  name: string;
  binding: {
    callTool(method: string, args: unknown): unknown;
  };
}

/**
 * The dialect's `ExecuteOptions` (`connectors`), plus the module map, the timeout, the CPU-time
 * bound and the outbound fetcher on the call, forwarded unchanged to the native `ExecuteRequest`,
 * so one long-lived executor serves a host that bundles per call.
 */
export interface ExtendedExecuteOptions {
  connectors?: ConnectorBinding[] | undefined;
  modules?: ExecuteRequest['modules'] | undefined;
  timeout?: ExecuteRequest['timeout'] | undefined;
  cpuTimeout?: ExecuteRequest['cpuTimeout'] | undefined;
  outbound?: ExecuteRequest['outbound'] | undefined;
  /**
   * Who the run is for, over the constructor's `tenant`: at `IsolateExecutor`'s tenant level
   * (`pool.runsPerMember`) runs of one tenant may share a process, each in its own isolate.
   */
  tenant?: ExecuteRequest['tenant'] | undefined;
  /**
   * Record the run (docs/observing.md): `true`, or `{maxBytes?, onRecord?}`. The result then
   * carries `record`, which `replay` runs again. Off by default: nothing is recorded unasked.
   */
  record?: boolean | RecordOptions | undefined;
  /**
   * Receives the run's live events, in order (docs/observing.md): `console`, `tool-call`,
   * `tool-result`, `fetch`, and `end` last. Handed to the native executor as its call option.
   */
  onEvent?: ExecutorCallOptions['onEvent'];
  /** How many events may wait while `onEvent` works on an earlier one. Default 1000. */
  maxQueuedEvents?: ExecutorCallOptions['maxQueuedEvents'];
}

/** The dialect's `ExecuteResult`. `logs` is absent only when a name rule refused the call. */
export interface CodemodeExecuteResult {
  result: unknown;
  error?: string;
  logs?: string[];
  /** The run's record, when the call set `record` and the run reached the native executor. */
  record?: RunRecord;
}

/**
 * The types the two worker bundles (supervisor.ts, harness.ts) share: the ids the supervisor keys
 * its state by, the supervisor's bindings, and the RPC surface between the supervisor and a run's
 * dynamic worker. Types only: neither bundle gets code from here.
 */
import type { LogEntry, LogLevel } from '../../protocol/types.js';
import type { SupervisorSettings } from '../contract/sandbox-settings.js';

/** A run: one execution, or one call of a retained execution's handle (the channel's `run`). */
export type RunId = string & { readonly kind: 'RunId' };
/** A retained execution: the id of the run that loaded its worker (the channel's `exec`). */
export type ExecutionId = string & { readonly kind: 'ExecutionId' };
/** A tool call put to the host, answered by the `answer` with the same `ask`. */
export type AskId = number & { readonly kind: 'AskId' };
/** An outbound binding: the id of the run that loaded the worker its fetches come from. */
export type RouteId = string & { readonly kind: 'RouteId' };

/**
 * The Worker Loader binding as the supervisor uses it: every worker it loads has the sandbox
 * entrypoint (workers-types' `WorkerStub.getEntrypoint` is generic only through its return type).
 */
interface SandboxLoader {
  load(code: WorkerLoaderWorkerCode): SandboxWorker;
}

export interface SandboxWorker {
  getEntrypoint(): Fetcher<SandboxEntrypoint>;
}

/** The supervisor's bindings (supervisor-config.ts). */
export interface SupervisorEnv {
  LOADER: SandboxLoader;
  /** The host's outbound relay (host/relay/outbound-server.ts). */
  HOST: Fetcher;
  /** The harness module's source (sandbox-sources.ts). */
  HARNESS: string;
  SETTINGS: SupervisorSettings;
}

/** What an `Outbound` binding is made with: the run whose worker it serves. */
export interface OutboundProps {
  route: RouteId;
}

/** The sandbox's way back to the host, one per run (supervisor.ts `Bridge`). */
export interface SandboxBridge {
  /** Resolves with the tool call's envelope. */
  call(provider: string, tool: string, args: string): Promise<string>;
  /** Tells the host the run's program has started (its `timeout` counts from here). */
  started(): void;
  /** Sends a console line to the host as it is captured (a run that asked for its lines live). */
  line(index: number, level: LogLevel, message: string): void | Promise<void>;
}

/**
 * How a run ended in its sandbox (harness.ts). `settledBeforeDeadline`, the sandbox's verdict on
 * its race, is carried on to the host as the `done` message's field of that name.
 */
export type SandboxOutcome =
  | { ok: true; value: unknown; logs: LogEntry[]; settledBeforeDeadline: boolean }
  | { ok: false; error: string; logs: LogEntry[]; settledBeforeDeadline: boolean };

/** An `invoke` whose handle the worker does not hold. */
export interface HandleMissing {
  missing: true;
}

/** The answer to `cancel`: whether the run won its race, and if not, what it logged. */
export type RaceVerdict = { won: true } | { won: false; logs: LogEntry[] };

/** What the supervisor hands a run's `evaluate`: its id, its bound, and whether a success is retained. */
export interface EvaluateOptions {
  run: string;
  bound: number;
  retain: boolean;
  /** Send each console line to the host as it is captured. */
  live: boolean;
}

/** What it hands an `invoke` of a retained execution's function. */
export interface InvokeOptions {
  run: string;
  bound: number;
  live: boolean;
}

/**
 * The entrypoint of an execution's dynamic worker, as the supervisor calls it: the harness's
 * `Entrypoint` and the `evaluate` the generated entry module adds (entry-module.ts).
 */
export interface SandboxEntrypoint extends Rpc.WorkerEntrypointBranded {
  evaluate(bridge: SandboxBridge, options: EvaluateOptions): Promise<SandboxOutcome>;
  snapshot(): { logs: LogEntry[]; settledBeforeDeadline: boolean };
  cancel(run: string, awaitRace: boolean): RaceVerdict | Promise<RaceVerdict>;
  invoke(
    handle: string,
    args: unknown[],
    bridge: SandboxBridge,
    options: InvokeOptions,
  ): HandleMissing | SandboxOutcome | Promise<SandboxOutcome>;
}

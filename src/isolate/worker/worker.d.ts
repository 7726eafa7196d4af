/**
 * Types of the worker scripts beside this file, which tsconfig.worker.json checks against
 * workerd's own types (`@cloudflare/workers-types`, pinned to the workerd release we run).
 * The modules the supervisor's config adds (supervisor-config.ts) are typed by the TypeScript
 * sources their text is made from, so a change on one side is a type error on the other.
 */

declare module 'value-codec.js' {
  const createValueCodec: typeof import('../../protocol/value-codec.js').createValueCodec;
  export default createValueCodec;
}

declare module 'channel-grammar.js' {
  const createChannelGrammar: typeof import('../channel.js').createChannelGrammar;
  export default createChannelGrammar;
}

declare module 'relay-codec.js' {
  const createRelayCodec: typeof import('../relay-frame.js').createRelayCodec;
  export default createRelayCodec;
}

declare module 'expanded-size.js' {
  const createExpandedSizer: typeof import('../expanded-size.js').createExpandedSizer;
  export default createExpandedSizer;
}

type LogEntry = import('../../protocol/types.js').LogEntry;
type SandboxLimits = import('../worker-settings.js').SandboxLimits;

/** harness.js: replaced by the harness settings when the sources are built (sandbox-sources.ts). */
declare const __HARNESS_SETTINGS__: import('../worker-settings.js').HarnessSettings;
/** The member's caps, baked into its harness source (sandbox-sources.ts). */
declare const __SANDBOX_LIMITS__: SandboxLimits;
/** harness.js: replaced by the protocol's `BINARY_CODEC_SOURCE`. */
declare const __BINARY_CODEC__: typeof import('../../protocol/codec.js').createBinaryCodec;

/**
 * The Worker Loader binding as the supervisor uses it: every worker it loads has the sandbox
 * entrypoint (workers-types' `WorkerStub.getEntrypoint` is generic only through its return type).
 */
interface SandboxLoader {
  load(code: WorkerLoaderWorkerCode): SandboxWorker;
}

interface SandboxWorker {
  getEntrypoint(): Fetcher<SandboxEntrypoint>;
}

/** The supervisor's bindings (supervisor-config.ts). */
interface SupervisorEnv {
  LOADER: SandboxLoader;
  /** The host's outbound relay (outbound-server.ts). */
  HOST: Fetcher;
  /** The harness module's source (sandbox-sources.ts). */
  HARNESS: string;
  SETTINGS: import('../worker-settings.js').SupervisorSettings;
}

/** `ctx.exports` (the `enable_ctx_exports` flag of the supervisor): its own entrypoints, as bindings. */
interface ExecutionContext<Props = unknown> {
  readonly exports: {
    Outbound(options: { props: OutboundProps }): Fetcher;
    Runner: { execute(message: import('../channel.js').RunMessage, bridge: RunBridgeTarget): Promise<void> };
  };
}

/** A run's way to the host (supervisor.js `Bridge`): its tool calls, and the report of its outcome. */
interface RunBridgeTarget extends SandboxBridge {
  /** A run's `done` or `cancelled`, as its JSON text. */
  report(text: string): void | Promise<void>;
  rename(run: string): void;
}

/**
 * The bridge as a Runner holds it: a stub, whose copies passed on in a call's parameters are
 * disposed when that call returns (so each call gets a `dup()`).
 */
interface RunBridge extends SandboxBridge {
  report(text: string): Promise<void>;
  dup(): RunBridge;
}

/** What an `Outbound` binding is made with: the run whose worker it serves. */
interface OutboundProps {
  route: string;
}

/** The sandbox's way back to the host, one per run (supervisor.js `Bridge`). */
interface SandboxBridge {
  /** Resolves with the tool call's envelope. */
  call(provider: string, tool: string, args: string): Promise<string>;
}

/** A run that settled, in time or not (harness.js `settle`). */
type SettledRun =
  | { ok: true; value: unknown; logs: LogEntry[]; inTime: boolean }
  | { ok: false; error: string; logs: LogEntry[]; inTime: boolean };

/** The answer to `cancel`: whether the run won its race, and if not, what it logged. */
type RaceVerdict = { won: true } | { won: false; logs: LogEntry[] };

/**
 * The entrypoint of an execution's dynamic worker, as the supervisor calls it: the harness's
 * `Entrypoint` and the `evaluate` the generated entry module adds (entry-module.ts).
 */
interface SandboxEntrypoint extends Rpc.WorkerEntrypointBranded {
  evaluate(bridge: SandboxBridge, options: { run: string; bound: number; retain: boolean }): Promise<SettledRun>;
  snapshot(): { logs: LogEntry[]; inTime: boolean };
  cancel(run: string, awaitRace: boolean): RaceVerdict | Promise<RaceVerdict>;
  invoke(
    handle: string,
    args: unknown[],
    bridge: SandboxBridge,
    options: { run: string; bound: number },
  ): { missing: true } | SettledRun | Promise<SettledRun>;
}

/**
 * The shape of one runtime flow, as written in `cases/runtime-*.yaml` and validated by
 * `schema/case.schema.json` (which documents every field): connectors declared by behaviour,
 * the runtime's options, and steps on upstream's runtime handle, each with the output it must
 * give once execution ids and times are normalized. Runtime-neutral: the reference worker
 * bundles this module.
 */
import type { Matcher } from './case-model.js';

/** What one connector tool does when it really runs. Exactly one of the value keys. */
export interface FlowTool {
  /** A read: returns this value. */
  returns?: unknown;
  /** Returns the arguments it was called with. */
  echo?: true;
  /** Throws an Error with this message. */
  throws?: string;
  /** Returns a Uint8Array of these bytes. */
  bytes?: number[];
  /** Returns the `executionId` of the tool's context. */
  executionId?: true;
  /** Returns a string of this many `x`, for the durable value cap. */
  repeat?: number;
  /** `requiresApproval: true`: the run pauses until approved. */
  approval?: true;
  /** Has a `revert`, which notes `revert <connector>.<tool>` as it runs; a text makes it throw that. */
  revert?: true | string;
  /** `replay: "reexecute"`: the result is never logged, a replay runs the tool again. */
  reexecute?: true;
  /** Waits this many ms before it answers, so a run stays `running` meanwhile. */
  delay?: number;
  description?: string;
  inputSchema?: unknown;
}

export interface FlowConnector {
  name: string;
  instructions?: string;
  tools: Record<string, FlowTool>;
  /** Note `onPassEnd` and `disposeExecution` as they fire, in `ran`. */
  hooks?: true;
}

export interface FlowRuntimeOptions {
  maxExecutions?: number;
  /**
   * `wrap`: the model-facing result becomes `{ transformed: result }`; `throw`: the transform
   * throws; `truncate`: the release's own `truncateResult(result, { maxChars: 300 })`.
   */
  transformResult?: 'wrap' | 'throw' | 'truncate';
}

/** The handle a step addresses: a runtime name, and which of the flow's connectors it is given. */
interface StepTarget {
  /** The runtime's `name` option; absent: upstream's default. */
  runtime?: string;
  /** Only these connectors (by name); absent: all of the flow's. */
  connectors?: string[];
  /** Starts the call this many ms late: inside `concurrent`, it orders the starts. */
  after?: number;
}

/** One call on the handle. Executions are named by the label their execute step gave them. */
type HandleCall =
  | { execute: string; as?: string }
  | { run: string; input?: unknown; as?: string }
  | { approve: string }
  | { reject: string; seq: number }
  | { rollback: string }
  | { pending: string | null }
  | { executions: number | null }
  | { saveSnippet: string; from: string; description?: string; inputSchema?: unknown }
  | { snippets: true }
  | { deleteSnippet: string }
  | { search: string }
  | { describe: string }
  | { expirePaused: number | null }
  | { deleteExecution: string }
  | { pruneExecutions: number }
  | { tool: true }
  /** `runtime.tool().toModelOutput({ output })`: what the model is shown of a tool output. */
  | { toModelOutput: unknown };

/** What a step does: a call on the handle, or one of the steps that only a step can be. */
type FlowAction =
  | HandleCall
  | { wait: number }
  | { restart: true }
  /** Calls started together; the value is each one's `{ value }` or `{ threw }`, in order. */
  | { concurrent: Array<HandleCall & StepTarget> };

export type FlowCall = FlowAction & StepTarget;

export type FlowStep = FlowCall & { expect: StepExpectation };

/** What a step gave, after normalization: its value or the message it threw, and what really ran. */
export interface StepOutcome {
  value?: unknown;
  threw?: string;
  /** Connector tools that really executed during the step (`store.get`), reverts and hooks, in order. */
  ran: string[];
}

export interface StepExpectation {
  value?: unknown;
  threw?: string | Matcher;
  ran?: Array<string | Matcher> | Matcher;
}

/**
 * Skips the reference columns on one side of a release boundary, as a case's skip entry does.
 * They still run the flow: they must not meet its steps' expectations, and with `steps` (one per
 * step, in order) they must meet those instead.
 */
type FlowSkipEntry = ({ before: string } | { from: string }) & { note?: string; steps?: StepExpectation[] };

export interface Flow {
  id: string;
  description: string;
  features: string[];
  /** A heading of docs/upstream.md the expectations rest on. */
  basis?: string;
  connectors: FlowConnector[];
  runtime?: FlowRuntimeOptions;
  /**
   * npm packages bundled by bundlePackages (harness/packages.ts) into the executor's modules: upstream's
   * `DynamicWorkerExecutor({ modules })` on the reference columns, the same map on every call on ours.
   */
  packages?: string[];
  steps: FlowStep[];
  /** The boundary (cases/boundaries.yaml) before which a reference release cannot run the flow; default `runtime`. */
  since?: string;
  /** Boundaries whose other side behaves otherwise, with what its steps give there. */
  skipOn?: FlowSkipEntry[];
}

export interface LoadedFlow extends Flow {
  file: string;
  line: number;
}

/** The outcome of a flow on one side: one entry per step, concurrent groups flattened in order. */
export interface FlowOutcome {
  steps: StepOutcome[];
}

/**
 * The shape of one compatibility case, as written in `cases/*.yaml` and validated by
 * `schema/case.schema.json` (which documents every field), and of a release boundary, as written
 * in `cases/boundaries.yaml`. Runtime-neutral: the reference worker bundles this module.
 */

/** A tool's declared behaviour. Exactly one key (`delay` may add `then`, `bytes` may add `as`). */
export type ToolBehaviour =
  | { echo: true }
  | { returns: unknown }
  | { add: true }
  | { throws: string }
  | { throwsValue: unknown }
  | { delay: number; then?: ToolBehaviour }
  | { bytes: number[]; as?: 'Uint8Array' | 'ArrayBuffer' }
  | { count: true }
  | { inspect: true }
  | { pause: true }
  | { controlError: string }
  | { returnsSpecial: SpecialValue }
  | { inspectDeep: true }
  | { latch: 'wait' | 'open' }
  | { peak: number };

/** Values a tool can return that a YAML literal cannot express. */
export type SpecialValue =
  | 'undefined'
  | 'bigint'
  | 'date'
  | 'map'
  | 'set'
  | 'nan'
  | 'int16array'
  | 'dataview'
  | 'nested-binary';

export interface CaseProvider {
  /** Default `codemode`. */
  name?: string;
  /** Raw tool name → behaviour. */
  tools: Record<string, ToolBehaviour>;
  positionalArgs?: boolean;
  proxySource?: string;
  prelude?: string;
}

export interface CaseConnector {
  name: string;
  tools: Record<string, ToolBehaviour>;
}

export type CaseOutbound =
  | 'default'
  | 'blocked'
  | { respond: { status?: number; body?: string; headers?: Record<string, string> } };

/** Source text (an ES module), or one of the native contract's module kinds. */
export type CaseModule = string | { js: string } | { cjs: string } | { text: string } | { json: unknown };

export interface CaseOptions {
  connectors?: CaseConnector[];
  modules?: Record<string, CaseModule>;
  /** npm packages bundled into `modules` before execute (harness/packages.ts). */
  packages?: string[];
  timeout?: number;
  outbound?: CaseOutbound;
  countHostWaits?: boolean;
  bareRecord?: boolean;
  /**
   * The reference's Worker Loader adds `limits: {cpuMs}` to each WorkerCode it loads; ours has no
   * loader a host hands it, so nothing carries it there.
   */
  loaderCpuMs?: number;
  /** Report the host functions called by the time `execute` settled, as the outcome's `calls`. */
  recordCalls?: true;
}

export type Matcher = { match: string } | { any: true } | { absent: true };

/** The normalized outcome of one side: a JSON round trip of what `execute` produced, or `threw`. */
export interface Outcome {
  result?: unknown;
  /** A string on ours; upstream passes a thrown object's `message` through as it is. */
  error?: unknown;
  logs?: string[];
  /** The message of a rejection that crossed `execute`. */
  threw?: string;
  /**
   * With `recordCalls`: every host function called by the time `execute` settled, in the order
   * the calls started, as `<namespace>.<raw tool name>`.
   */
  calls?: string[];
}

/** A value or a matcher per field; docs/interpreting.md states how it is applied. */
export interface Expectation {
  result?: unknown;
  /** Text or a matcher; any other JSON value for an upstream that reports a non-string message. */
  error?: unknown;
  logs?: Array<string | Matcher> | Matcher;
  threw?: string | Matcher;
  calls?: Array<string | Matcher> | Matcher;
}

/** Where upstream differs on purpose: what the reference columns give instead, and why we differ. */
interface UpstreamExpectation {
  expect: Expectation;
  reason: string;
}

/**
 * Skips the reference columns on one side of a release boundary. They still run the case: with
 * `expect`, they must fail that way (and meet it); without, they must merely not pass.
 */
type SkipEntry = ({ before: string } | { from: string }) & { note?: string; expect?: Expectation };

export interface Triage {
  link: string;
  note: string;
}

export interface Case {
  id: string;
  description: string;
  features: string[];
  /** A heading of docs/upstream.md: the observed fact the expectation rests on. */
  basis?: string;
  code: string;
  providers?: CaseProvider[];
  options?: CaseOptions;
  expect: Expectation;
  upstream?: UpstreamExpectation;
  skipOn?: SkipEntry[];
  /** Why running this program on a reference column is unsafe (a spin wedges `wrangler dev`). */
  unsafeOnReference?: string;
  /** The expectation involves time; absent, the harness derives it (harness/timing.ts). */
  timing?: boolean;
  /** A known upstream defect or an open question: where it is tracked, and what is known. */
  triage?: Triage;
  /** On a draft in `cases/drafts/` only: where `npm run fuzz` found the program. */
  fuzz?: FuzzOrigin;
}

/** Where a draft's generated program came from (docs/fuzzing.md). */
export interface FuzzOrigin {
  seed: number;
  /** The reference column ours was compared with. */
  column: string;
  /** The first program of the seed (0-based) that differed this way, before shrinking. */
  index: number;
  /** The fields that differ and the kind of value on each side. */
  signature: string;
  /** When the draft was written (ISO 8601). */
  found: string;
}

/** A case with where it came from, for messages and test names. */
export interface LoadedCase extends Case {
  file: string;
  line: number;
}

/** A release where upstream's behaviour changed, from `cases/boundaries.yaml`. */
export interface Boundary {
  id: string;
  /** The first release with the new behaviour. */
  release: string;
  /** What changed, written once; every skip on this boundary shows it. */
  reason: string;
  basis?: string;
}

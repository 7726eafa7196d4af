/**
 * The shape of one compatibility case, as written in `cases/*.yaml` and validated by
 * `schema/case.schema.json`. Every side (ours, ours over a daemon, each reference column) reads
 * the same record; `tools.ts` turns the declared behaviours into functions, identically everywhere.
 * This module is runtime-neutral: the reference worker bundles it.
 */

/** A tool's declared behaviour. Exactly one key. */
export type ToolBehaviour =
  /** Returns the argument array it received, e.g. `echo(1, 2)` → `[1, 2]`. */
  | { echo: true }
  /** Returns this JSON value. */
  | { returns: unknown }
  /** Returns the sum of its arguments (`+` from 0). */
  | { add: true }
  /** Throws `new Error(message)`. */
  | { throws: string }
  /** Throws this value as it is (a string, an object, null...). */
  | { throwsValue: unknown }
  /** Waits `ms`, then behaves as `then` (default: echo). */
  | { delay: number; then?: ToolBehaviour }
  /** Returns a `Uint8Array` of these bytes (or an `ArrayBuffer` with `as: ArrayBuffer`). */
  | { bytes: number[]; as?: 'Uint8Array' | 'ArrayBuffer' }
  /** Returns how many times this tool has been called in this execution, this call included. */
  | { count: true }
  /** Returns, for every argument, `{type, tag, value}`: `typeof`, `Object.prototype.toString`, and a JSON-safe view. */
  | { inspect: true }
  /** Connectors only: returns the pause control marker. */
  | { pause: true }
  /** Connectors only: returns the error control marker with this message. */
  | { controlError: string }
  /** Returns one of the values YAML cannot write (see `SpecialValue`). */
  | { returnsSpecial: SpecialValue }
  /** Returns its arguments with every binary value, at any depth, replaced by `{binary: brand, bytes}`. */
  | { inspectDeep: true };

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

/** A provider, described declaratively. */
export interface CaseProvider {
  /** Default `codemode`. */
  name?: string;
  /** Raw tool name → behaviour. Raw names may need sanitizing (`list-issues`). */
  tools: Record<string, ToolBehaviour>;
  positionalArgs?: boolean;
  proxySource?: string;
  prelude?: string;
}

export interface CaseConnector {
  name: string;
  tools: Record<string, ToolBehaviour>;
}

/** How the sandbox's `fetch` is configured for the case. */
export type CaseOutbound =
  /** Leave the option undefined (construction default). */
  | 'default'
  /** `null`: blocked. */
  | 'blocked'
  /** A host function answering every fetch with this response, echoing the request in headers. */
  | { respond: { status?: number; body?: string; headers?: Record<string, string> } };

/**
 * A module of the `modules` map. Upstream takes ES module source text only; the object kinds are
 * the native contract's (`ModuleSource`), so a case using them cannot run on the reference.
 */
type CaseModule = string | { js: string } | { cjs: string } | { text: string } | { json: unknown };

export interface CaseOptions {
  connectors?: CaseConnector[];
  modules?: Record<string, CaseModule>;
  timeout?: number;
  outbound?: CaseOutbound;
  countHostWaits?: boolean;
  /** Pass the first provider's tools as a bare record instead of a providers array (the deprecated form). */
  bareRecord?: boolean;
}

/** A matcher where exactness would be dishonest. */
export type Matcher =
  /** A regular expression (JavaScript syntax, no slashes) the string must match. */
  | { match: string }
  /** Any value, including absence. */
  | { any: true }
  /** The field is absent from the normalized outcome (e.g. `result` of a run that returned `undefined`). */
  | { absent: true };

/** The normalized outcome of one side: a JSON round trip of what `execute` produced. */
export interface Outcome {
  result?: unknown;
  error?: string;
  logs?: string[];
  /** The message of a rejection that crossed `execute`. */
  threw?: string;
}

/**
 * `expect` holds a value or a matcher per field; matchers may also stand anywhere inside a value.
 * `result` and `logs` left out are not compared; `error` and `threw` left out must be absent, so an
 * unexpected failure never passes (write `error: {any: true}` to allow any).
 */
export type Expectation = {
  result?: unknown;
  error?: string | Matcher;
  logs?: Array<string | Matcher> | Matcher;
  threw?: string | Matcher;
};

/** The sides a case can run on: ours in-process, ours over a daemon, and one per reference column. */
export const SIDE_NAMES = ['ours', 'ours-remote', '0.2.2', '0.3.8', '0.4.4', 'latest'] as const;
export type SideName = (typeof SIDE_NAMES)[number];

/** The reference columns, oldest first. */
export const REFERENCE_COLUMNS = ['0.2.2', '0.3.8', '0.4.4', 'latest'] as const satisfies readonly SideName[];

export interface SkipOn {
  /** Column names, e.g. `["0.2.2"]`, or `ours`. */
  versions: SideName[];
  reason: string;
  /**
   * `false`: the case must not run on these columns at all, not even as the matrix's stale-skip
   * probe (a spin would wedge `wrangler dev`). Default: probed, so a stale reason fails the run.
   */
  probe?: false;
}

export interface Case {
  id: string;
  description: string;
  features: string[];
  code: string;
  providers?: CaseProvider[];
  options?: CaseOptions;
  expect?: Expectation;
  /** `false`: the reference cannot run this case; `reason` says why. */
  reference?: boolean;
  reason?: string;
  skipOn?: SkipOn[];
}

/** A case with where it came from, for error messages and test names. */
export interface LoadedCase extends Case {
  file: string;
  line: number;
}

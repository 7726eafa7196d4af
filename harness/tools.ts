/**
 * What every side (ours, ours over a daemon, the reference worker, which bundles this file) does
 * alike around `execute`: the host functions a case declares, and the outcome's normalization. A
 * declared behaviour therefore cannot mean two things across a diff. Runtime-neutral.
 */
import { formatToolNotFound, messageOf } from '../src/protocol/index.js';
import type { CaseConnector, CaseOutbound, CaseProvider, Outcome, SpecialValue, ToolBehaviour } from './case-model.js';

type ToolFunction = (...args: unknown[]) => Promise<unknown>;

/** The provider shape every upstream release accepts (`positionalArgs` only matters to 0.2.2). */
export interface MaterializedProvider {
  name: string;
  fns: Record<string, ToolFunction>;
  positionalArgs?: boolean;
  proxySource?: string;
  prelude?: string;
}

/** What a connector's `callTool(method, args)` runs. */
export type ConnectorCall = (method: string, args: unknown) => Promise<unknown>;

export interface MaterializedConnector {
  name: string;
  callTool: ConnectorCall;
}

export const DEFAULT_PROVIDER_NAME = 'codemode';

const CONTROL_KEY = '__codemode_control__';

/**
 * What one execution's host functions share, so `count` starts from zero on every run, and
 * `latch` and `peak` see only that execution's calls.
 */
interface Counters {
  counts: Map<string, number>;
  /** Calls of a `peak` tool running now, and the most that ran at once. */
  running: Map<string, number>;
  peaks: Map<string, number>;
  /** The execution's one latch: whether a call opened it, and the calls waiting at it. */
  latch: { open: boolean; waiting: Array<() => void> };
}

function freshCounters(): Counters {
  return { counts: new Map(), running: new Map(), peaks: new Map(), latch: { open: false, waiting: [] } };
}

/**
 * Where an execution's host functions note each call as it starts (`<namespace>.<tool>`), for a
 * case that sets `recordCalls`.
 */
export type CallRecord = string[];

/**
 * How long a side waits after `execute()` settled before it reads the record. A call the program
 * sent before its result was taken is already in flight then, and may reach the host just after
 * (upstream's usually does); half a second is a hundred times what that takes on a loaded machine.
 */
const CALLS_SETTLE_MS = 500;

/** The record, once a call already in flight when `execute()` settled has had time to arrive. */
export async function settledCalls(record: CallRecord): Promise<string[]> {
  await new Promise((resolve) => setTimeout(resolve, CALLS_SETTLE_MS));
  return [...record];
}

function behave(behaviour: ToolBehaviour, key: string, counters: Counters, record?: CallRecord): ToolFunction {
  return async (...args: unknown[]) => {
    record?.push(key);
    if ('echo' in behaviour) return args;
    if ('returns' in behaviour) return structuredClone(behaviour.returns);
    if ('add' in behaviour) return args.reduce<unknown>((sum, value) => (sum as number) + (value as number), 0);
    if ('throws' in behaviour) throw new Error(behaviour.throws);
    if ('throwsValue' in behaviour) throw structuredClone(behaviour.throwsValue);
    if ('delay' in behaviour) {
      await new Promise((resolve) => setTimeout(resolve, behaviour.delay));
      return behaviour.then ? behave(behaviour.then, key, counters)(...args) : args;
    }
    if ('bytes' in behaviour) {
      const bytes = Uint8Array.from(behaviour.bytes);
      return behaviour.as === 'ArrayBuffer' ? bytes.buffer : bytes;
    }
    if ('count' in behaviour) {
      const next = (counters.counts.get(key) ?? 0) + 1;
      counters.counts.set(key, next);
      return next;
    }
    if ('latch' in behaviour) {
      const latch = counters.latch;
      if (behaviour.latch === 'wait') {
        if (!latch.open) await new Promise<void>((resolve) => latch.waiting.push(resolve));
        return true;
      }
      const released = latch.waiting.length;
      latch.open = true;
      for (const resolve of latch.waiting.splice(0)) resolve();
      return released;
    }
    if ('peak' in behaviour) {
      const running = (counters.running.get(key) ?? 0) + 1;
      counters.running.set(key, running);
      counters.peaks.set(key, Math.max(counters.peaks.get(key) ?? 0, running));
      await new Promise((resolve) => setTimeout(resolve, behaviour.peak));
      counters.running.set(key, (counters.running.get(key) ?? 1) - 1);
      return counters.peaks.get(key);
    }
    if ('inspect' in behaviour) return args.map(inspectValue);
    if ('pause' in behaviour) return { [CONTROL_KEY]: 'pause' };
    if ('controlError' in behaviour) return { [CONTROL_KEY]: 'error', message: behaviour.controlError };
    if ('returnsSpecial' in behaviour) return SPECIAL_VALUES[behaviour.returnsSpecial]();
    if ('inspectDeep' in behaviour) return args.map(revealBinaries);
    throw new Error(`Unknown tool behaviour ${JSON.stringify(behaviour)}`);
  };
}

/** Values YAML cannot write, each built fresh on every call, like `returns`. */
const SPECIAL_VALUES: Record<SpecialValue, () => unknown> = {
  undefined: () => undefined,
  bigint: () => 10n,
  date: () => new Date(0),
  map: () => new Map([['k', 1]]),
  set: () => new Set([1, 2]),
  nan: () => NaN,
  int16array: () => new Int16Array([258]),
  dataview: () => new DataView(Uint8Array.from([7, 8, 9]).buffer),
  'nested-binary': () => ({ b: Uint8Array.from([1, 2]), list: [Uint8Array.from([3]).buffer] }),
};

/** The bytes of an ArrayBuffer or of a view's window onto one, as numbers. */
function bytesOf(value: ArrayBuffer | ArrayBufferView): number[] {
  return ArrayBuffer.isView(value)
    ? Array.from(new Uint8Array(value.buffer, value.byteOffset, value.byteLength))
    : Array.from(new Uint8Array(value));
}

/**
 * The value with every binary at any depth replaced by `{binary: brand, bytes}`, so a JSON
 * round trip keeps what the host function actually received.
 */
function revealBinaries(value: unknown): unknown {
  if (value instanceof ArrayBuffer || ArrayBuffer.isView(value))
    return { binary: Object.prototype.toString.call(value).slice(8, -1), bytes: bytesOf(value) };
  if (Array.isArray(value)) return value.map(revealBinaries);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, nested]) => [key, revealBinaries(nested)]));
  }
  return value;
}

/** `typeof`, the brand, and a JSON-safe view of one argument as the host function received it. */
function inspectValue(value: unknown): { type: string; tag: string; value: unknown } {
  const tag = Object.prototype.toString.call(value).slice(8, -1);
  let view: unknown = value;
  if (value instanceof ArrayBuffer || ArrayBuffer.isView(value)) view = bytesOf(value);
  else if (value === undefined || typeof value === 'bigint' || typeof value === 'function') view = String(value);
  return { type: typeof value, tag, value: view };
}

/** Fresh functions for one execution; each call is noted in `record` when one is given. */
export function materializeProviders(
  providers: readonly CaseProvider[] | undefined,
  record?: CallRecord,
): MaterializedProvider[] {
  const counters = freshCounters();
  return (providers ?? []).map(({ name = DEFAULT_PROVIDER_NAME, tools, ...rest }) => {
    const fns: Record<string, ToolFunction> = {};
    for (const [tool, behaviour] of Object.entries(tools))
      fns[tool] = behave(behaviour, `${name}.${tool}`, counters, record);
    // positionalArgs, proxySource and prelude pass as the case wrote them.
    return { ...rest, name, fns };
  });
}

/** A connector's `callTool`: an unknown method throws the same text as an unknown tool, and is not noted. */
export function materializeConnectors(
  connectors: readonly CaseConnector[] | undefined,
  record?: CallRecord,
): MaterializedConnector[] {
  const counters = freshCounters();
  return (connectors ?? []).map((connector) => ({
    name: connector.name,
    callTool: async (method, args) => {
      const behaviour = Object.hasOwn(connector.tools, method) ? connector.tools[method] : undefined;
      if (!behaviour) throw new Error(formatToolNotFound(method));
      return behave(behaviour, `${connector.name}.${method}`, counters, record)(args);
    },
  }));
}

/**
 * The host function for `outbound: {respond}`: it answers every request with the declared
 * response and reports what it saw in `x-seen-method` and `x-seen-url`.
 */
export function materializeOutbound(
  outbound: CaseOutbound | undefined,
): ((request: Request) => Promise<Response>) | null | undefined {
  if (outbound === undefined || outbound === 'default') return undefined;
  if (outbound === 'blocked') return null;
  const { status = 200, body = '', headers = {} } = outbound.respond;
  return async (request) =>
    new Response(body, {
      status,
      headers: { ...headers, 'x-seen-method': request.method, 'x-seen-url': request.url },
    });
}

/**
 * What `execute` resolved to, as a JSON round trip, so a `Map` or a `Set` collapses the same way
 * on every side and `undefined` members drop out alike. A BigInt is made visible (`10n`), and a
 * value JSON cannot carry at all is reported instead of failing the round trip.
 */
export function normalizeResult(raw: unknown): Outcome {
  try {
    const bigintsShown = (_key: string, value: unknown) => (typeof value === 'bigint' ? `${value}n` : value);
    return JSON.parse(JSON.stringify(raw, bigintsShown) ?? '{}') as Outcome;
  } catch (error) {
    return { error: `[normalizeResult] the outcome could not be serialized: ${messageOf(error)}` };
  }
}

/** The outcome of an `execute` that rejected. */
export function normalizeThrow(error: unknown): Outcome {
  return { threw: messageOf(error) };
}

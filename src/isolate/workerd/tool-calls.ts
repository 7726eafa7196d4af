/**
 * The tool calls of a run's dynamic worker: the provider namespaces, their tool functions, and
 * the caps on what the calls still waiting on the host hold.
 */
import { type BinaryCodec, createBinaryCodec } from '../../protocol/codec.js';
import { sandboxText } from '../contract/texts.js';
import { TOOL_CALL_STALL_MS } from '../contract/tool-call-stall.js';
import { fromCaller } from './console-capture.js';
import {
  $apply,
  $clearTimeout,
  $Error,
  $get,
  $hasOwn,
  $Promise,
  $Proxy,
  $promiseReject,
  $String,
  $setTimeout,
  $TypeError,
  utf8Bytes,
} from './intrinsics.js';
import { limits } from './sandbox-limits.js';
import type { SandboxBridge } from './types.js';

const $globalThis = globalThis;

function callGlobalJson(method: 'stringify' | 'parse', args: unknown[]): unknown {
  const json = $get($globalThis, 'JSON');
  return $apply($get(json, method), json, args);
}

// The protocol's binary codec, over captured intrinsics, so user code that replaces btoa or
// String on globalThis cannot break tool calls, nor can a provider named JSON, btoa or String (a
// namespace binding shadows only the program's scope). JSON alone is read from globalThis at each
// call, as upstream's codec reads it: a program that replaces JSON.stringify (to carry BigInts,
// say) changes what its tool calls send, and a replaced JSON.parse what they receive. That reaches
// only the program's own run, since every run has a process of its own, and the host parses what
// it receives itself.
const codec: BinaryCodec = createBinaryCodec({
  JSON: {
    stringify: (value: unknown, replacer?: unknown) => callGlobalJson('stringify', [value, replacer]) as string,
    parse: (text: string, reviver?: unknown) => callGlobalJson('parse', [text, reviver]),
  },
  btoa,
  atob,
  String: { fromCharCode: String.fromCharCode },
  Array: { from: Array.from, isArray: Array.isArray },
  ArrayBuffer,
  Uint8Array,
});

/** Set by every `evaluate` and `invoke` before user code can call a tool. */
let bridge: SandboxBridge;

export function useBridge(next: SandboxBridge): void {
  bridge = next;
}

/**
 * The execution's tool calls waiting on the host, and the UTF-8 bytes of their arguments, which
 * the host holds until it answers: bounded by `limits.maxConcurrentToolCalls` and
 * `limits.maxConcurrentToolArgsBytes`. A call past either bound is not refused: it is held here,
 * encoded, until earlier calls answer (backpressure), so a program that maps a thousand items to
 * tool calls at once still makes every call, in the order it made them, as upstream does.
 */
const waiting = { calls: 0, bytes: 0 };

/*
 * The count bound opens by another `limits.maxConcurrentToolCalls` whenever the calls waiting on
 * the host all go unanswered for `TOOL_CALL_STALL_MS` while calls are held. Upstream sends every
 * call at once, so a program may make calls that wait on a later one (a latch, a long poll, a final
 * commit): held behind them, that call would never leave. A flood whose calls answer never stalls,
 * and keeps the bound; one whose calls wait opens it step by step, each step costing the member its
 * calls' RPCs (about 26 KB a call, measured), held to `pool.memoryLimitMb` as any other memory.
 */
/** Calls the count bound has opened by, for stalls, since no call was last held. */
let opened = 0;
/** Answers received so far: a stall is a watch that saw none arrive. */
let answers = 0;
let stallWatch: ReturnType<typeof setTimeout> | undefined;

/** A call held in the sandbox: what it sends, over the bridge of the run that made it. */
interface HeldCall {
  via: SandboxBridge;
  provider: string;
  tool: string;
  argsJson: string;
  size: number;
  release: (answer: Promise<string>) => void;
}

/**
 * The calls held, first made first; indexed by hand (`held[heldTail] = …`), so a program that
 * replaces `Array.prototype.push` or `shift` cannot reorder or drop them.
 */
let held: (HeldCall | undefined)[] = [];
let heldHead = 0;
let heldTail = 0;

interface SentCall {
  answer: Promise<string>;
  size: number;
}

/** Whether a call of `size` bytes may leave now, beside the calls waiting. */
function fits(size: number): boolean {
  if (waiting.calls >= limits.maxConcurrentToolCalls + opened) return false;
  return waiting.calls === 0 || waiting.bytes + size <= limits.maxConcurrentToolArgsBytes;
}

/** Sends a call that fits, counted as waiting until `answered`. */
function dispatch(via: SandboxBridge, provider: string, tool: string, argsJson: string, size: number): Promise<string> {
  waiting.calls += 1;
  waiting.bytes += size;
  try {
    return via.call(provider, tool, argsJson);
  } catch (error) {
    // The bridge refused it (a held call whose run is over): the call fails when awaited.
    return $apply($promiseReject, $Promise, [error]);
  }
}

/**
 * Sends one tool call: the arguments as codec JSON, encoded now (what the call sends is what the
 * arguments were when it was made, as upstream's), checked against their cap before anything is
 * sent. A call that does not fit beside the calls waiting, or that would overtake a held one, is
 * held. Counts the call as waiting once it leaves; `answered` ends that.
 */
function send(provider: string, tool: string, args: unknown[]): SentCall {
  const encoded: unknown = codec.stringify(args);
  // A program's own JSON.stringify may return anything; the host gets text, as upstream's host
  // makes text of whatever it is sent before parsing it.
  const argsJson = typeof encoded === 'string' ? encoded : $String(encoded);
  const size = utf8Bytes(argsJson);
  if (size > limits.maxToolArgsBytes) throw new $Error(sandboxText.toolArgsTooLarge(size, limits.maxToolArgsBytes));
  // Alone on the way it would still not fit: holding it would hold it forever.
  if (size > limits.maxConcurrentToolArgsBytes) {
    throw new $Error(sandboxText.toolArgsOverWaitingCap(size, limits.maxConcurrentToolArgsBytes));
  }
  const via = bridge;
  if (heldHead === heldTail && fits(size)) return { answer: dispatch(via, provider, tool, argsJson, size), size };
  const answer = new $Promise<string>((release) => {
    held[heldTail] = { via, provider, tool, argsJson, size, release };
    heldTail += 1;
  });
  watchStall();
  return { answer, size };
}

/** While calls are held: opens the count bound when no call answered during a watch. */
function watchStall(): void {
  if (stallWatch !== undefined) return;
  const answersBefore = answers;
  stallWatch = $setTimeout(() => {
    stallWatch = undefined;
    if (heldHead === heldTail) return;
    // Opened only while the count is what holds them: the byte bound protects the host's memory.
    if (answers === answersBefore && waiting.calls >= limits.maxConcurrentToolCalls + opened) {
      opened += limits.maxConcurrentToolCalls;
      releaseHeld();
    }
    if (heldHead !== heldTail) watchStall();
  }, TOOL_CALL_STALL_MS);
}

/** Lets held calls leave, first made first, while they fit. */
function releaseHeld(): void {
  for (;;) {
    const next = held[heldHead];
    if (next === undefined || !fits(next.size)) break;
    held[heldHead] = undefined;
    heldHead += 1;
    next.release(dispatch(next.via, next.provider, next.tool, next.argsJson, next.size));
  }
  if (heldHead === heldTail) {
    held = [];
    heldHead = 0;
    heldTail = 0;
    opened = 0;
    if (stallWatch !== undefined) $clearTimeout(stallWatch);
    stallWatch = undefined;
  }
}

function answered(size: number): void {
  answers += 1;
  waiting.calls -= 1;
  waiting.bytes -= size;
  releaseHeld();
}

/** What the sandbox makes of an answer's envelope: its result, or a throw of its error. */
function readEnvelope(envelopeJson: string): unknown {
  const envelope = codec.parse(envelopeJson);
  if (envelope !== null && typeof envelope === 'object') {
    if ('error' in envelope && envelope.error) throw new $Error($String(envelope.error));
    return 'result' in envelope ? envelope.result : undefined;
  }
  return undefined;
}

/**
 * One tool of one namespace, shaped as upstream's: an anonymous async arrow that awaits the answer
 * once, so a call settles in the same microtask turn as upstream's and `constructor.name` is
 * `AsyncFunction`. A throw carries the caller's stack, not the harness's frames.
 */
function toolFunction(provider: string, tool: string, positional: boolean): (...args: unknown[]) => Promise<unknown> {
  const self: { fn: (...args: unknown[]) => Promise<unknown> } = { fn: async () => undefined };
  self.fn = async (...args) => {
    let sent: SentCall | undefined;
    try {
      sent = send(provider, tool, positional ? args : [args[0] ?? {}]);
      return readEnvelope(await sent.answer);
    } catch (error) {
      throw fromCaller(error, self.fn);
    } finally {
      if (sent !== undefined) answered(sent.size);
    }
  };
  return self.fn;
}

type ToolCall = (tool: unknown, ...args: unknown[]) => Promise<unknown>;

/** One provider namespace: own members first, then every other string key dispatches by name. */
export function namespace(name: string, positional: boolean, factory: ((call: ToolCall) => unknown) | null): object {
  const call: ToolCall = (tool, ...args) => toolFunction(name, $String(tool), positional)(...args);
  let target: object = {};
  if (factory !== null) {
    const made = factory(call);
    if (made === null || (typeof made !== 'object' && typeof made !== 'function')) {
      throw new $TypeError(sandboxText.proxySourceNotObject(name));
    }
    target = made;
  }
  return new $Proxy(target, {
    get(object, key) {
      if ($hasOwn(object, key)) return $get(object, key);
      // `then` too: a namespace is never a thenable, so `await ns` and `return ns` settle.
      if (typeof key !== 'string' || key === 'then') return undefined;
      return toolFunction(name, key, positional);
    },
  });
}

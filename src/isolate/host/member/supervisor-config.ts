/**
 * The workerd config of one pool member, as capnp text. Every module and binding is inline, so the
 * config is one file that can be deleted as soon as workerd is listening.
 */

import { relayCodec } from '../../contract/relay-frame.js';
import {
  ENTRY_MODULE,
  HARNESS_MODULE,
  LIMITS_MODULE,
  SANDBOX_COMPATIBILITY_DATE,
  SANDBOX_COMPATIBILITY_FLAGS,
} from '../../contract/sandbox-constants.js';
import type { SandboxLimits, SupervisorSettings } from '../../contract/sandbox-settings.js';
import { type IsolateLimits, MAX_OUTCOME_RPC_BYTES, maxSupervisorFrameBytes } from '../options.js';
import type { SandboxSources } from '../sandbox/sandbox-sources.js';
import { HEAP_TRACE_FLAGS } from './heap-trace.js';

/** The socket the host connects to; named in the control-fd `listen` event. */
export const CONTROL_SOCKET = 'control';

/** A capnp text-format string literal. */
export function capnpString(text: string): string {
  let out = '"';
  for (const char of text) {
    const code = char.codePointAt(0)!;
    if (char === '"') out += '\\"';
    else if (char === '\\') out += '\\\\';
    else if (char === '\n') out += '\\n';
    else if (char === '\r') out += '\\r';
    else if (char === '\t') out += '\\t';
    else if (code < 0x20 || code === 0x7f) out += `\\x${code.toString(16).padStart(2, '0')}`;
    else out += char;
  }
  return `${out}"`;
}

/**
 * The sandbox's sources as capnp literals, escaped once per process: they are the same for every
 * member, and escaping them (50 kB a character at a time) took 1.3 to 4 ms of the host's CPU a
 * start on the loaded 2-core machine of docs/benchmarks.md.
 */
const escapedSources = new WeakMap<SandboxSources, { supervisor: string; harness: string }>();

function escaped(sources: SandboxSources): { supervisor: string; harness: string } {
  let literals = escapedSources.get(sources);
  if (literals === undefined) {
    literals = { supervisor: capnpString(sources.supervisor), harness: capnpString(sources.harness) };
    escapedSources.set(sources, literals);
  }
  return literals;
}

export interface SupervisorConfigInput {
  sources: SandboxSources;
  /** Proves to the supervisor that a connection comes from the host that spawned it. */
  token: string;
  heapLimitMb: number;
  limits: IsolateLimits;
  /** The executor's outbound relay (relay/outbound-server.ts): the Unix socket it listens on, and its token. */
  relay: { socket: string; token: string };
  /** The Unix socket the supervisor listens on for the host (the member's private directory). */
  controlSocket: string;
}

export function buildSupervisorConfig({
  sources,
  token,
  heapLimitMb,
  limits,
  relay,
  controlSocket,
}: SupervisorConfigInput): string {
  const sandbox: SandboxLimits = {
    maxLogLines: limits.maxLogLines,
    maxLogBytes: limits.maxLogBytes,
    maxToolArgsBytes: limits.maxToolArgsBytes,
    maxConcurrentToolCalls: limits.maxConcurrentToolCalls,
    maxConcurrentToolArgsBytes: limits.maxConcurrentToolArgsBytes,
  };
  const settings: SupervisorSettings = {
    token,
    tokenHeader: relayCodec.tokenHeader,
    hostToken: relay.token,
    compatibilityDate: SANDBOX_COMPATIBILITY_DATE,
    compatibilityFlags: [...SANDBOX_COMPATIBILITY_FLAGS],
    entryModule: ENTRY_MODULE,
    harnessModule: HARNESS_MODULE,
    limitsModule: LIMITS_MODULE,
    maxFrameBytes: maxSupervisorFrameBytes(limits),
    maxOutcomeRpcBytes: MAX_OUTCOME_RPC_BYTES,
    maxResultBytes: limits.maxResultBytes,
    maxRequestBodyBytes: limits.maxRequestBodyBytes,
    maxConcurrentFetches: limits.maxConcurrentFetches,
    sandbox,
  };
  const literals = escaped(sources);
  return `using Workerd = import "/workerd/workerd.capnp";

const config :Workerd.Config = (
  services = [
    (name = "supervisor", worker = .supervisor),
    (name = "host", external = (address = ${capnpString(`unix:${relay.socket}`)}, http = ())),
  ],
  sockets = [
    (name = ${capnpString(CONTROL_SOCKET)}, address = ${capnpString(`unix:${controlSocket}`)}, http = (), service = "supervisor"),
  ],
  # Per isolate: a memory bomb aborts the process fast instead of growing for seconds. The GC
  # trace tells the host when a heap is full (heap-trace.ts).
  v8Flags = [ ${[`--max-old-space-size=${heapLimitMb}`, ...HEAP_TRACE_FLAGS].map(capnpString).join(', ')} ],
);

const supervisor :Workerd.Worker = (
  modules = [
    (name = "supervisor.js", esModule = ${literals.supervisor}),
  ],
  compatibilityDate = ${capnpString(SANDBOX_COMPATIBILITY_DATE)},
  compatibilityFlags = [ "enable_ctx_exports" ],
  bindings = [
    (name = "LOADER", workerLoader = ()),
    (name = "HOST", service = "host"),
    (name = "HARNESS", text = ${literals.harness}),
    (name = "SETTINGS", json = ${capnpString(JSON.stringify(settings))}),
  ],
);
`;
}

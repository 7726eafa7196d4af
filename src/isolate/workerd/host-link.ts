/**
 * The supervisor's one link to the host: the WebSocket the host connected (one at most), the
 * frames sent on it, and the tool calls put to the host that wait for its answer. A run, in a
 * request context of its own, reaches it only through its `Bridge`, an RPC target living in the
 * socket's context (supervisor.ts says why).
 */
import { RpcTarget } from 'cloudflare:workers';
import type { LogLevel } from '../../protocol/types.js';
import type { SupervisorMessage } from '../contract/messages.js';
import type { SupervisorSettings } from '../contract/sandbox-settings.js';
import { supervisorText } from '../contract/texts.js';
import { overFrameCap } from './outcome-frames.js';
import type { AskId, RunId } from './types.js';

/** The host's socket, once it connected. */
let socket: WebSocket | null = null;
let nextAsk = 1;
/** ask id → the resolver of a tool call put to the host. */
const asks = new Map<AskId, { resolve: (envelope: string) => void; reject: (error: Error) => void }>();

export function send(message: SupervisorMessage): void {
  if (socket !== null) socket.send(JSON.stringify(message));
}

/**
 * A run's way to the host, living in the socket's context: its tool calls and its outcome. One
 * per execution; an invocation of a retained execution reuses its execution's bridge, renamed
 * to the invocation's run so the host can attribute every call.
 */
export class Bridge extends RpcTarget {
  #run: RunId;
  readonly #settings: SupervisorSettings;

  constructor(run: RunId, settings: SupervisorSettings) {
    super();
    this.#run = run;
    this.#settings = settings;
  }

  rename(run: RunId): void {
    this.#run = run;
  }

  /**
   * The run's program has started (the harness's `begin`): the host's clock of its `timeout`
   * starts now, not at hand-off, so the time the process took to load the run's worker is not
   * the program's. Never throws: the harness does not wait for it.
   */
  started(): void {
    if (socket !== null) socket.send(JSON.stringify({ t: 'started', run: this.#run } satisfies SupervisorMessage));
  }

  /** Puts a tool call to the host; resolves with the envelope it answers. */
  call(provider: string, tool: string, args: string): Promise<string> {
    const run = this.#run;
    return new Promise((resolve, reject) => {
      if (socket === null) {
        reject(new Error(supervisorText.hostGone));
        return;
      }
      const ask = nextAsk++ as AskId;
      const text = JSON.stringify({ t: 'call', run, ask, provider, tool, args } satisfies SupervisorMessage);
      const size = overFrameCap(text, this.#settings);
      if (size !== null) {
        reject(new Error(supervisorText.callTooLarge(size, this.#settings.maxFrameBytes)));
        return;
      }
      asks.set(ask, { resolve, reject });
      socket.send(text);
    });
  }

  /** A console line, as it is captured: sent at once, since the host's socket keeps frames in order. */
  line(index: number, level: LogLevel, message: string): void {
    if (socket !== null)
      socket.send(JSON.stringify({ t: 'line', run: this.#run, index, level, message } satisfies SupervisorMessage));
  }

  /**
   * A run's `done` or `cancelled`, already JSON: it crosses from the run's context as one string
   * (cheaper than the value's tree, and bounded by workerd's RPC limit) and goes out as it is.
   */
  report(text: string): void {
    if (socket !== null) socket.send(text);
  }
}

/** The host answered a tool call. */
export function answer(ask: AskId, envelope: string): void {
  const pending = asks.get(ask);
  if (pending === undefined) return;
  asks.delete(ask);
  pending.resolve(envelope);
}

/** Whether a host is connected: the supervisor accepts one socket only. */
export function hostConnected(): boolean {
  return socket !== null;
}

export function connectHost(server: WebSocket): void {
  socket = server;
}

/** The host's socket closed: every tool call still waiting for an answer fails. */
export function disconnectHost(): void {
  socket = null;
  for (const pending of asks.values()) pending.reject(new Error(supervisorText.hostGone));
  asks.clear();
}

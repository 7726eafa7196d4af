/**
 * Bounds on the capnweb session of one connection. capnweb keeps, per session, an export table
 * (every call the client pushed, until it releases the answer; every stub handed out) and an
 * import table (every stub the client passed), and bounds neither; it also accepts `pipe` and
 * `stream` messages, each a live stream the client may leave open. A client could grow them until
 * the daemon's heap gave out (issue 22, finding 4). So the transport asks this guard about each
 * message: `pipe` and `stream` are refused (the executor protocol passes no streams), and the
 * tables are counted through `getStats()` every few messages or bytes, so the count costs little
 * and no table grows past its bound by more than what those messages could add.
 */
import type { DropCause } from '../observe/metrics.js';
import { formatRpcMessageRefused, formatRpcTableFull, NOT_AN_RPC_MESSAGE } from '../texts.js';

export interface RpcTableLimits {
  maxRpcExports: number;
  maxRpcImports: number;
}

/** Why the guard closed a connection: the metrics cause and the logged reason. */
export interface RpcViolation {
  cause: DropCause;
  reason: string;
}

interface SessionStats {
  getStats(): { imports: number; exports: number };
}

/** The tables are counted at least this often, in messages and in bytes received. */
const CHECK_EVERY_MESSAGES = 32;
const CHECK_EVERY_BYTES = 64 * 1024;

/** capnweb writes each message with JSON.stringify: an array whose first element is its kind. */
const MESSAGE_KIND = /^\["([a-z]+)"/;
/** Kinds that open a stream; nothing in the executor protocol sends one. */
const STREAM_KINDS = new Set(['pipe', 'stream']);

export class RpcGuard {
  readonly #limits: RpcTableLimits;
  #session: SessionStats | undefined;
  #messages = 0;
  #bytes = 0;

  constructor(limits: RpcTableLimits) {
    this.#limits = limits;
  }

  /** The session whose tables are counted; it is made after its transport. */
  attach(session: SessionStats): void {
    this.#session = session;
  }

  /** Judges one incoming message before the session reads it. */
  admit(text: string, size: number): RpcViolation | undefined {
    const kind = MESSAGE_KIND.exec(text)?.[1];
    if (kind === undefined) return { cause: 'rpc_message', reason: NOT_AN_RPC_MESSAGE };
    if (STREAM_KINDS.has(kind)) return { cause: 'rpc_message', reason: formatRpcMessageRefused(kind) };
    this.#bytes += size;
    return undefined;
  }

  /**
   * Called each time the session asks for its next message, so once it has read the previous one
   * (messages may wait in the transport's queue): counts the tables when enough was read or
   * received since the last count.
   */
  due(): RpcViolation | undefined {
    this.#messages += 1;
    if (this.#messages < CHECK_EVERY_MESSAGES && this.#bytes < CHECK_EVERY_BYTES) return undefined;
    this.#messages = 0;
    this.#bytes = 0;
    const stats = this.#session?.getStats();
    if (stats === undefined) return undefined;
    const { maxRpcExports, maxRpcImports } = this.#limits;
    if (stats.exports > maxRpcExports) {
      return { cause: 'rpc_exports', reason: formatRpcTableFull('export', stats.exports, maxRpcExports) };
    }
    if (stats.imports > maxRpcImports) {
      return { cause: 'rpc_imports', reason: formatRpcTableFull('import', stats.imports, maxRpcImports) };
    }
    return undefined;
  }
}

/**
 * The daemon's file descriptors against its limit (`ulimit -n`): what `--max-connections`
 * defaults to, and whether one more connection would leave the pool too few to start its
 * processes. Each connection holds one descriptor, each pool member about HOST_FDS_PER_MEMBER; a
 * daemon out of them can start no member, so it sheds connections before it gets there.
 *
 * Counting `/proc/self/fd` costs about 2 ms at a thousand descriptors, so it is not done for every
 * connection: the count is taken at most every RECOUNT_MS (every NEAR_RECOUNT_MS near the limit),
 * and between two counts the descriptors other than the daemon's sockets are taken as they were.
 */
import { readdirSync } from 'node:fs';
import { descriptorLimit, HOST_FDS_PER_MEMBER } from '../../isolate/daemon.js';

/** The most sessions a daemon takes by default, however many descriptors it may open. */
export const MAX_CONNECTIONS_CEILING = 512;
/** Descriptors kept for the daemon's own files: stdio, its listeners, its event loop, a state's files. */
export const DAEMON_FDS_RESERVED = 64;
/**
 * The descriptors a connection is shed to keep free: enough to start four pool members (a
 * replacement for a killed one, the spare, and the runs a tool call starts) beside the open ones.
 */
export const SHED_HEADROOM = 4 * HOST_FDS_PER_MEMBER;
const RECOUNT_MS = 1_000;
const NEAR_RECOUNT_MS = 100;

/**
 * The rule behind the default of `--max-connections`: half of the descriptors beyond the daemon's
 * own reserve, the other half left to the pool's processes and the sockets still in their
 * handshake; at most MAX_CONNECTIONS_CEILING, at least 1. 96 under `ulimit -n 256`, 512 from 1088.
 */
export function maxConnectionsFor(openFiles: number | undefined): number {
  if (openFiles === undefined) return MAX_CONNECTIONS_CEILING;
  return Math.max(1, Math.min(MAX_CONNECTIONS_CEILING, Math.floor((openFiles - DAEMON_FDS_RESERVED) / 2)));
}

/** The default of `--max-connections` on this host (`maxConnectionsFor` its descriptor limit). */
export function defaultMaxConnections(): number {
  return maxConnectionsFor(descriptorLimit());
}

/** The descriptors open now, or undefined where the platform does not tell. Out of them: the limit. */
function countOpen(limit: number | undefined): number | undefined {
  try {
    // The directory's own descriptor is listed too.
    return readdirSync('/proc/self/fd').length - 1;
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    return code === 'EMFILE' || code === 'ENFILE' ? limit : undefined;
  }
}

/** The descriptors open, and the limit, when one more connection would leave too few. */
export interface DescriptorShortage {
  open: number;
  limit: number;
}

export interface DescriptorSource {
  limit(): number | undefined;
  count(limit: number | undefined): number | undefined;
  now(): number;
}

const PROCESS_DESCRIPTORS: DescriptorSource = {
  limit: descriptorLimit,
  count: countOpen,
  now: () => performance.now(),
};

export class DescriptorWatch {
  readonly #source: DescriptorSource;
  #limit: number | undefined;
  /** Descriptors other than the daemon's sockets, at the last count. */
  #others = 0;
  #countedAt = Number.NEGATIVE_INFINITY;

  constructor(source: DescriptorSource = PROCESS_DESCRIPTORS) {
    this.#source = source;
    this.#limit = source.limit();
  }

  /** The limit, as last read. */
  get limit(): number | undefined {
    return this.#limit;
  }

  /** The descriptors open now: counted (for a scrape). */
  open(sockets: number): number | undefined {
    this.#recount(sockets);
    return this.#limit === undefined ? undefined : this.#others + sockets;
  }

  /**
   * With `sockets` of the daemon's open (the newest connection's included), whether fewer than
   * SHED_HEADROOM descriptors are left: then the newest connection is to be shed.
   */
  short(sockets: number): DescriptorShortage | undefined {
    const limit = this.#limit;
    if (limit === undefined) return undefined;
    const near = this.#others + sockets > limit - 2 * SHED_HEADROOM;
    if (this.#source.now() - this.#countedAt >= (near ? NEAR_RECOUNT_MS : RECOUNT_MS)) this.#recount(sockets);
    const open = this.#others + sockets;
    const known = this.#limit ?? limit;
    return known - open < SHED_HEADROOM ? { open, limit: known } : undefined;
  }

  #recount(sockets: number): void {
    this.#limit = this.#source.limit() ?? this.#limit;
    const counted = this.#source.count(this.#limit);
    this.#countedAt = this.#source.now();
    if (counted !== undefined) this.#others = Math.max(0, counted - sockets);
  }
}

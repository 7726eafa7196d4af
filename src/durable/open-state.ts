/**
 * `openDurableState`: a subset of Cloudflare's DurableObjectState for a Node host, backed by
 * SQLite files under one directory that this process alone holds until `close()`.
 */
import { accessSync, constants, existsSync } from 'node:fs';
import { resolve, sep } from 'node:path';
import { messageOf } from '../protocol/message-of.js';
import type { Durability } from './durability.js';
import { durableStateError, errnoCode, isDurableStateError } from './errors.js';
import { acquireHolderLock, type HolderLock } from './holder-lock.js';
import { refuseMissingMembers } from './missing-members.js';
import { refuseUntilAwaited, warnOnMissingExports } from './not-awaited.js';
import { stubFor } from './rpc-clone.js';
import type { SqlStorage } from './sql-storage.js';
import { ensureOwnDirectory, undoCreated } from './state-dir.js';
import { StateNode } from './state-node.js';
import {
  BACKUP_TARGET_EXISTS,
  BACKUP_TARGET_INSIDE,
  formatBackupTarget,
  formatClosed,
  formatFacetClassNotExported,
  formatFacetNameInvalid,
  formatFacetNameTooLong,
  formatFacetStartupInvalid,
  formatInvalidOption,
  formatPathUnusable,
  formatUnknownOption,
  OPTIONS_NOT_OBJECT,
} from './texts.js';

export interface OpenDurableStateOptions {
  /** The directory that holds the state; created if missing. One process holds it at a time. */
  path: string;
  /** The classes a facet may be built from, as a Worker entry exports them: `{ CodemodeRuntime }`. */
  exports: Record<string, unknown>;
  /** What a facet's class receives as `env`, as facets share their Worker's; `{}` by default. */
  env?: unknown;
  /**
   * What a commit that has returned survives. `'power-loss'` (the default): also a machine crash or
   * a power loss, as each commit waits for the disk (SQLite's `synchronous = FULL`). `'process-crash'`:
   * a close, an exit and a SIGKILL of this process, as the operating system holds what was written,
   * but not a crash of the machine (`synchronous = NORMAL`); commits then skip the wait for the disk.
   */
  durability?: Durability;
  /**
   * The most bytes each database of the state may hold: the host's own, and each facet's (a facet
   * is a Durable Object of its own, and Cloudflare bounds each). A write past it fails with
   * `STATE_SIZE_LIMIT`, and nothing stored before is harmed. 1 GiB by default.
   */
  maxStateBytes?: number;
}

/** maxStateBytes' default: 1 GiB (Cloudflare allows a SQLite-backed Durable Object 10 GB). */
const DEFAULT_MAX_STATE_BYTES = 1024 ** 3;
/** The smallest maxStateBytes: a few pages, enough for a schema. */
const MIN_MAX_STATE_BYTES = 64 * 1024;

const DURABILITIES: readonly Durability[] = ['power-loss', 'process-crash'];

/** What `facets.get`'s startup callback returns: the class of the facet. */
export interface FacetStartupOptions {
  class: unknown;
}

export interface DurableStorage {
  readonly sql: SqlStorage;
}

export interface DurableFacets {
  /** The facet `name`, built once from the startup callback's class; its methods are called as over RPC. */
  get(name: string, startup: () => FacetStartupOptions | Promise<FacetStartupOptions>): unknown;
}

/** The state of one Durable Object (the host's, or a facet's). */
export interface DurableObjectStateSubset {
  readonly storage: DurableStorage;
  readonly facets: DurableFacets;
  readonly exports: Record<string, unknown>;
}

export interface DurableState extends DurableObjectStateSubset {
  /**
   * Writes a consistent copy of the whole state (every database, facets included) to `target`, a
   * path that must not exist yet; `openDurableState({ path: target })` opens the copy. Not a
   * member of Cloudflare's DurableObjectState.
   */
  backup(target: string): Promise<void>;
  /** Closes every database and releases the path's lock; resolves once another process may open it. */
  close(): Promise<void>;
}

const OPTION_NAMES = new Set(['path', 'exports', 'env', 'durability', 'maxStateBytes']);

/** Whether the state is still open; once not, the text every further call throws. */
interface Life {
  closed: string | undefined;
}

/** Longest encoded facet name: one directory name, within every file system's 255 bytes. */
const MAX_FACET_KEY_LENGTH = 200;

export function openDurableState(options: OpenDurableStateOptions): Promise<DurableState> {
  return refuseUntilAwaited(openState(options));
}

async function openState(options: OpenDurableStateOptions): Promise<DurableState> {
  const { path, exports, env, durability, maxStateBytes } = checkOptions(options);
  const created = ensureOwnDirectory(path, path);
  let lock: HolderLock;
  try {
    accessSync(path, constants.R_OK | constants.W_OK | constants.X_OK);
    lock = await acquireHolderLock(path);
  } catch (error) {
    // A failed open leaves nothing it did not find.
    undoCreated(created);
    if (errnoCode(error) !== undefined && !isDurableStateError(error))
      throw durableStateError('STATE_PATH_UNUSABLE', formatPathUnusable(path, messageOf(error)));
    throw error;
  }
  let root: StateNode;
  try {
    root = StateNode.open(path, { statePath: path, durability, maxStateBytes, isFacet: false });
  } catch (error) {
    lock.release();
    throw error;
  }
  const life: Life = { closed: undefined };
  const rootState = buildState(root, warnOnMissingExports(exports), env, life);
  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      life.closed ??= formatClosed('this state');
      root.close();
      lock.release();
    })();
    return closing;
  };
  const backup = async (target: string): Promise<void> => {
    if (life.closed !== undefined) throw durableStateError('STATE_CLOSED', life.closed);
    const destination = resolve(target);
    if (destination === path || destination.startsWith(`${path}${sep}`))
      throw durableStateError('STATE_BACKUP_TARGET', formatBackupTarget(destination, BACKUP_TARGET_INSIDE));
    if (existsSync(destination))
      throw durableStateError('STATE_BACKUP_TARGET', formatBackupTarget(destination, BACKUP_TARGET_EXISTS));
    root.backupInto(destination);
  };
  return refuseMissingMembers('ctx', { ...rootState, backup, close }) as DurableState;
}

function buildState(
  node: StateNode,
  exports: Record<string, unknown>,
  env: unknown,
  life: Life,
): DurableObjectStateSubset {
  const stubs = new Map<string, unknown>();
  const classes = new Set(Object.values(exports));
  const facets: DurableFacets = {
    get(name, startup) {
      if (life.closed !== undefined) throw durableStateError('STATE_CLOSED', life.closed);
      if (typeof name !== 'string' || name.length === 0) throw new TypeError(formatFacetNameInvalid(name));
      const existing = stubs.get(name);
      if (existing) return existing;
      const key = facetKey(name);
      const instance = (async () => {
        const chosen = await startup();
        const facetClass = (chosen as FacetStartupOptions | undefined)?.class;
        if (typeof facetClass !== 'function') throw new TypeError(formatFacetStartupInvalid(name, chosen));
        if (!classes.has(facetClass)) throw new TypeError(formatFacetClassNotExported(name));
        const facetState = buildState(node.child(key), exports, env, life);
        return new (facetClass as new (ctx: unknown, env: unknown) => object)(
          refuseMissingMembers('ctx', facetState),
          env,
        );
      })();
      // A failed start fails every call on the stub; it must not also surface as unhandled.
      instance.catch(() => stubs.delete(name));
      const stub = stubFor(instance);
      stubs.set(name, stub);
      return stub;
    },
  };
  return {
    storage: refuseMissingMembers('ctx.storage', { sql: node.sql }),
    facets: refuseMissingMembers('ctx.facets', facets),
    exports,
  };
}

/** A facet's directory name: the name, percent-encoded, dots too, so no name can leave `facets/`. */
function facetKey(name: string): string {
  const key = encodeURIComponent(name).replace(/\./g, '%2E').replace(/\*/g, '%2A');
  if (key.length > MAX_FACET_KEY_LENGTH) throw new TypeError(formatFacetNameTooLong(name, MAX_FACET_KEY_LENGTH));
  return key;
}

function checkOptions(options: OpenDurableStateOptions): {
  path: string;
  exports: Record<string, unknown>;
  env: unknown;
  durability: Durability;
  maxStateBytes: number;
} {
  if (typeof options !== 'object' || options === null) throw new TypeError(OPTIONS_NOT_OBJECT);
  for (const name of Object.keys(options)) if (!OPTION_NAMES.has(name)) throw new TypeError(formatUnknownOption(name));
  if (typeof options.path !== 'string' || options.path.length === 0) {
    throw new TypeError(formatInvalidOption('path', 'a directory path (a non-empty string)', options.path));
  }
  if (typeof options.exports !== 'object' || options.exports === null) {
    throw new TypeError(
      formatInvalidOption('exports', 'an object of classes, such as { CodemodeRuntime }', options.exports),
    );
  }
  const durability = options.durability ?? 'power-loss';
  if (!DURABILITIES.includes(durability)) {
    throw new TypeError(
      formatInvalidOption('durability', `one of ${DURABILITIES.map((d) => `'${d}'`).join(', ')}`, options.durability),
    );
  }
  const maxStateBytes = options.maxStateBytes ?? DEFAULT_MAX_STATE_BYTES;
  if (!Number.isSafeInteger(maxStateBytes) || maxStateBytes < MIN_MAX_STATE_BYTES) {
    throw new TypeError(
      formatInvalidOption(
        'maxStateBytes',
        `a whole number of bytes, ${MIN_MAX_STATE_BYTES} or more`,
        options.maxStateBytes,
      ),
    );
  }
  return { path: resolve(options.path), exports: options.exports, env: options.env ?? {}, durability, maxStateBytes };
}

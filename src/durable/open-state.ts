/**
 * `openDurableState`: a subset of Cloudflare's DurableObjectState for a Node host, backed by
 * SQLite files under one directory that this process alone holds until `close()`.
 */
import { existsSync } from 'node:fs';
import { resolve, sep } from 'node:path';
import { messageOf } from '../protocol/message-of.js';
import { outOfDescriptors } from './descriptors.js';
import { durableStateError, errnoCode, isDurableStateError } from './errors.js';
import { claimStateDirectory } from './holder-lock.js';
import { refuseMissingMembers } from './missing-members.js';
import { refuseUntilAwaited, warnOnMissingExports } from './not-awaited.js';
import { type OpenDurableStateOptions, resolveOpenOptions } from './open-options.js';
import { stubFor } from './rpc-clone.js';
import type { SqlStorage } from './sql-storage.js';
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
  formatPathUnusable,
} from './texts.js';

export type { OpenDurableStateOptions } from './open-options.js';

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
  const { path, exports, env, durability, maxStateBytes } = resolveOpenOptions(options);
  const lock = await claimStateDirectory(path).catch((error: unknown) => {
    if (errnoCode(error) !== undefined && !isDurableStateError(error))
      throw durableStateError('STATE_PATH_UNUSABLE', formatPathUnusable(path, messageOf(error)));
    throw error;
  });
  let root: StateNode;
  try {
    // Everything below is reached through the lock's descriptor, never by the path's name again.
    root = StateNode.open(lock.root, { statePath: path, durability, maxStateBytes, isFacet: false });
  } catch (error) {
    lock.release();
    throw outOfDescriptors(error, path) ?? error;
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

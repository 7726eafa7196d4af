/**
 * `openDurableState`: a subset of Cloudflare's DurableObjectState for a Node host, backed by
 * SQLite files under one directory that this process alone holds until `close()`.
 */
import { accessSync, constants, existsSync, mkdirSync } from 'node:fs';
import { resolve, sep } from 'node:path';
import { acquireHolderLock } from './holder-lock.js';
import { refuseMissingMembers } from './missing-members.js';
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
}

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

const OPTION_NAMES = new Set(['path', 'exports', 'env']);

/** Longest encoded facet name: one directory name, within every file system's 255 bytes. */
const MAX_FACET_KEY_LENGTH = 200;

export async function openDurableState(options: OpenDurableStateOptions): Promise<DurableState> {
  const { path, exports, env } = checkOptions(options);
  try {
    mkdirSync(path, { recursive: true });
    accessSync(path, constants.R_OK | constants.W_OK | constants.X_OK);
  } catch (error) {
    throw new Error(formatPathUnusable(path, error instanceof Error ? error.message : String(error)));
  }
  const lock = await acquireHolderLock(path);
  let root: StateNode;
  try {
    root = StateNode.open(path);
  } catch (error) {
    await lock.release();
    throw error;
  }
  const life = { closed: false };
  const rootState = buildState(root, exports, env, life);
  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      life.closed = true;
      root.close();
      await lock.release();
    })();
    return closing;
  };
  const backup = async (target: string): Promise<void> => {
    if (life.closed) throw new Error(formatClosed('backup'));
    const destination = resolve(target);
    if (destination === path || destination.startsWith(`${path}${sep}`))
      throw new Error(formatBackupTarget(destination, BACKUP_TARGET_INSIDE));
    if (existsSync(destination)) throw new Error(formatBackupTarget(destination, BACKUP_TARGET_EXISTS));
    root.backupInto(destination);
  };
  return refuseMissingMembers('ctx', { ...rootState, backup, close }) as DurableState;
}

function buildState(
  node: StateNode,
  exports: Record<string, unknown>,
  env: unknown,
  life: { closed: boolean },
): DurableObjectStateSubset {
  const stubs = new Map<string, unknown>();
  const classes = new Set(Object.values(exports));
  const facets: DurableFacets = {
    get(name, startup) {
      if (life.closed) throw new Error(formatClosed('facets.get'));
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
  return { path: resolve(options.path), exports: options.exports, env: options.env ?? {} };
}

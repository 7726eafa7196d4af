/**
 * The client's half of "Modules by hash" (docs/protocol.md): a large module crosses once per
 * session, then as its hash. Before an execute, the client asks the daemon which of its large
 * modules' hashes it lacks, puts those (one module a message, so each stays under the daemon's
 * maxMessageBytes), then sends the execute naming them by hash. A daemon that does not know the
 * methods (an older one), or that no longer holds a module, gets the modules inline.
 */
import type { ModuleSource } from '../protocol/types.js';
import { isModuleNotHeld, MODULE_REF_MIN_BYTES, moduleHash } from '../wire/module-refs.js';
import type { WireExecuteRequest, WireExecuteResult } from '../wire/types.js';
import type { RemoteEndpoint } from './session.js';

/** What one session knows of its daemon's module cache. */
interface SessionModules {
  /** Hashes this session has seen the daemon hold (it may have dropped one since: then inline, once). */
  readonly held: Set<string>;
  /** The daemon has no `missingModules`: every module goes inline. */
  inlineOnly: boolean;
}

const sessions = new WeakMap<RemoteEndpoint, SessionModules>();

/** A module object's hash, once: a map from bundlePackages is frozen and passed on every call. */
const objectHashes = new WeakMap<object, string>();

/** A large module's hash; undefined for one small enough to cross inline. */
async function refOf(source: ModuleSource): Promise<string | undefined> {
  if (typeof source === 'object') {
    const known = objectHashes.get(source);
    if (known !== undefined) return known;
    if (JSON.stringify(source).length < MODULE_REF_MIN_BYTES) return undefined;
    const hash = await moduleHash(source);
    objectHashes.set(source, hash);
    return hash;
  }
  return source.length < MODULE_REF_MIN_BYTES ? undefined : moduleHash(source);
}

function stateOf(remote: RemoteEndpoint): SessionModules {
  let state = sessions.get(remote);
  if (state === undefined) {
    state = { held: new Set(), inlineOnly: false };
    sessions.set(remote, state);
  }
  return state;
}

/**
 * What capnweb answers for a method the daemon's endpoint lacks: a TypeError in these words, with
 * no `code`. Every refusal of a daemon that has the method carries an `ExecutorError` code.
 */
const MISSING_METHOD_TEXT = "'missingModules' is not a function.";

/** Whether `missingModules` failed because the daemon is older than it, and only then. */
function isOlderDaemon(error: unknown): boolean {
  if (typeof error !== 'object' || error === null || 'code' in error) return false;
  return (error as { message?: unknown }).message === MISSING_METHOD_TEXT;
}

/** Sends an execute, its large modules by hash where the daemon holds or takes them. */
export async function executeWithModuleRefs(
  remote: RemoteEndpoint,
  wire: WireExecuteRequest,
): Promise<WireExecuteResult> {
  const state = stateOf(remote);
  if (wire.modules === undefined || state.inlineOnly) return remote.execute(wire);
  const inline: Record<string, ModuleSource> = {};
  const refs: Record<string, string> = {};
  const sources = new Map<string, ModuleSource>();
  for (const [name, source] of Object.entries(wire.modules)) {
    const hash = await refOf(source);
    if (hash === undefined) inline[name] = source;
    else {
      refs[name] = hash;
      sources.set(hash, source);
    }
  }
  if (sources.size === 0) return remote.execute(wire);
  const unknown = [...sources.keys()].filter((hash) => !state.held.has(hash));
  if (unknown.length > 0) {
    let missing: string[];
    try {
      missing = await remote.missingModules(unknown);
    } catch (error) {
      if (isOlderDaemon(error)) state.inlineOnly = true;
      return remote.execute(wire);
    }
    await Promise.all(missing.map((hash) => remote.putModules({ [hash]: sources.get(hash)! })));
    for (const hash of unknown) state.held.add(hash);
  }
  const { modules: _inline, ...rest } = wire;
  const byHash: WireExecuteRequest = { ...rest, moduleRefs: refs };
  if (Object.keys(inline).length > 0) byHash.modules = inline;
  try {
    return await remote.execute(byHash);
  } catch (error) {
    if (!isModuleNotHeld(error)) throw error;
    // Dropped from the daemon's cache since: this once inline, and asked again next time.
    state.held.clear();
    return remote.execute(wire);
  }
}

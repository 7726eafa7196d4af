/**
 * The daemon's half of "Modules by hash" (docs/protocol.md): which hashes a tenant's cache lacks,
 * keeping what a client puts after checking each module against its hash, and an execute's
 * `moduleRefs` replaced by the modules they name.
 */
import { ExecutorError } from '../protocol/errors.js';
import type { ModuleSource } from '../protocol/types.js';
import { formatModuleHashMismatch, ModuleNotHeldError, moduleHash } from '../wire/module-refs.js';
import type { WireExecuteRequest } from '../wire/types.js';
import type { ModuleCache } from './module-cache.js';

/** Keeps each module under its hash, once its hash is checked; refuses the whole put on a mismatch. */
export async function putModules(
  cache: ModuleCache,
  tenant: string,
  modules: Record<string, ModuleSource>,
): Promise<void> {
  const entries = Object.entries(modules);
  const actual = await Promise.all(entries.map(([, source]) => moduleHash(source)));
  entries.forEach(([hash], index) => {
    if (actual[index] !== hash)
      throw new ExecutorError('INVALID_REQUEST', formatModuleHashMismatch(hash, actual[index]!));
  });
  // Frozen: every execute that names it runs the same object, whose text the channel escapes once.
  for (const [hash, source] of entries)
    cache.put(tenant, hash, Object.isFrozen(source) ? source : Object.freeze(source));
}

/** The request with its `moduleRefs` resolved into `modules`; a hash the tenant's cache lacks refuses it. */
export function resolveModuleRefs(cache: ModuleCache, tenant: string, wire: WireExecuteRequest): WireExecuteRequest {
  if (wire.moduleRefs === undefined) return wire;
  const { moduleRefs, ...rest } = wire;
  const modules: Record<string, ModuleSource> = { ...rest.modules };
  for (const [name, hash] of Object.entries(moduleRefs)) {
    const source = cache.get(tenant, hash);
    if (source === undefined) throw new ModuleNotHeldError(name, hash);
    modules[name] = source;
  }
  return { ...rest, modules };
}

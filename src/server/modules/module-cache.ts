/**
 * The modules a daemon holds for each tenant (docs/protocol.md, "Modules by hash"): put once by a
 * client, named by hash in later executes. Each tenant (its token) has a cache of its own, least
 * recently used out past `maxModuleCacheBytes`, so a tenant can neither read another's modules
 * (not even learn that it holds one) nor crowd them out; a module is kept only under its own hash,
 * so none can be poisoned.
 */
import { LRUCache } from 'lru-cache';
import type { ModuleSource } from '../../protocol/types.js';

export class ModuleCache {
  readonly #maxBytes: number;
  readonly #tenants = new Map<string, LRUCache<string, ModuleSource>>();

  constructor(maxBytes: number) {
    this.#maxBytes = maxBytes;
  }

  #of(tenant: string): LRUCache<string, ModuleSource> | undefined {
    if (this.#maxBytes === 0) return undefined;
    let cache = this.#tenants.get(tenant);
    if (cache === undefined) {
      cache = new LRUCache<string, ModuleSource>({
        maxSize: this.#maxBytes,
        // The JSON text's length stands for its bytes: the hash was taken over the same text.
        sizeCalculation: (source) => Math.max(1, JSON.stringify(source).length),
      });
      this.#tenants.set(tenant, cache);
    }
    return cache;
  }

  /** The hashes of `hashes` this tenant's cache does not hold. */
  missing(tenant: string, hashes: readonly string[]): string[] {
    const cache = this.#of(tenant);
    return hashes.filter((hash) => cache?.has(hash) !== true);
  }

  /** Keeps a module, already checked against its hash. One larger than the whole cache is not kept. */
  put(tenant: string, hash: string, source: ModuleSource): void {
    this.#of(tenant)?.set(hash, source);
  }

  get(tenant: string, hash: string): ModuleSource | undefined {
    return this.#of(tenant)?.get(hash);
  }
}

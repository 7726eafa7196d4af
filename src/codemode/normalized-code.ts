/**
 * Normalization remembered per code string. A host sends the same program again and again (an
 * agent retries, a runtime re-runs a snippet), and `normalizeCode` is a pure function of the
 * string whose acorn parse is the dialect's largest CPU cost per execution. The memory is bounded
 * by characters, the code and its normalized form together, so a stream of distinct large
 * programs evicts older ones instead of growing the host.
 */
import { LRUCache } from 'lru-cache';
import { normalizeCode } from './normalize.js';

/** Characters remembered by default: 1 Mi (about 2 MiB of UTF-16 at most). */
export const DEFAULT_NORMALIZE_CACHE_CHARS = 1024 * 1024;

export class NormalizedCode {
  /** Undefined when the host turned the cache off (`normalizeCacheChars: 0`). */
  readonly #cache: LRUCache<string, string> | undefined;

  constructor(maxChars: number) {
    // A pair larger than the whole budget is normalized every time, and evicts nothing.
    this.#cache =
      maxChars === 0
        ? undefined
        : new LRUCache({ maxSize: maxChars, sizeCalculation: (normalized, code) => code.length + normalized.length });
  }

  /** `normalizeCode(code)`, parsed once per string while it stays in the cache. */
  of(code: string): string {
    const cache = this.#cache;
    if (cache === undefined || typeof code !== 'string') return normalizeCode(code);
    let normalized = cache.get(code);
    if (normalized === undefined) {
      normalized = normalizeCode(code);
      cache.set(code, normalized);
    }
    return normalized;
  }
}

/**
 * Statements kept prepared between `exec` calls, keyed by their text, as workerd keeps them:
 * upstream's runtime runs the same twenty-odd statements over and over, and preparing each afresh
 * (and probing its binding count) was most of `exec`'s own cost. Only statements that read or
 * write rows are kept; any other (CREATE, ALTER, DROP, PRAGMA...) may change the schema under a
 * kept statement's columns, so running one empties the cache.
 */
import type { Statement } from 'node-sqlite3-wasm';

/** Kept statements per database; the least recently used goes first. */
const MAX_KEPT = 64;
const ROW_STATEMENT = /^(SELECT|INSERT|UPDATE|DELETE|REPLACE|WITH|VALUES)\b/i;

export interface KeptStatement {
  readonly prepared: Statement;
  /** Whether the statement takes exactly this many bindings, per count asked. */
  readonly takes: Map<number, boolean>;
}

export class StatementCache {
  readonly #kept = new Map<string, KeptStatement>();

  /** The statement kept for `text`, now the most recently used. */
  take(text: string): KeptStatement | undefined {
    const kept = this.#kept.get(text);
    if (kept) {
      this.#kept.delete(text);
      this.#kept.set(text, kept);
    }
    return kept;
  }

  /**
   * After `statement` ran well: keeps it if it is a row statement (`bareText`: its text without
   * leading comments), else finalizes it and everything kept.
   */
  keep(text: string, bareText: string, statement: KeptStatement): void {
    if (!ROW_STATEMENT.test(bareText)) {
      statement.prepared.finalize();
      this.clear();
      return;
    }
    this.#kept.set(text, statement);
    if (this.#kept.size <= MAX_KEPT) return;
    const [oldest, entry] = this.#kept.entries().next().value as [string, KeptStatement];
    this.#kept.delete(oldest);
    entry.prepared.finalize();
  }

  /** Forgets `text`'s statement, kept or not, which the caller finalizes. */
  drop(text: string): void {
    this.#kept.delete(text);
  }

  clear(): void {
    for (const { prepared } of this.#kept.values()) prepared.finalize();
    this.#kept.clear();
  }
}

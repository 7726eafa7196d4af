/**
 * Tenants of one pool: the clients a daemon serves from it (a connection, or a token where the
 * daemon has several). The daemon passes each call's tenant as a term of the call (`share` in
 * `IsolateCallOptions`, read once when the run asks for a process); the pool then holds each tenant to its share of the
 * memory budget while another tenant is present, and, before another tenant's run starves for
 * memory, evicts retained executions of a tenant over its share or else ends that tenant's newest
 * run (so runs a tenant started while alone cannot stall one that arrives). Retained executions
 * whose tenant has gone are held to the share at every reading. Calls with no `share` (an
 * IsolateExecutor used in-process) are not held to a share.
 */

/**
 * Why a tenant's retained executions were evicted: another tenant's run starved for the memory
 * they held, or their tenant had gone and they held more than its share.
 */
export type EvictionCause = 'starving' | 'gone';

/** Why a tenant's run was ended for another tenant's: what it held, and its share (in MB and percent). */
export interface ShareReclaim {
  heldMb: number;
  shareMb: number;
  percent: number;
}

/** The tenant a call runs for, and the tenancy that knows who else is present. */
export interface TenantFrame {
  readonly key: string;
  readonly tenancy: Tenancy;
}

export class Tenancy {
  /** The part of the memory budget one tenant may hold while another is present (0 to 1). */
  readonly memoryShare: number;
  /** Tenants present, with how many of their connections are open. */
  readonly #present = new Map<string, number>();

  constructor(memoryShare: number) {
    this.memoryShare = memoryShare;
  }

  /** Tenants present now. */
  get size(): number {
    return this.#present.size;
  }

  /** Whether that tenant has a connection open. */
  has(key: string): boolean {
    return this.#present.has(key);
  }

  /** A connection of that tenant opened; the returned function says it closed. */
  join(key: string): () => void {
    this.#present.set(key, (this.#present.get(key) ?? 0) + 1);
    let left = false;
    return () => {
      if (left) return;
      left = true;
      const open = (this.#present.get(key) ?? 1) - 1;
      if (open > 0) this.#present.set(key, open);
      else this.#present.delete(key);
    };
  }

  /** That tenant's frame, to pass with its calls: the runs they start count against its share. */
  frame(key: string): TenantFrame {
    return { key, tenancy: this };
  }
}

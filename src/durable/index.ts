/**
 * `@supolka/cloudflare-codemode-executor/durable`: a Durable Object state for a Node host, enough
 * for `@cloudflare/codemode`'s runtime (`createCodemodeRuntime({ ctx })`) to run unchanged. Node
 * only. See docs/durable-state.md.
 */

export type { Durability } from './durability.js';
export type { DurableStateError, DurableStateErrorCode } from './errors.js';
export type {
  DurableFacets,
  DurableObjectStateSubset,
  DurableState,
  DurableStorage,
  FacetStartupOptions,
  OpenDurableStateOptions,
} from './open-state.js';
export { openDurableState } from './open-state.js';
export type { SqlCursor, SqlStorage, SqlValue } from './sql-storage.js';

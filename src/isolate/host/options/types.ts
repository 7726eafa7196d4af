/**
 * The construction options of `IsolateExecutor` as a caller writes them, inferred from their
 * schema (schema.ts, pool-options.ts, limit-options.ts, where each option's documentation is), and
 * as resolved.
 */
import type * as v from 'valibot';
import type { OutboundFetch } from '../../../protocol/types.js';
import type { ConfinementOption } from '../confinement/detect.js';
import type { LIMIT_SCHEMA } from './limit-options.js';
import type { POOL_SCHEMA } from './pool-options.js';
import type { ISOLATE_SCHEMA } from './schema.js';

/** The pool's options (`pool.*`). */
export type IsolatePoolOptions = v.InferInput<typeof POOL_SCHEMA>;

/** The size caps of one execution (`limits.*`). Every size is in bytes (UTF-8 for text). */
export type IsolateLimitOptions = v.InferInput<typeof LIMIT_SCHEMA>;

/** What `new IsolateExecutor(options)` takes. */
export type IsolateExecutorOptions = v.InferInput<typeof ISOLATE_SCHEMA>;

/** The resolved size caps. */
export type IsolateLimits = Required<{ [K in keyof IsolateLimitOptions]: number }>;

/**
 * The options as resolved: each top-level option, and each pool option beside them. Built from
 * the option types' keys, so an option added to one of them and not resolved is a type error.
 */
export interface IsolateSettings
  extends Record<Exclude<keyof IsolateExecutorOptions, 'pool'>, unknown>,
    Record<Exclude<keyof IsolatePoolOptions, 'cgroup'>, number> {
  timeout: number;
  maxTimeout: number;
  /** The CPU-time bound of a request that sets none; `null`: none. */
  cpuTimeout: number | null;
  turnGraceMs: number;
  outbound: OutboundFetch | null;
  cgroup: string | null;
  limits: IsolateLimits;
  startupTimeoutMs: number;
  confinement: ConfinementOption;
}

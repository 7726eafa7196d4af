/**
 * What every execution's dynamic worker is loaded with. The compatibility date and flags are the
 * ones upstream's `DynamicWorkerExecutor` loads with (every release 0.1.0 … 0.5.6), so the sandbox
 * has the reference's runtime, globals, eval ban and outbound blocking.
 */
export const SANDBOX_COMPATIBILITY_DATE = '2025-06-01';
export const SANDBOX_COMPATIBILITY_FLAGS: readonly string[] = Object.freeze(['nodejs_compat']);

/** The generated main module; upstream's name, so a user module of that name is dropped alike. */
export const ENTRY_MODULE = 'executor.js';
/** The harness module every entry module imports first, as `__codemode`. */
export const HARNESS_MODULE = '__codemode_harness.js';
/** The member's caps, a JSON module the harness imports (worker/sandbox-limits.ts names it literally). */
export const LIMITS_MODULE = '__codemode_limits.json';
/** Module names the executor owns: a user module under one of them is dropped. */
export const INTERNAL_MODULES: ReadonlySet<string> = new Set([ENTRY_MODULE, HARNESS_MODULE, LIMITS_MODULE]);

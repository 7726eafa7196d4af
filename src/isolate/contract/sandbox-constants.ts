/**
 * What every execution's dynamic worker is loaded with. The compatibility date and flags are the
 * ones upstream's `DynamicWorkerExecutor` loads with (every release 0.1.0 … 0.5.6), so the sandbox
 * has the reference's runtime, globals, eval ban and outbound blocking.
 */
export const SANDBOX_COMPATIBILITY_DATE = '2025-06-01';
export const SANDBOX_COMPATIBILITY_FLAGS: readonly string[] = Object.freeze(['nodejs_compat']);

/** The generated main module; upstream's name, so a user module of that name is dropped alike. */
export const ENTRY_MODULE = 'executor.js';
/**
 * Drawn once per process, so a program can neither name the executor's own modules nor the binding
 * the entry module holds the harness under: `typeof __codemode` is "undefined" and
 * `import("__codemode_harness.js")` fails with "No such module", as upstream. The harness's exports
 * guard themselves anyway (the first `begin` wins, the race is armed once), since a program that
 * reads a harness frame off a stack can still learn the name and import it.
 */
const PRIVATE_NAME = `_${crypto.randomUUID().replaceAll('-', '')}`;
/** The harness module every entry module imports first, as `HARNESS_BINDING`. */
export const HARNESS_MODULE = `${PRIVATE_NAME}_harness.js`;
/** What the entry module binds the harness module's namespace to. */
export const HARNESS_BINDING = PRIVATE_NAME;
/** The member's caps, a JSON module the harness imports (sandbox-sources.ts names it in the harness). */
export const LIMITS_MODULE = `${PRIVATE_NAME}_limits.json`;
/**
 * The name the harness's source imports its caps under (workerd/sandbox-limits.ts), fixed at build
 * time; sandbox-sources.ts replaces it with `LIMITS_MODULE` when it reads the harness.
 */
export const LIMITS_PLACEHOLDER = '__codemode_limits.json';
/** Module names the executor owns: a user module under one of them is dropped. */
export const INTERNAL_MODULES: ReadonlySet<string> = new Set([ENTRY_MODULE, HARNESS_MODULE, LIMITS_MODULE]);

// @ts-check
/**
 * The module customization hooks the register entry installs. Node runs them on its loader thread,
 * ahead of its own resolution, for every import in the process.
 */

/** The one specifier answered here; Node resolves every other one itself. */
const WORKERS_SPECIFIER = 'cloudflare:workers';

/** The inert stand-in for it, beside this file. */
const WORKERS_STAND_IN = new URL('./cloudflare-workers.js', import.meta.url).href;

/** @type {import('node:module').ResolveHook} */
export function resolve(specifier, context, nextResolve) {
  if (specifier === WORKERS_SPECIFIER) return { url: WORKERS_STAND_IN, format: 'module', shortCircuit: true };
  return nextResolve(specifier, context);
}

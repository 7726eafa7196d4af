/**
 * A seam for tests and the benchmark: a hook the launcher awaits before each member starts, so a
 * slow start (a loaded machine, or a kind of machine whose processes start slowly) can be had on
 * any machine, in the pool's own tests and in `npm run bench -- --phase bursts`. It is keyed by a
 * symbol that no entry of the package exports, so it is no option a caller sets by name, and the
 * option checks never see it; `IsolateExecutor` reads it from the options object it is given.
 */
import type { IsolateExecutorOptions } from '../options.js';

const MEMBER_START_HOOK: unique symbol = Symbol('codemode.memberStartHook');

/** Awaited before each member's process is started; a rejection fails that start. */
export type MemberStartHook = () => Promise<void>;

/** The hook set on these options, if any. */
export function memberStartHookOf(options: unknown): MemberStartHook | undefined {
  if (typeof options !== 'object' || options === null) return undefined;
  const hook = (options as { [MEMBER_START_HOOK]?: unknown })[MEMBER_START_HOOK];
  return typeof hook === 'function' ? (hook as MemberStartHook) : undefined;
}

/** Those options, with every member's start delayed by `ms`: a slow start, for tests and the benchmark. */
export function withStartDelay(options: IsolateExecutorOptions, ms: number): IsolateExecutorOptions {
  const hook: MemberStartHook = () => new Promise((resolve) => setTimeout(resolve, ms));
  return Object.assign({ ...options }, { [MEMBER_START_HOOK]: hook });
}

/**
 * The checks that meet a host's first wrong call: a constructor argument that is no native
 * executor (upstream's constructor options, or nothing), and option names `execute()` does not
 * know, which it accepts, as upstream does, but reports once per name, with the did-you-mean every
 * other option check gives.
 */
import { describeValue } from '../protocol/describe-value.js';
import { everyKey } from '../protocol/every-key.js';
import { nearestName } from '../protocol/nearest-name.js';
import type { Executor } from '../protocol/types.js';
import { warningOnce } from '../protocol/warn-once.js';
import { constructionText, formatUnknownExecuteOption } from './texts.js';
import type { ExtendedExecuteOptions } from './types.js';

/** Upstream's `DynamicWorkerExecutor` constructor options, across the releases of the peer range. */
const UPSTREAM_CONSTRUCTOR_OPTIONS = ['loader', 'timeout', 'globalOutbound', 'modules', 'bindings'];

/** Every option `execute()` reads. A change to `ExtendedExecuteOptions` fails to compile until it is here. */
const KNOWN_OPTIONS: readonly string[] = everyKey<ExtendedExecuteOptions>({
  connectors: true,
  modules: true,
  timeout: true,
  cpuTimeout: true,
  outbound: true,
  tenant: true,
  record: true,
  onEvent: true,
  maxQueuedEvents: true,
});

/** Throws a TypeError saying what the constructor takes unless `native` has the methods it calls. */
export function assertNativeExecutor(native: unknown): asserts native is Executor {
  const candidate = native as Partial<Record<'execute' | 'dispose', unknown>> | null | undefined;
  if (typeof candidate?.execute === 'function' && typeof candidate.dispose === 'function') return;
  if (typeof native === 'object' && native !== null && !Array.isArray(native)) {
    const upstream = Object.keys(native).filter((key) => UPSTREAM_CONSTRUCTOR_OPTIONS.includes(key));
    if (upstream.length > 0) throw new TypeError(constructionText.options(upstream));
  }
  throw new TypeError(constructionText.notAnExecutor(describeValue(native)));
}

/** Past this many distinct names nothing more is reported, so a host passing ever-new keys grows no set. */
const MAX_REPORTED_NAMES = 100;

/** The option names already reported in this process (or Worker isolate). */
const warnUnknown = warningOnce('CodemodeExecutorWarning', MAX_REPORTED_NAMES);

/** Reports each option name `execute()` does not know, once per name. */
export function warnUnknownOptions(options: object | undefined): void {
  if (options === undefined || options === null) return;
  for (const name of Object.keys(options)) {
    if (KNOWN_OPTIONS.includes(name)) continue;
    warnUnknown(name, () => formatUnknownExecuteOption(name, KNOWN_OPTIONS, nearestName(name, KNOWN_OPTIONS)));
  }
}

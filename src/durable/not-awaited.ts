/**
 * Two mistakes a host makes once, caught on the state's side before upstream's runtime turns them
 * into its own text about a Vite plugin: passing `openDurableState(...)`'s Promise as `ctx` (a
 * forgotten `await`), and an `exports` that lacks the class a facet asks for.
 */
import { durableStateError } from './errors.js';
import { formatExportMissing, formatNotAwaited } from './texts.js';

/** What a host or upstream's runtime reads of a DurableObjectState (and of this state) first. */
const STATE_MEMBERS = [
  'storage',
  'facets',
  'exports',
  'id',
  'props',
  'waitUntil',
  'blockConcurrencyWhile',
  'abort',
  'acceptWebSocket',
  'getWebSockets',
  'backup',
  'close',
] as const;

/**
 * The Promise itself, with each state member as a getter that throws a text saying to await it.
 * It stays a real Promise (a Proxy would break `await`), and `then` is untouched.
 */
export function refuseUntilAwaited<T>(opening: Promise<T>): Promise<T> {
  const getters: PropertyDescriptorMap = {};
  for (const member of STATE_MEMBERS) {
    getters[member] = {
      get() {
        throw durableStateError('STATE_NOT_AWAITED', formatNotAwaited(member));
      },
    };
  }
  return Object.defineProperties(opening, getters);
}

/** Names read from `exports` that look like a class (a capital first letter) and are not there. */
const CLASS_NAME = /^[A-Z]/;

/** `exports`, warning once per name when a class is asked for that it does not hold. */
export function warnOnMissingExports(exports: Record<string, unknown>): Record<string, unknown> {
  const warned = new Set<string>();
  return new Proxy(exports, {
    get(target, name, receiver) {
      if (typeof name === 'string' && CLASS_NAME.test(name) && !(name in target) && !warned.has(name)) {
        warned.add(name);
        process.emitWarning(formatExportMissing(name, Object.keys(target)), { code: 'STATE_EXPORT_MISSING' });
      }
      return Reflect.get(target, name, receiver);
    },
  });
}

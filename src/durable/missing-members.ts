/**
 * The members of Cloudflare's DurableObjectState, DurableObjectStorage, DurableObjectFacets and
 * SqlStorage that the Node state does not provide. Reading one throws a text naming it, so a host
 * that needs one finds out at the first touch, not from an `undefined` later. Any other name reads
 * as `undefined`, as on any object (tooling probes `then`, `toJSON`, symbols...).
 */
import { formatMissingMember } from './texts.js';

/** From @cloudflare/workers-types (index.d.ts), less what the Node state provides. */
const MISSING: Record<string, readonly string[]> = {
  ctx: [
    'waitUntil',
    'props',
    'id',
    'container',
    'blockConcurrencyWhile',
    'acceptWebSocket',
    'getWebSockets',
    'setWebSocketAutoResponse',
    'getWebSocketAutoResponse',
    'getWebSocketAutoResponseTimestamp',
    'setHibernatableWebSocketEventTimeout',
    'getHibernatableWebSocketEventTimeout',
    'getTags',
    'abort',
  ],
  'ctx.storage': [
    'get',
    'list',
    'put',
    'delete',
    'deleteAll',
    'transaction',
    'getAlarm',
    'setAlarm',
    'deleteAlarm',
    'sync',
    'kv',
    'transactionSync',
    'getCurrentBookmark',
    'getBookmarkForTime',
    'onNextSessionRestoreBookmark',
  ],
  'ctx.facets': ['abort', 'delete'],
};

export function refuseMissingMembers<T extends object>(owner: keyof typeof MISSING & string, target: T): T {
  const missing = new Set(MISSING[owner]);
  return new Proxy(target, {
    get(object, member, receiver) {
      if (typeof member === 'string' && missing.has(member) && !(member in object))
        throw new TypeError(formatMissingMember(owner, member));
      return Reflect.get(object, member, receiver);
    },
  });
}

/** The bearer-token check of the WebSocket handshake, and which addresses count as loopback. */
import { createHash, timingSafeEqual } from 'node:crypto';
import { isIP } from 'node:net';

function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}

/** What an upgrade's `Authorization` header proves: `missing` when it carries no bearer token at all. */
export type BearerCheck = 'admitted' | 'missing' | 'wrong';

/** Whether an `Authorization` header carries exactly `Bearer <token>`. Compared in constant time. */
export function checkBearer(header: string | undefined, token: string | undefined): BearerCheck {
  if (token === undefined) return 'admitted';
  const match = header === undefined ? null : /^Bearer\s+(.+)$/i.exec(header.trim());
  if (!match) return 'missing';
  return timingSafeEqual(digest(match[1]!), digest(token)) ? 'admitted' : 'wrong';
}

/** `localhost`, 127.0.0.0/8, `::1` and the IPv4-mapped loopback. */
export function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '').toLowerCase();
  if (bare === 'localhost') return true;
  if (isIP(bare) === 4) return bare.startsWith('127.');
  if (isIP(bare) === 6) return bare === '::1' || /^::ffff:127\./.test(bare);
  return false;
}

/** The bearer-token check of the WebSocket handshake, and which addresses count as loopback. */
import { createHash, timingSafeEqual } from 'node:crypto';
import { isIP } from 'node:net';

function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}

/** Whether an `Authorization` header carries exactly `Bearer <token>`. Compared in constant time. */
export function isAuthorized(header: string | undefined, token: string | undefined): boolean {
  if (token === undefined) return true;
  if (header === undefined) return false;
  const match = /^Bearer\s+(.+)$/i.exec(header.trim());
  if (!match) return false;
  return timingSafeEqual(digest(match[1]!), digest(token));
}

/** `localhost`, 127.0.0.0/8, `::1` and the IPv4-mapped loopback. */
export function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '').toLowerCase();
  if (bare === 'localhost') return true;
  if (isIP(bare) === 4) return bare.startsWith('127.');
  if (isIP(bare) === 6) return bare === '::1' || /^::ffff:127\./.test(bare);
  return false;
}

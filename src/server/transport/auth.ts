/** The bearer-token check of the WebSocket handshake, and which addresses count as loopback. */
import { createHash, timingSafeEqual } from 'node:crypto';
import { isIP } from 'node:net';

function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}

/**
 * What an upgrade's `Authorization` header proves: the index of the daemon's token it carries
 * (0 for a daemon without a token), `missing` when it carries no bearer token at all.
 */
export type BearerCheck = number | 'missing' | 'wrong';

/**
 * Which of `tokens` an `Authorization` header carries as exactly `Bearer <token>`. Each is compared
 * in constant time, and all of them are, so the time does not tell which one matched.
 */
export function checkBearer(header: string | undefined, tokens: readonly string[]): BearerCheck {
  if (tokens.length === 0) return 0;
  const match = header === undefined ? null : /^Bearer\s+(.+)$/i.exec(header.trim());
  if (!match) return 'missing';
  const sent = digest(match[1]!);
  let found: number | undefined;
  tokens.forEach((token, index) => {
    if (timingSafeEqual(sent, digest(token)) && found === undefined) found = index;
  });
  return found ?? 'wrong';
}

/** `localhost`, 127.0.0.0/8, `::1` and the IPv4-mapped loopback. */
export function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '').toLowerCase();
  if (bare === 'localhost') return true;
  if (isIP(bare) === 4) return bare.startsWith('127.');
  if (isIP(bare) === 6) return bare === '::1' || /^::ffff:127\./.test(bare);
  return false;
}

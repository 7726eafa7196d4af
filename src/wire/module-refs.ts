/**
 * Modules sent once (docs/protocol.md, "Modules by hash"): a module crosses as its hash, the
 * SHA-256 of its JSON text, once the daemon holds it. Both ends compute the hash here, with Web
 * Crypto, which Node and Workers both have, so the daemon checks every module it is given against
 * the hash it is given under.
 */
import type { ModuleSource } from '../protocol/types.js';

/** A module at least this large (bytes of its JSON text) crosses by hash; a smaller one inline, where a round trip costs more than it. */
export const MODULE_REF_MIN_BYTES = 16 * 1024;

/** A module's hash: lower-case hex SHA-256 of `JSON.stringify(source)` in UTF-8. */
export async function moduleHash(source: ModuleSource): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(JSON.stringify(source)));
  return [...new Uint8Array(digest)].map((byte) => byte.toString(16).padStart(2, '0')).join('');
}

/** A hash as the wire takes it. */
export const MODULE_HASH_PATTERN = /^[0-9a-f]{64}$/;

/**
 * What an execute naming a module by a hash the daemon no longer holds is refused with. The client
 * knows the refusal by this text (with `INVALID_REQUEST`) and sends the execute again with the
 * modules inline: a reword is a change of the wire.
 */
export const MODULE_NOT_HELD_PREFIX = 'The executor daemon does not hold the module';

export function formatModuleNotHeld(name: string, hash: string): string {
  return `${MODULE_NOT_HELD_PREFIX} "${name}" (hash ${hash}) for this tenant: send it with putModules, or inline`;
}

export function formatModuleHashMismatch(hash: string, actual: string): string {
  return `putModules was given a module under hash ${hash} whose hash is ${actual}: a module is kept under its own hash only`;
}

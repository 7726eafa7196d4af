/**
 * Modules sent once (docs/protocol.md, "Modules by hash"): a module crosses as its hash, the
 * SHA-256 of its JSON text, once the daemon holds it. Both ends compute the hash here, with Web
 * Crypto, which Node and Workers both have, so the daemon checks every module it is given against
 * the hash it is given under.
 */
import { ExecutorError } from '../protocol/errors.js';
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
 * The `reason` an execute naming a module by a hash the daemon no longer holds is refused with,
 * beside `INVALID_REQUEST`: the client knows the refusal by it, not by its text, and sends the
 * execute again with the modules inline.
 */
export const MODULE_NOT_HELD = 'MODULE_NOT_HELD';

/** The daemon's refusal of a module it does not hold; `reason` crosses the wire as an own property. */
export class ModuleNotHeldError extends ExecutorError {
  readonly reason = MODULE_NOT_HELD;

  constructor(name: string, hash: string) {
    super('INVALID_REQUEST', formatModuleNotHeld(name, hash));
  }
}

/** Whether a failure, as it arrived over the wire, is the daemon's refusal of a module it does not hold. */
export function isModuleNotHeld(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const { code, reason } = error as { code?: unknown; reason?: unknown };
  return code === 'INVALID_REQUEST' && reason === MODULE_NOT_HELD;
}

function formatModuleNotHeld(name: string, hash: string): string {
  return `The executor daemon does not hold the module "${name}" (hash ${hash}) for this tenant: send it with putModules, or inline`;
}

export function formatModuleHashMismatch(hash: string, actual: string): string {
  return `putModules was given a module under hash ${hash} whose hash is ${actual}: a module is kept under its own hash only`;
}

/**
 * Which names a dialect call may bind. A refused call ends with the first text before the native
 * executor is touched, so it costs no worker.
 */
import { RESERVED_PROVIDER_NAMES, rejectName } from '../protocol/providers.js';
import { nameRejection } from './texts.js';
import { detectSanitizeCollision } from './tool-name.js';
import type { ConnectorBinding, ExtendedProvider } from './types.js';

/**
 * Names the dialect's generated worker binds, beyond the protocol's `RESERVED_PROVIDER_NAMES`:
 * `@cloudflare/codemode` 0.4+ reserves these 12 and four more (`Promise`, `setTimeout`, `Error`,
 * `console`) that the protocol's set already refuses. Replicated verbatim so a host moving over
 * keeps every refusal it had.
 */
export const DIALECT_RESERVED_NAMES: ReadonlySet<string> = new Set([
  '__dispatchers',
  '__connectors',
  '__logs',
  '__CODEMODE_BINARY_TAG',
  '__bytesToBase64',
  '__base64ToBytes',
  '__encodeCodemodeValue',
  '__decodeCodemodeValue',
  '__stringifyForCodemode',
  '__parseForCodemode',
  'WorkerEntrypoint',
  'CodeExecutor',
]);

export function isReservedName(name: string): boolean {
  return RESERVED_PROVIDER_NAMES.has(name) || DIALECT_RESERVED_NAMES.has(name);
}

/**
 * The first text that refuses the call, or `null`. Providers first, then connectors, each name
 * through the protocol's name rules with the dialect's texts; then the sanitize collision.
 * The reserved-word rule is a deliberate superset: upstream's worker fails to start on those.
 */
export function validateExecution(
  providers: readonly ExtendedProvider[],
  connectors: readonly ConnectorBinding[],
): string | null {
  const seen = new Set<string>();
  for (const { name } of providers) {
    const text = rejectName(name, seen, nameRejection.Provider, isReservedName);
    if (text !== null) return text;
  }
  for (const { name } of connectors) {
    const text = rejectName(name, seen, nameRejection.Connector, isReservedName);
    if (text !== null) return text;
  }
  return detectSanitizeCollision(providers);
}

/**
 * Warnings written once per process (or Worker isolate), per key: as a Node process warning where
 * there is a Node `process`, else on `console.warn`, since Workers have none. Runtime-neutral.
 */

/** The process-warning emitter where there is a Node `process`. */
type WarningEmitter = (message: string, type: string) => void;

/** Writes `text` as a process warning of `type` where there is one, else on `console.warn`. */
function emit(text: string, type: string): void {
  const host = (globalThis as { process?: { emitWarning?: WarningEmitter } }).process;
  if (typeof host?.emitWarning === 'function') host.emitWarning(text, type);
  else console.warn(text);
}

/**
 * A writer of warnings of `type`, each key once. Past `maxKeys` distinct keys nothing more is
 * written, so a host passing ever-new keys grows no set. The text is composed only for a new key.
 */
export function warningOnce(
  type: string,
  maxKeys = Number.POSITIVE_INFINITY,
): (key: string, text: () => string) => void {
  const warned = new Set<string>();
  return (key, text) => {
    if (warned.has(key) || warned.size >= maxKeys) return;
    warned.add(key);
    emit(text(), type);
  };
}

const deprecation = warningOnce('DeprecationWarning');

/** Writes a deprecation warning once per process: a renamed option or flag used under its old name. */
export function warnOnce(text: string): void {
  deprecation(text, () => text);
}

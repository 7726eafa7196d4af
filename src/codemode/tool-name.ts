/**
 * The identifier a tool is exposed under inside the sandbox, and the check that finds two raw names
 * landing on the same identifier. The dialect's type generator shows the model the
 * sanitized name, so the handler must look calls up under exactly that identifier.
 */
import { formatSanitizeCollision } from './texts.js';

/**
 * Words a sanitized tool name may not end up as: every ECMAScript edition's reserved words
 * (including the future-reserved words of ES1 to ES3), the strict-mode names `arguments` and
 * `eval`, and `undefined`. It matches `@cloudflare/codemode`'s generator word for word (65 words,
 * identical in every release from 0.1.0 to 0.5.6), so the name the model was shown is the name
 * the handler finds.
 */
export const TOOL_NAME_RESERVED_WORDS: ReadonlySet<string> = new Set([
  'abstract',
  'arguments',
  'await',
  'boolean',
  'break',
  'byte',
  'case',
  'catch',
  'char',
  'class',
  'const',
  'continue',
  'debugger',
  'default',
  'delete',
  'do',
  'double',
  'else',
  'enum',
  'eval',
  'export',
  'extends',
  'false',
  'final',
  'finally',
  'float',
  'for',
  'function',
  'goto',
  'if',
  'implements',
  'import',
  'in',
  'instanceof',
  'int',
  'interface',
  'let',
  'long',
  'native',
  'new',
  'null',
  'package',
  'private',
  'protected',
  'public',
  'return',
  'short',
  'static',
  'super',
  'switch',
  'synchronized',
  'this',
  'throw',
  'throws',
  'transient',
  'true',
  'try',
  'typeof',
  'undefined',
  'var',
  'void',
  'volatile',
  'while',
  'with',
  'yield',
]);

/**
 * Turns a free-form tool name into a JavaScript identifier: hyphens, dots and whitespace become
 * `_`, every other character outside `[a-zA-Z0-9_$]` is dropped, nothing left gives `_`, a leading
 * digit gets a `_` prefix, and a reserved word gets a `_` suffix (checked after the prefix, so
 * `-delete` becomes `_delete`).
 */
export function sanitizeToolName(name: string): string {
  if (!name) return '_';
  const sanitized = name.replace(/[-.\s]/g, '_').replace(/[^a-zA-Z0-9_$]/g, '');
  if (!sanitized) return '_';
  const prefixed = /^[0-9]/.test(sanitized) ? `_${sanitized}` : sanitized;
  return TOOL_NAME_RESERVED_WORDS.has(prefixed) ? `${prefixed}_` : prefixed;
}

/** What `detectSanitizeCollision` needs of a provider: its name and its raw-keyed functions. */
export interface NamedFunctions {
  name: string;
  fns: Readonly<Record<string, unknown>>;
}

/**
 * The first pair of raw keys, in iteration order, that sanitizes to one identifier, as the
 * collision text; `null` when there is none. Only the raw names know about a collision: the wire
 * carries the sanitized ones.
 *
 * Upstream's edge is kept on purpose: the earlier raw name must be truthy, so `""` followed by `_`
 * (both `_`) is not reported and the later function wins.
 */
export function detectSanitizeCollision(providers: readonly NamedFunctions[]): string | null {
  for (const provider of providers) {
    const rawBySanitized = new Map<string, string>();
    for (const raw of Object.keys(provider.fns)) {
      const sanitized = sanitizeToolName(raw);
      const earlier = rawBySanitized.get(sanitized);
      if (earlier && earlier !== raw) return formatSanitizeCollision(earlier, raw, sanitized, provider.name);
      rawBySanitized.set(sanitized, raw);
    }
  }
  return null;
}

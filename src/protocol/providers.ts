/**
 * Providers and the sandbox scope: which names a namespace may take. A native executor checks
 * them with `validateProviders` before it spends a sandbox on the request.
 */

import { providerRejection } from './texts.js';
import type { ProviderDescriptor } from './types.js';

/**
 * Names no provider may take. The harness captured every intrinsic it uses before user code ran,
 * so none matters to it; they are kept so a provider refused upstream is refused here too
 * (0.4+ reserves `console`, `Promise`, `setTimeout` and `Error`, and its generated module fails on a
 * provider named `Proxy` with a temporal-dead-zone error), and `globalThis`, which would hide the
 * global object from the program.
 */
export const RESERVED_PROVIDER_NAMES: ReadonlySet<string> = new Set([
  'console',
  'Promise',
  'setTimeout',
  'Error',
  'Proxy',
  'globalThis',
]);

/** ASCII identifiers only, as in every upstream release that validates names. */
export const PROVIDER_NAME_PATTERN = /^[a-zA-Z_$][a-zA-Z0-9_$]*$/;

/**
 * The names a `const` in the sandbox's strict module code cannot take: the words the language
 * reserves (keywords, strict-mode reserved words, literals), plus `eval` and `arguments`. Upstream's
 * worker fails to load on each of them (cases/validation.yaml has a case per name). `async` is a
 * plain identifier there, and upstream binds it, so it is not on the list.
 */
export const JAVASCRIPT_RESERVED_WORDS: ReadonlySet<string> = new Set([
  'await',
  'break',
  'case',
  'catch',
  'class',
  'const',
  'continue',
  'debugger',
  'default',
  'delete',
  'do',
  'else',
  'enum',
  'export',
  'extends',
  'false',
  'finally',
  'for',
  'function',
  'if',
  'import',
  'in',
  'instanceof',
  'new',
  'null',
  'return',
  'super',
  'switch',
  'this',
  'throw',
  'true',
  'try',
  'typeof',
  'var',
  'void',
  'while',
  'with',
  'yield',
  'implements',
  'interface',
  'let',
  'package',
  'private',
  'protected',
  'public',
  'static',
  'eval',
  'arguments',
]);

/**
 * The texts one list of names is refused with, one per rule. The protocol's table is
 * `providerRejection`; the dialect adapter brings its own wording, so the rules have one owner and
 * the texts one per audience.
 */
export interface NameRejectionTexts {
  reserved(name: string): string;
  notIdentifier(name: string): string;
  reservedWord(name: string): string;
  duplicate(name: string): string;
}

/**
 * The name rules, in order: reserved (by `isReserved`), outside `PROVIDER_NAME_PATTERN`, a
 * JavaScript reserved word, already in `seen`. Returns the first rule's text, or `null` after
 * adding the name to `seen`, so one `seen` carried across lists finds a clash between them.
 */
export function rejectName(
  name: string,
  seen: Set<string>,
  texts: NameRejectionTexts,
  isReserved: (name: string) => boolean = isReservedProviderName,
): string | null {
  if (isReserved(name)) return texts.reserved(name);
  if (!PROVIDER_NAME_PATTERN.test(name)) return texts.notIdentifier(name);
  if (JAVASCRIPT_RESERVED_WORDS.has(name)) return texts.reservedWord(name);
  if (seen.has(name)) return texts.duplicate(name);
  seen.add(name);
  return null;
}

function isReservedProviderName(name: string): boolean {
  return RESERVED_PROVIDER_NAMES.has(name);
}

/** Returns the first rejection text, or `null` when every provider may be bound. */
export function validateProviders(providers: readonly ProviderDescriptor[] | undefined): string | null {
  if (providers === undefined) return null;
  const seen = new Set<string>();
  for (const [index, provider] of providers.entries()) {
    if (!isWellFormed(provider)) return providerRejection.malformed(index);
    const text = rejectName(provider.name, seen, providerRejection);
    if (text !== null) return text;
  }
  return null;
}

function isWellFormed(provider: unknown): provider is ProviderDescriptor {
  if (typeof provider !== 'object' || provider === null) return false;
  const { name, tools, positionalArgs, proxySource, prelude } = provider as Record<string, unknown>;
  return (
    typeof name === 'string' &&
    Array.isArray(tools) &&
    tools.every((tool) => typeof tool === 'string') &&
    (positionalArgs === undefined || typeof positionalArgs === 'boolean') &&
    (proxySource === undefined || typeof proxySource === 'string') &&
    (prelude === undefined || typeof prelude === 'string')
  );
}

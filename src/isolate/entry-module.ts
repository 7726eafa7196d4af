/**
 * The generated main module of one execution. Its only top-level name besides the user's own
 * imports is `__codemode`, the harness module's namespace, imported first so the harness runs
 * before any user module. The arrow is invoked inside a function scope where every provider
 * namespace is a `const`, after every prelude, as upstream's `evaluate` does; `this` there is the
 * entrypoint, as upstream's.
 *
 * ```js
 * import * as __codemode from "__codemode_harness.js";
 * <the request's static imports>
 * export default class extends __codemode.Entrypoint {
 *   evaluate() {
 *     return __codemode.evaluate(this, arguments, function () {
 *       const api = __codemode.namespace("api", true, null);
 *       <preludes, in provider order>
 *       return (
 *         <the arrow>
 *       )();
 *     });
 *   }
 * }
 * ```
 */
import { separateImports } from '../protocol/imports.js';
import type { ProviderDescriptor } from '../protocol/types.js';
import { HARNESS_MODULE } from './sandbox-constants.js';

function namespaceLine(provider: ProviderDescriptor): string {
  const factory = provider.proxySource === undefined ? 'null' : `(\n${provider.proxySource}\n)`;
  return `const ${provider.name} = __codemode.namespace(${JSON.stringify(provider.name)}, ${provider.positionalArgs !== false}, ${factory});`;
}

export function buildEntryModule(code: string, providers: readonly ProviderDescriptor[]): string {
  const { imports, body } = separateImports(code);
  return [
    `import * as __codemode from ${JSON.stringify(HARNESS_MODULE)};`,
    imports,
    'export default class extends __codemode.Entrypoint {',
    'evaluate() {',
    'return __codemode.evaluate(this, arguments, function () {',
    ...providers.map(namespaceLine),
    ...providers.flatMap((provider) => (provider.prelude === undefined ? [] : [provider.prelude])),
    'return (',
    body,
    ')();',
    '});',
    '}',
    '}',
    '',
  ].join('\n');
}

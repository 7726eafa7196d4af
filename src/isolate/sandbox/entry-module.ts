/**
 * The generated main module of one execution, shaped as upstream's: a class named `CodeExecutor`
 * whose async `evaluate` binds every provider namespace as a `const`, runs every prelude (so a
 * prelude may `await`), calls the arrow and awaits its settling, so that `this`, `arguments`, the
 * stack frames under the arrow and the microtask turns after it are what they are upstream. Its
 * only top-level name besides the user's own imports is `__codemode`, the harness module's
 * namespace, imported first so the harness runs before any user module. The class is an
 * expression, so its name is bound inside it alone and no import can collide with it.
 *
 * ```js
 * import * as __codemode from "__codemode_harness.js";
 * <the request's static imports>
 * export default (class CodeExecutor extends __codemode.Entrypoint {
 * async evaluate() {
 * __codemode.begin(arguments, <whether any provider has a prelude>);
 * try {
 * const api = __codemode.namespace("api", true, null);
 * <preludes, in provider order>
 * return __codemode.returned(await __codemode.raced((
 * <the arrow>
 * )()));
 * } catch (__codemode_thrown) {
 * return __codemode.threw(__codemode_thrown);
 * }
 * }
 * });
 * ```
 */
import { separateImports } from '../../protocol/imports.js';
import type { ProviderDescriptor } from '../../protocol/types.js';
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
    'export default (class CodeExecutor extends __codemode.Entrypoint {',
    'async evaluate() {',
    // Preludes may await before the race is armed: the harness then holds the run from the start.
    `__codemode.begin(arguments, ${providers.some((provider) => provider.prelude !== undefined)});`,
    'try {',
    ...providers.map(namespaceLine),
    ...providers.flatMap((provider) => (provider.prelude === undefined ? [] : [provider.prelude])),
    'return __codemode.returned(await __codemode.raced((',
    body,
    ')()));',
    '} catch (__codemode_thrown) {',
    'return __codemode.threw(__codemode_thrown);',
    '}',
    '}',
    '});',
    '',
  ].join('\n');
}

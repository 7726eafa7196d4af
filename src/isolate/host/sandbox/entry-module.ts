/**
 * The generated main module of one execution, shaped as upstream's: a class named `CodeExecutor`
 * whose async `evaluate` binds every provider namespace as a `const`, runs every prelude (so a
 * prelude may `await`), calls the arrow and awaits its settling, so that `this`, `arguments`, the
 * stack frames under the arrow and the microtask turns after it are what they are upstream. Its
 * only top-level name besides the user's own imports is the harness module's namespace, under a
 * name drawn once per process (sandbox-constants.ts `HARNESS_BINDING`, shown as `__h` below), so
 * no program can write it; imported first so the harness runs before any user module. The class is an
 * expression, so its name is bound inside it alone and no import can collide with it.
 *
 * ```js
 * import * as __h from "<HARNESS_MODULE>";
 * <the request's static imports>
 * export default (class CodeExecutor extends __h.Entrypoint {
 * async evaluate() {
 * __h.begin(arguments, <whether any provider has a prelude>);
 * try {
 * const api = __h.namespace("api", true, null);
 * <preludes, in provider order>
 * return __h.returned(await __h.raced((
 * <the arrow>
 * )()));
 * } catch (__h_thrown) {
 * return __h.threw(__h_thrown);
 * }
 * }
 * });
 * ```
 */
import { separateImports } from '../../../protocol/imports.js';
import type { ProviderDescriptor } from '../../../protocol/types.js';
import { HARNESS_BINDING, HARNESS_MODULE } from '../../contract/sandbox-constants.js';

function namespaceLine(provider: ProviderDescriptor): string {
  const factory = provider.proxySource === undefined ? 'null' : `(\n${provider.proxySource}\n)`;
  return `const ${provider.name} = ${HARNESS_BINDING}.namespace(${JSON.stringify(provider.name)}, ${provider.positionalArgs !== false}, ${factory});`;
}

export function buildEntryModule(code: string, providers: readonly ProviderDescriptor[]): string {
  const { imports, body } = separateImports(code);
  return [
    `import * as ${HARNESS_BINDING} from ${JSON.stringify(HARNESS_MODULE)};`,
    imports,
    `export default (class CodeExecutor extends ${HARNESS_BINDING}.Entrypoint {`,
    'async evaluate() {',
    // Preludes may await before the race is armed: the harness then holds the run from the start.
    `${HARNESS_BINDING}.begin(arguments, ${providers.some((provider) => provider.prelude !== undefined)});`,
    'try {',
    ...providers.map(namespaceLine),
    ...providers.flatMap((provider) => (provider.prelude === undefined ? [] : [provider.prelude])),
    `return ${HARNESS_BINDING}.returned(await ${HARNESS_BINDING}.raced((`,
    body,
    ')()));',
    `} catch (${HARNESS_BINDING}_thrown) {`,
    `return ${HARNESS_BINDING}.threw(${HARNESS_BINDING}_thrown);`,
    '}',
    '}',
    '});',
    '',
  ].join('\n');
}

/**
 * The source text of a self-contained function, for evaluation on the far side of a boundary (the
 * sandbox, the supervisor), so both sides run one implementation. The result is an expression
 * whose value is the function. The `__name` parameter absorbs the name-keeping helper some
 * transpilers (esbuild's keepNames, used by tsx) insert into function bodies.
 */
export function selfContainedSource(fn: (...args: never[]) => unknown): string {
  return `((__name) => (${fn.toString()}))((fn) => fn)`;
}

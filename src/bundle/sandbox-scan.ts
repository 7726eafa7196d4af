/**
 * The sandbox's eval ban, checked on a package's files before they run: a call of `eval`,
 * `Function` or `new Function` that runs when the module loads and that nothing catches throws
 * `EvalError` in the sandbox, so the import itself would fail. A call inside a try block, or on the
 * fallback side of `||`, `??` or `?:`, is a package probing for what the platform allows (lodash's
 * `Function('return this')()` after `self`), which the sandbox's refusal only answers, so it passes.
 * A call inside a function runs only if the program calls that function (lodash's `template`), and
 * then fails with the runtime's own EvalError; the rest of the package works, so it passes too.
 */

import type { Node } from 'acorn';
import { parse } from 'acorn';
import { ancestor } from 'acorn-walk';

/** A call the sandbox would refuse: its form (`new Function`) and its line in the file. */
export interface EvalCall {
  form: string;
  line: number;
}

interface AnyNode extends Node {
  [key: string]: unknown;
}

/** `eval`, `Function`, or either read from `globalThis`/`self`/`window`. */
function calledName(callee: AnyNode): string | undefined {
  if (callee.type === 'Identifier') return callee.name as string;
  if (callee.type === 'MemberExpression' && !callee.computed) {
    const object = callee.object as AnyNode;
    const property = callee.property as AnyNode;
    if (object.type === 'Identifier' && ['globalThis', 'self', 'window'].includes(object.name as string))
      return property.name as string;
  }
  return undefined;
}

const FUNCTIONS = new Set(['FunctionDeclaration', 'FunctionExpression', 'ArrowFunctionExpression']);

/** Whether a node runs only when called, sits where a throw is caught, or is only a fallback. */
function isGuarded(ancestors: readonly AnyNode[]): boolean {
  for (let index = ancestors.length - 2; index >= 0; index -= 1) {
    const parent = ancestors[index]!;
    if (FUNCTIONS.has(parent.type)) return true;
    const child = ancestors[index + 1]!;
    if (parent.type === 'TryStatement' && parent.block === child) return true;
    if (parent.type === 'LogicalExpression' && parent.right === child) return true;
    if (parent.type === 'ConditionalExpression' && parent.test !== child) return true;
  }
  return false;
}

/** A package file as acorn reads it: an ES module, else a CommonJS script; undefined if neither parses. */
function parseFile(source: string): Node | undefined {
  for (const sourceType of ['module', 'script'] as const) {
    try {
      return parse(source, {
        ecmaVersion: 'latest',
        sourceType,
        locations: true,
        allowReturnOutsideFunction: sourceType === 'script',
        allowHashBang: true,
      });
    } catch {}
  }
  return undefined;
}

/** The eval and Function calls of a file that run unguarded when it loads, in order. */
export function findEvalCalls(source: string): EvalCall[] {
  const found: EvalCall[] = [];
  const tree = parseFile(source);
  // What acorn cannot read is esbuild's (TypeScript, JSX), and esbuild has read it.
  if (tree === undefined) return found;
  const visit = (node: Node, _state: unknown, ancestors: Node[]) => {
    const call = node as AnyNode;
    const name = calledName(call.callee as AnyNode);
    if (name !== 'eval' && name !== 'Function') return;
    if (isGuarded(ancestors as AnyNode[])) return;
    found.push({ form: call.type === 'NewExpression' ? `new ${name}` : name, line: call.loc!.start.line });
  };
  ancestor(tree, { CallExpression: visit, NewExpression: visit });
  return found;
}

/** Whether an argument is a path known before the run: a string literal or a template without holes. */
function isFixedPath(argument: AnyNode | undefined): boolean {
  if (argument?.type === 'Literal') return typeof argument.value === 'string';
  return argument?.type === 'TemplateLiteral' && (argument.expressions as unknown[]).length === 0;
}

/**
 * The lines of a file that call `require` with a computed path outside a try block: no bundle can
 * hold what it loads, wherever it runs. (esbuild reports these only outside node_modules.)
 */
export function findComputedRequires(source: string): number[] {
  const lines: number[] = [];
  const tree = parseFile(source);
  if (tree === undefined) return lines;
  ancestor(tree, {
    CallExpression(node: Node, _state: unknown, ancestors: Node[]) {
      const call = node as AnyNode;
      const callee = call.callee as AnyNode;
      if (callee.type !== 'Identifier' || callee.name !== 'require') return;
      if (isFixedPath((call.arguments as AnyNode[])[0])) return;
      const caught = (ancestors as AnyNode[]).some(
        (parent, index) => parent.type === 'TryStatement' && parent.block === ancestors[index + 1],
      );
      if (!caught) lines.push(call.loc!.start.line);
    },
  });
  return lines;
}

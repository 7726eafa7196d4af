/**
 * Raw model output into the native entry form: static imports, then one arrow expression.
 * The dialect's MCP server hands the model's string straight to `execute`, and every executor
 * the dialect ships normalizes inside, so this one does too.
 *
 * It follows `@cloudflare/codemode`'s `normalizeCode` (0.1.3 to 0.5.6) branch for branch, with one
 * deliberate superset: leading static import declarations stay ahead of the arrow instead of
 * being wrapped into its body, where an import cannot appear.
 */
import { type Program, parse } from 'acorn';
import { separateImports } from '../protocol/imports.js';

/** A fence around the whole string, tagged js, javascript, typescript, ts, tsx, jsx, or untagged. */
const WHOLE_STRING_FENCE = /^```(?:js|javascript|typescript|ts|tsx|jsx)?\s*\n([\s\S]*?)```\s*$/;

const EMPTY_ARROW = 'async () => {}';

function formatNormalizeInputError(code: unknown): string {
  return `normalizeCode expects the code as a string, got ${code === null ? 'null' : typeof code}`;
}

export function normalizeCode(code: string): string {
  if (typeof code !== 'string') throw new TypeError(formatNormalizeInputError(code));
  const { imports, body } = separateImports(stripFence(code.trim()).trim());
  const arrow = normalizeBody(body);
  return imports ? `${imports}\n${arrow}` : arrow;
}

function stripFence(code: string): string {
  const match = WHOLE_STRING_FENCE.exec(code);
  return match ? match[1]! : code;
}

/** Wraps statements into the arrow the sandbox invokes. */
function wrap(body: string): string {
  return `async () => {\n${body}\n}`;
}

/** The upstream decision over one import-free body. */
function normalizeBody(source: string): string {
  if (!source) return EMPTY_ARROW;
  let statements: Program['body'];
  try {
    statements = parse(source, { ecmaVersion: 'latest', sourceType: 'module' }).body;
  } catch {
    // A failed parse is not proof of broken code: `return 6 * 7` is legal once wrapped.
    return wrap(source);
  }
  const only = statements.length === 1 ? statements[0] : undefined;
  if (only?.type === 'ExpressionStatement' && only.expression.type === 'ArrowFunctionExpression') return source;
  if (only?.type === 'ExportDefaultDeclaration') {
    const declaration = only.declaration;
    const inner = source.slice(declaration.start, declaration.end);
    // Anonymous declarations parse only in the export position, so they become expressions.
    if (declaration.type === 'FunctionDeclaration' && !declaration.id) return `async () => {\nreturn (${inner})();\n}`;
    if (declaration.type === 'ClassDeclaration' && !declaration.id) return `async () => {\nreturn (${inner});\n}`;
    return normalizeCode(inner);
  }
  if (only?.type === 'FunctionDeclaration') return `async () => {\n${source}\nreturn ${only.id.name}();\n}`;
  const last = statements[statements.length - 1];
  if (last?.type === 'ExpressionStatement') {
    const { expression } = last;
    return `async () => {\n${source.slice(0, last.start)}return (${source.slice(expression.start, expression.end)})\n}`;
  }
  return wrap(source);
}

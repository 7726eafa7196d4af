/**
 * The entry form of the native contract is static import declarations, then one arrow
 * expression. `separateImports` splits the two, using acorn's tokenizer so that it also works on
 * a body that does not parse as a module (a bare `return`, for instance).
 */
import { type Token, tokenizer, tokTypes } from 'acorn';

export interface SeparatedImports {
  /** The leading import declarations, verbatim, or `''`. */
  imports: string;
  /** Everything after them, trimmed. */
  body: string;
}

export function separateImports(code: string): SeparatedImports {
  const tokens = readTokens(code);
  let end = 0;
  let i = 0;
  while (tokens[i]?.type === tokTypes._import) {
    const after = tokens[i + 1];
    // `import(...)` and `import.meta` are expressions, not declarations.
    if (!after || after.type === tokTypes.parenL || after.type === tokTypes.dot) break;
    i = specifierIndex(tokens, i + 1);
    const specifier = tokens[i];
    if (!specifier) break;
    end = specifier.end;
    i += 1;
    if (isAttributesKeyword(tokens[i]) && tokens[i + 1]?.type === tokTypes.braceL) {
      while (tokens[i] && tokens[i]!.type !== tokTypes.braceR) i += 1;
      if (!tokens[i]) break;
      end = tokens[i]!.end;
      i += 1;
    }
    if (tokens[i]?.type === tokTypes.semi) {
      end = tokens[i]!.end;
      i += 1;
    }
  }
  return { imports: code.slice(0, end).trim(), body: code.slice(end).trim() };
}

/**
 * The index of the module specifier of the declaration whose clause starts at `start`: the clause
 * itself for a side-effect import, otherwise the string after the first `from` outside braces
 * that a string follows. Braces can hold string names (`import { "a-b" as ab } from 'm'`), and
 * `from` can be a binding (`import from from 'm'`), so neither the first string nor the first
 * `from` will do. Returns `tokens.length` when there is none.
 */
function specifierIndex(tokens: readonly Token[], start: number): number {
  if (tokens[start]?.type === tokTypes.string) return start;
  let depth = 0;
  for (let i = start; i < tokens.length; i += 1) {
    const token = tokens[i]!;
    if (token.type === tokTypes.braceL) depth += 1;
    else if (token.type === tokTypes.braceR) depth -= 1;
    else if (token.type === tokTypes.semi || token.type === tokTypes._import) break;
    else if (depth === 0 && isWord(token, 'from') && tokens[i + 1]?.type === tokTypes.string) return i + 1;
  }
  return tokens.length;
}

function isWord(token: Token | undefined, word: string): boolean {
  return token?.type === tokTypes.name && (token as { value?: unknown }).value === word;
}

/** Every token up to the end, or up to the first one the tokenizer cannot read. */
function readTokens(code: string): Token[] {
  const tokens: Token[] = [];
  try {
    for (const token of tokenizer(code, { ecmaVersion: 'latest', sourceType: 'module' })) tokens.push(token);
  } catch {
    // What was read before the error still locates an import block ahead of it.
  }
  return tokens;
}

function isAttributesKeyword(token: Token | undefined): boolean {
  const value = (token as { value?: unknown } | undefined)?.value;
  return value === 'with' || value === 'assert';
}

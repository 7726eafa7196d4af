/**
 * The entry form of the native contract is static import declarations, then one arrow
 * expression. `separateImports` splits the two, using acorn's tokenizer so that it also works on
 * a body that does not parse as a module (a bare `return`, for instance). It reads tokens only as
 * far as the leading declarations reach, and stops at the first token no declaration can hold:
 * a program of any size costs only its imports (and a token past them) to split.
 */
import { type Token, type TokenType, tokenizer, tokTypes } from 'acorn';

export interface SeparatedImports {
  /** The leading import declarations, verbatim, or `''`. */
  imports: string;
  /** Everything after them, trimmed. */
  body: string;
}

/** The tokens an import clause (`x`, `* as x`, `{ a, "b-c" as d, default as e }`) is made of. */
const CLAUSE_TOKENS: ReadonlySet<TokenType> = new Set([
  tokTypes.name,
  tokTypes.braceL,
  tokTypes.braceR,
  tokTypes.comma,
  tokTypes.star,
  tokTypes.string,
  tokTypes._default,
]);

/** The tokens of an attributes block after its `{`: `type: "json", x: "y"`. */
const ATTRIBUTE_TOKENS: ReadonlySet<TokenType> = new Set([
  tokTypes.name,
  tokTypes.string,
  tokTypes.colon,
  tokTypes.comma,
]);

export function separateImports(code: string): SeparatedImports {
  const tokens = new LazyTokens(code);
  let end = 0;
  let i = 0;
  while (tokens.at(i)?.type === tokTypes._import) {
    const after = tokens.at(i + 1);
    // `import(...)` and `import.meta` are expressions, not declarations.
    if (!after || after.type === tokTypes.parenL || after.type === tokTypes.dot) break;
    const specifier = specifierIndex(tokens, i + 1);
    if (specifier === undefined) break;
    i = specifier;
    end = tokens.at(i)!.end;
    i += 1;
    if (isAttributesKeyword(tokens.at(i)) && tokens.at(i + 1)?.type === tokTypes.braceL) {
      i += 2;
      while (tokens.at(i) && ATTRIBUTE_TOKENS.has(tokens.at(i)!.type)) i += 1;
      if (tokens.at(i)?.type !== tokTypes.braceR) break;
      end = tokens.at(i)!.end;
      i += 1;
    }
    if (tokens.at(i)?.type === tokTypes.semi) {
      end = tokens.at(i)!.end;
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
 * `from` will do. Undefined when there is none before a token no clause can hold.
 */
function specifierIndex(tokens: LazyTokens, start: number): number | undefined {
  if (tokens.at(start)?.type === tokTypes.string) return start;
  let depth = 0;
  for (let i = start; ; i += 1) {
    const token = tokens.at(i);
    if (token === undefined || !CLAUSE_TOKENS.has(token.type)) return undefined;
    if (token.type === tokTypes.braceL) depth += 1;
    else if (token.type === tokTypes.braceR) depth -= 1;
    else if (depth === 0 && isWord(token, 'from') && tokens.at(i + 1)?.type === tokTypes.string) return i + 1;
  }
}

function isWord(token: Token | undefined, word: string): boolean {
  return token?.type === tokTypes.name && (token as { value?: unknown }).value === word;
}

/**
 * The program's tokens, read from acorn's tokenizer only as far as they are asked for, and up to
 * the first one it cannot read: what was read before an error still locates an import block
 * ahead of it.
 */
class LazyTokens {
  readonly #read: Token[] = [];
  readonly #source: Iterator<Token>;
  #exhausted = false;

  constructor(code: string) {
    this.#source = tokenizer(code, { ecmaVersion: 'latest', sourceType: 'module' })[Symbol.iterator]();
  }

  at(index: number): Token | undefined {
    while (this.#read.length <= index && !this.#exhausted) {
      try {
        const next = this.#source.next();
        if (next.done) this.#exhausted = true;
        else this.#read.push(next.value);
      } catch {
        this.#exhausted = true;
      }
    }
    return this.#read[index];
  }
}

function isAttributesKeyword(token: Token | undefined): boolean {
  const value = (token as { value?: unknown } | undefined)?.value;
  return value === 'with' || value === 'assert';
}

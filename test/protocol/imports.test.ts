import { parse } from 'acorn';
import { describe, expect, it } from 'vitest';
import { separateImports } from '../../src/protocol/index.js';

describe('separateImports takes the leading declarations', () => {
  const cases: [string, string, string, string][] = [
    ['a default import', "import a from 'a'\nasync () => a", "import a from 'a'", 'async () => a'],
    [
      'named imports',
      'import { b, c as d } from "m.js";\nasync () => b + d',
      'import { b, c as d } from "m.js";',
      'async () => b + d',
    ],
    [
      'a namespace import',
      "import * as ns from 'ns.js'\nasync () => ns",
      "import * as ns from 'ns.js'",
      'async () => ns',
    ],
    [
      'a default and a namespace',
      "import x, * as y from 'm'\nasync () => y",
      "import x, * as y from 'm'",
      'async () => y',
    ],
    ['a side-effect import', "import 'setup.js';\nasync () => 1", "import 'setup.js';", 'async () => 1'],
    [
      'JSON with attributes',
      "import data from './d.json' with { type: 'json' };\nasync () => data",
      "import data from './d.json' with { type: 'json' };",
      'async () => data',
    ],
    [
      'the older assert form',
      "import data from './d.json' assert { type: 'json' }\nasync () => data",
      "import data from './d.json' assert { type: 'json' }",
      'async () => data',
    ],
    [
      'several, with and without semicolons, on one line or several',
      "import a from 'a'; import { b } from 'b'\nimport 'c'\nasync () => a",
      "import a from 'a'; import { b } from 'b'\nimport 'c'",
      'async () => a',
    ],
    [
      'comments around them',
      "// the helper\nimport { helper } from 'lib.js' /* inline */\n// body next\nasync () => helper()",
      "// the helper\nimport { helper } from 'lib.js'",
      '/* inline */\n// body next\nasync () => helper()',
    ],
    [
      'a string-named import',
      'import { "a-b" as ab } from \'m\'\nasync () => ab',
      'import { "a-b" as ab } from \'m\'',
      'async () => ab',
    ],
    [
      'a default import named from',
      "import from from 'm'\nasync () => from",
      "import from from 'm'",
      'async () => from',
    ],
    [
      'a body that does not parse on its own',
      "import { helper } from 'lib.js'\nconst a = helper()\nreturn a",
      "import { helper } from 'lib.js'",
      'const a = helper()\nreturn a',
    ],
  ];

  it.each(cases)('%s', (_name, code, imports, body) => {
    expect(separateImports(code)).toEqual({ imports, body });
  });

  it('leaves declarations that parse as a module', () => {
    // The import block it returns is itself a valid module. The `assert` form is kept verbatim for
    // the runtime to judge; acorn (like current V8) no longer parses it.
    for (const [name, code] of cases) {
      if (name === 'the older assert form') continue;
      const { imports } = separateImports(code);
      expect(() => parse(imports, { ecmaVersion: 'latest', sourceType: 'module' })).not.toThrow();
    }
  });
});

describe('separateImports leaves everything else in the body', () => {
  const untouched: [string, string][] = [
    ['a body with no imports', 'async () => 42'],
    ['a body that does not parse', 'return 6 * 7'],
    ['a dynamic import', "import('./util.js').then((m) => m.run())"],
    ['import.meta', 'import.meta.url'],
    ['import.meta with a from and a string after it', "import.meta.from\n'not a specifier'"],
    ['a dynamic import with a from and a string after it', "import(x).from\n'not a specifier'"],
    ['an import after the first statement', "const a = 1\nimport b from 'b'"],
  ];

  it.each(untouched)('%s', (_name, code) => {
    expect(separateImports(code)).toEqual({ imports: '', body: code });
  });

  it('does not take a call of assert after an import for attributes', () => {
    expect(separateImports("import x from 'x'\nassert(x)")).toEqual({
      imports: "import x from 'x'",
      body: 'assert(x)',
    });
    expect(separateImports("import x from 'x'\nwith (x) {}")).toEqual({
      imports: "import x from 'x'",
      body: 'with (x) {}',
    });
  });

  it('stops at a dynamic import that follows a declaration', () => {
    expect(separateImports("import a from 'a'\nimport('b')")).toEqual({
      imports: "import a from 'a'",
      body: "import('b')",
    });
  });

  it('stops at a declaration it cannot finish', () => {
    expect(separateImports("import a from 'a'\nimport b\nasync () => 1")).toEqual({
      imports: "import a from 'a'",
      body: 'import b\nasync () => 1',
    });
  });

  it('returns two empty strings for empty or blank input', () => {
    expect(separateImports('')).toEqual({ imports: '', body: '' });
    expect(separateImports('  \n\t ')).toEqual({ imports: '', body: '' });
  });

  it('trims the body', () => {
    expect(separateImports("  import a from 'a'  \n\n  async () => a  \n")).toEqual({
      imports: "import a from 'a'",
      body: 'async () => a',
    });
  });

  it('keeps what precedes a character the tokenizer cannot read', () => {
    expect(separateImports("import a from 'a'\nasync () => a #")).toEqual({
      imports: "import a from 'a'",
      body: 'async () => a #',
    });
  });
});

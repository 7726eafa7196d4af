/** docs/dialect.md's normalize table, the fence rules, the fixed-point property, and the import superset. */
import { describe, expect, it } from 'vitest';
import { normalizeCode } from '../../src/codemode/normalize.js';

// docs/dialect.md's table, row for row: what the model wrote, what the executor runs.
const dialectTable: [string, string, string][] = [
  ['a lone arrow', 'async () => 42', 'async () => 42'],
  ['a trailing expression', '1 + 2', 'async () => {\nreturn (1 + 2)\n}'],
  ['statements ahead of the expression', 'const a = 40\na + 2', 'async () => {\nconst a = 40\nreturn (a + 2)\n}'],
  ['nothing trailing to return', 'let a = 1\nif (a) { a += 1 }', 'async () => {\nlet a = 1\nif (a) { a += 1 }\n}'],
  ['a parse failure', 'return 6 * 7', 'async () => {\nreturn 6 * 7\n}'],
  [
    'a single named declaration',
    'function run() { return 42 }',
    'async () => {\nfunction run() { return 42 }\nreturn run();\n}',
  ],
  ['a default-exported arrow', 'export default async () => 42', 'async () => 42'],
  [
    'an anonymous default function',
    'export default function () { return 42 }',
    'async () => {\nreturn (function () { return 42 })();\n}',
  ],
  ['an anonymous default class', 'export default class {}', 'async () => {\nreturn (class {});\n}'],
  [
    'an import block',
    "import { helper } from 'lib.js'\nconst a = helper()\na",
    "import { helper } from 'lib.js'\nasync () => {\nconst a = helper()\nreturn (a)\n}",
  ],
  ['the empty string', '', 'async () => {}'],
];

// Further inputs, with what upstream's normalizeCode answers for each in every release from 0.1.3 to 0.5.6.
const releaseRows: [string, string][] = [
  ['  async () => 1  ', 'async () => 1'],
  ['```ts\n1\n```', 'async () => {\nreturn (1)\n}'],
  ['async () => 1 // trailing comment', 'async () => 1 // trailing comment'],
  ['```\nfoo()\n```', 'async () => {\nreturn (foo())\n}'],
  ['x => x', 'x => x'],
  [
    'async function main() { return 1 }\nmain()',
    'async () => {\nasync function main() { return 1 }\nreturn (main())\n}',
  ],
  ['{ a: 1 }', 'async () => {\n{ a: 1 }\n}'],
  ['({ a: 1 })', 'async () => {\nreturn ({ a: 1 })\n}'],
  ['await codemode.x()', 'async () => {\nreturn (await codemode.x())\n}'],
  ['export default function named() { return 1 }', 'async () => {\nfunction named() { return 1 }\nreturn named();\n}'],
  ['const f = async () => 1', 'async () => {\nconst f = async () => 1\n}'],
  ['```javascript\nreturn 1\n```', 'async () => {\nreturn 1\n}'],
  ['async function main() { return 1 }', 'async () => {\nasync function main() { return 1 }\nreturn main();\n}'],
  ['function a() {}\nfunction b() {}', 'async () => {\nfunction a() {}\nfunction b() {}\n}'],
  ['const x: number = 1\nx', 'async () => {\nconst x: number = 1\nx\n}'],
];

describe('normalizeCode', () => {
  it.each(dialectTable)('%s', (_branch, input, output) => {
    expect(normalizeCode(input)).toBe(output);
  });

  it.each(releaseRows)('%j', (input, output) => {
    expect(normalizeCode(input)).toBe(output);
  });

  it('strips the fence of the example in docs/dialect.md', () => {
    expect(normalizeCode('```js\nconst sum = 20 + 22\nsum\n```')).toBe(
      'async () => {\nconst sum = 20 + 22\nreturn (sum)\n}',
    );
  });

  it.each(['js', 'javascript', 'ts', 'typescript', 'tsx', 'jsx', ''])('strips a fence tagged %j', (tag) => {
    expect(normalizeCode(`\`\`\`${tag}\nconst sum = 20 + 22\nsum\n\`\`\``)).toBe(
      'async () => {\nconst sum = 20 + 22\nreturn (sum)\n}',
    );
    expect(normalizeCode(`  \n\`\`\`${tag}  \n  6 * 7  \n\`\`\`  \n`)).toBe('async () => {\nreturn (6 * 7)\n}');
  });

  it('leaves a fence alone unless it wraps the whole string, or has another tag', () => {
    const notWhole = 'Here you go:\n```js\n1\n```';
    expect(normalizeCode(notWhole)).toBe(`async () => {\n${notWhole}\n}`);
    const trailing = '```js\n1\n```\nthat is all';
    expect(normalizeCode(trailing)).toBe(`async () => {\n${trailing}\n}`);
    const python = '```python\nprint(1)\n```';
    expect(normalizeCode(python)).toBe(`async () => {\nreturn (${python})\n}`);
  });

  it('keeps the import block ahead of the arrow, inside a fence and with nothing after it', () => {
    expect(normalizeCode('```js\nimport a from \'a.js\';\nimport { b } from "b.js"\nawait a(b)\n```')).toBe(
      'import a from \'a.js\';\nimport { b } from "b.js"\nasync () => {\nreturn (await a(b))\n}',
    );
    expect(normalizeCode("import 'side-effect.js'")).toBe("import 'side-effect.js'\nasync () => {}");
    expect(normalizeCode("import x from 'x.js'\nexport default async () => x")).toBe(
      "import x from 'x.js'\nasync () => x",
    );
  });

  it('treats import() and import.meta as expressions, not declarations', () => {
    expect(normalizeCode("await import('lib.js')")).toBe("async () => {\nreturn (await import('lib.js'))\n}");
    expect(normalizeCode('import.meta.url')).toBe('async () => {\nreturn (import.meta.url)\n}');
  });

  it('refuses a value that is not a string, naming what it got', () => {
    expect(() => normalizeCode(undefined as unknown as string)).toThrow(
      new TypeError('normalizeCode expects the code as a string, got undefined'),
    );
  });

  describe('the fixed-point property', () => {
    const shapes = [
      ...dialectTable.map(([, input]) => input),
      ...releaseRows.map(([input]) => input).filter((input) => !input.includes(': number')),
      '```js\nconst sum = 20 + 22\nsum\n```',
    ];
    it.each(shapes)('normalizing the output of %j again returns it unchanged', (input) => {
      const once = normalizeCode(input);
      expect(normalizeCode(once)).toBe(once);
    });
  });
});

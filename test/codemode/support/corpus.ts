/**
 * Model-shaped inputs for the oracle comparison: the kinds of strings a model hands `execute`
 * (fences with every tag, comments, trailing expressions, declarations, imports, unicode,
 * TypeScript, empty and whitespace-only strings, export default forms, arrows), and free-form
 * tool names as MCP servers spell them.
 */

export interface CodeInput {
  /** Names the input in a test title. */
  label: string;
  code: string;
  /**
   * Set where ours deliberately differs from upstream: a leading import block, kept ahead of the
   * arrow. Ours must then equal `${importBlock}\n${upstream(body)}`.
   */
  superset?: { importBlock: string; body: string };
}

const arrows = [
  'async () => 42',
  'async () => { return 1 }',
  'x => x',
  '() => 1',
  'async (a, b) => a + b',
  'async () => ({ a: 1 })',
  'async () => await codemode.search({ q: "x" })',
  'async () => 1 // trailing comment',
  '/* lead */ async () => 1',
  'async () => {\n  const r = await codemode.list()\n  return r.length\n}',
  '(async () => 1)',
  'async () => 1;',
];

const trailingExpressions = [
  '1 + 2',
  'const a = 40\na + 2',
  'await codemode.x()',
  '({ a: 1 })',
  '{ a: 1 }',
  '"str"',
  // biome-ignore lint/suspicious/noTemplateCurlyInString: model output that holds a template literal.
  '`template ${1}`',
  'const r = await api.get({ id: 1 });\nr.items.map(i => i.name);',
  'let total = 0\nfor (const x of [1, 2, 3]) total += x\ntotal',
  'console.log("hi")',
  'JSON.stringify({ ok: true })',
  'a = 1, b = 2',
  '[1, 2, 3]',
  'new Date(0).toISOString()',
  'void 0',
  'typeof codemode',
  'result // comment at the end',
  '1;\n// trailing line comment',
  'foo()\n/* block */',
  'const issues = await github.list_issues({ repo: "a/b" })\nissues.filter(i => i.open).length',
  'a\n(b)',
  'let x = 1\n++x',
  '1;;',
  '"use strict"\n1',
];

const declarations = [
  'let a = 1\nif (a) { a += 1 }',
  'const f = async () => 1',
  'function run() { return 42 }',
  'async function main() { return 1 }',
  'async function main() { return 1 }\nmain()',
  'function a() {}\nfunction b() {}',
  'class A {}',
  'class A { run() { return 1 } }\nnew A().run()',
  'var x = 1;',
  'function* gen() { yield 1 }',
  'async function* agen() {}',
  'const { a, b } = { a: 1, b: 2 }',
  'label: for (;;) break label',
  'debugger',
  'throw new Error("x")',
  'try { a() } catch { b() }',
  ';;',
  'for await (const x of gen()) {}',
];

const exportDefaults = [
  'export default async () => 42',
  'export default function () { return 42 }',
  'export default class {}',
  'export default function named() { return 1 }',
  'export default class Named {}',
  'export default 1 + 2',
  'export default { a: 1 }',
  'export default async function () { return await codemode.x() }',
  'export default async function go() { return 2 }',
  'export default (() => 1)',
  'export const x = 1',
  'export {}',
  'export default ```js\n1\n```',
];

const parseFailures = [
  'return 6 * 7',
  'const r = await codemode.a()\nreturn r',
  'if (x) return 1\nreturn 2',
  'async () => { return ( }',
  'const = 1',
  '}{',
  'return',
  'import foo\nconst s = "str"\ns',
  'import { a } from\na',
];

const typescript = [
  'const x: number = 1\nx',
  'interface A { a: string }\nconst a: A = { a: "x" }\na',
  'async (): Promise<number> => 42',
  'type T = string\n1',
  'const y = <T,>(v: T) => v\ny(1)',
  'enum E { A }\nE.A',
  'function f(a: string): string { return a }',
  'const data = (await codemode.get()) as { n: number }\ndata.n',
];

const unicode = [
  'const naïve = "café"\nnaïve',
  'const 名前 = "値"\n名前',
  '"emoji 🎉"',
  'const \\u0061 = 1\na',
  '// комментарий\n1',
  'codemode["поиск"]()',
  'async () => "𝒳"',
];

const comments = [
  '// only a comment',
  '/* only block */',
  '// lead\nasync () => 1',
  'async () => 1\n// tail',
  '1 /* mid */ + 2',
  '/** doc */\nfunction d() { return 1 }',
];

const whitespace = ['', ' ', '\n\n', '\t', '\r\n', '  1  ', '\n\nasync () => 1\n\n', 'const a = 1\r\na'];

const dynamicImports = ["await import('lib.js')", 'import.meta.url', "import('x').then(m => m.default)"];

const fenceTags = ['js', 'javascript', 'ts', 'typescript', 'tsx', 'jsx', ''];

const importBlocks = [
  "import { helper } from 'lib.js'",
  'import x from "x.js";',
  "import * as ns from 'ns.js'\nimport y from 'y.js'",
  "import 'side.js';",
  "import data from './data.json' with { type: 'json' }",
  'import { "a-b" as ab } from \'m.js\'',
  "import from from 'from.js'\nimport def, { x as y } from 'z.js';",
];

const importBodies = [
  'const a = helper()\na',
  'await x()',
  'return 6 * 7',
  'async () => ns.y()',
  'export default async () => data',
  'function run() { return 1 }',
  'let a = 1\nif (a) { a += 1 }',
  '',
  'const v: number = 1\nv',
  '"é"',
];

function fence(tag: string, body: string): string {
  return `\`\`\`${tag}\n${body}\n\`\`\``;
}

export function codeCorpus(): CodeInput[] {
  const groups = {
    arrows,
    trailingExpressions,
    declarations,
    exportDefaults,
    parseFailures,
    typescript,
    unicode,
    comments,
    whitespace,
    dynamicImports,
  };
  const inputs: CodeInput[] = [];
  let rotation = 0;
  for (const [group, snippets] of Object.entries(groups)) {
    snippets.forEach((snippet, index) => {
      inputs.push({ label: `${group}[${index}] raw`, code: snippet });
      const tag = fenceTags[rotation++ % fenceTags.length]!;
      inputs.push({ label: `${group}[${index}] in a ${tag || 'bare'} fence`, code: fence(tag, snippet) });
      if (index % 3 === 0) inputs.push({ label: `${group}[${index}] padded`, code: `\n  ${snippet}\t \n` });
    });
  }
  // Fences that must not be stripped: another tag, prose around them, a second fence.
  inputs.push({ label: 'python fence', code: fence('python', 'print(1)') });
  inputs.push({ label: 'prose before a fence', code: `Here you go:\n${fence('js', '1 + 1')}` });
  inputs.push({ label: 'prose after a fence', code: `${fence('js', '1 + 1')}\nThat is all.` });
  inputs.push({ label: 'two fences', code: `${fence('js', 'const a = 1')}\n${fence('js', 'a')}` });
  inputs.push({ label: 'fence with spaces after the tag', code: '```js   \n1 + 1\n```' });
  inputs.push({ label: 'fence with CRLF', code: '```js\r\nconst a = 1\r\na\r\n```' });
  inputs.push({ label: 'fence on one line', code: '```1 + 1```' });
  inputs.push({ label: 'unclosed fence', code: '```js\n1 + 1' });
  inputs.push({ label: 'empty fence', code: '```js\n```' });
  inputs.push({ label: 'fence around whitespace', code: '```\n   \n```' });

  importBlocks.forEach((importBlock, blockIndex) => {
    importBodies.forEach((body, bodyIndex) => {
      const code = body ? `${importBlock}\n${body}` : importBlock;
      inputs.push({ label: JSON.stringify(code), code, superset: { importBlock, body } });
      const tag = fenceTags[(blockIndex + bodyIndex) % fenceTags.length]!;
      const fenced = fence(tag, code);
      inputs.push({ label: JSON.stringify(fenced), code: fenced, superset: { importBlock, body } });
    });
  });
  return inputs;
}

/** A small deterministic generator, so the corpus is the same on every run. */
function* pseudoRandom(seed: number): Generator<number> {
  let state = seed;
  for (;;) {
    state = (state * 1103515245 + 12345) % 2147483648;
    yield state / 2147483648;
  }
}

const nameAlphabet = [
  'a',
  'b',
  'Z',
  'q',
  '0',
  '7',
  '-',
  '.',
  ' ',
  '\t',
  '_',
  '$',
  ':',
  '/',
  '!',
  '@',
  'é',
  'ß',
  '🔍',
  'д',
  '中',
  '\u00a0',
  '\u2028',
];

export function toolNameCorpus(reservedWords: Iterable<string>): string[] {
  const names: string[] = [];
  for (const word of reservedWords) {
    names.push(word, word.toUpperCase(), `-${word}`, `${word}-x`, `1${word}`, `${word}_`, ` ${word} `, `${word}!`);
  }
  names.push(
    'list-issues',
    'github.list_issues',
    'mcp__server__tool',
    'send email',
    'tool\ttab',
    'a\nb',
    'files:read!',
    'über',
    'naïve-search',
    '日本語',
    '🔍',
    '',
    ' ',
    '-',
    '.',
    '$',
    '_',
    '0',
    '123abc',
    '1',
    '$1',
    'a$b',
    'get-weather-v2',
    'x.y.z',
    'a--b',
    '__proto__',
    'constructor',
    'toString',
    'hasOwnProperty',
    'then',
    'NaN',
    'Infinity',
    'async',
    'of',
    'get',
    'set',
    'tab\tname',
    'emoji🎉tool',
    'Mixed-Case.Name',
    '9lives',
    '-1',
    '.delete',
    'delete.',
    'de lete',
    '!class',
    'поиск🔍',
    '2fa-verify',
    'search.code',
    'send\u00a0email',
    'line\u2028sep',
  );
  const random = pseudoRandom(20260426);
  for (let i = 0; i < 120; i += 1) {
    const length = 1 + Math.floor(random.next().value * 10);
    let name = '';
    for (let j = 0; j < length; j += 1) name += nameAlphabet[Math.floor(random.next().value * nameAlphabet.length)];
    names.push(name);
  }
  return names;
}

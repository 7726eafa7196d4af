/** The loader on fixture catalogues in a temp dir: every complaint names its file, line and case id. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { LoadedCase } from './case-model.js';
import {
  BOUNDARIES_FILE,
  BOUNDARIES_SCHEMA_COMMENT,
  CaseFileError,
  loadCatalogue,
  SCHEMA_COMMENT,
} from './load-cases.js';

let dir: string;
let doc: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'cases-'));
  doc = join(dir, 'upstream.md');
  writeFileSync(doc, '# Upstream\n\n## Unknown tools\n\nText.\n\n### The binary codec\n\nText.\n');
  writeFileSync(
    join(dir, BOUNDARIES_FILE),
    `${BOUNDARIES_SCHEMA_COMMENT}\n- id: codec\n  release: 0.3.7\n  reason: the binary codec arrived in 0.3.7\n  basis: The binary codec\n`,
  );
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

function write(name: string, body: string, header = SCHEMA_COMMENT): void {
  writeFileSync(join(dir, name), `${header}\n${body}`);
}

const GOOD = `
- id: adds
  description: Two numbers through a tool.
  features: [dispatch]
  code: async () => codemode.add(20, 22)
  providers:
    - tools: { add: { add: true } }
  expect:
    result: 42
    logs: []
`;

function problems(): string {
  try {
    loadCatalogue(dir, doc);
  } catch (error) {
    expect(error).toBeInstanceOf(CaseFileError);
    return (error as Error).message;
  }
  throw new Error('expected the catalogue to be refused');
}

describe('loadCatalogue', () => {
  it('loads the cases with their file and line, and the boundaries by id', () => {
    write('good.yaml', GOOD);
    const { cases, boundaries } = loadCatalogue(dir, doc);
    expect(cases).toHaveLength(1);
    expect(cases[0]).toMatchObject({ id: 'adds', line: 3, expect: { result: 42, logs: [] } });
    expect(cases[0]!.file).toMatch(/good\.yaml$/);
    expect(boundaries.get('codec')).toEqual({
      id: 'codec',
      release: '0.3.7',
      reason: 'the binary codec arrived in 0.3.7',
      basis: 'The binary codec',
    });
  });

  it('names the file, the line of the bad field and the case id', () => {
    write(
      'dispatch.yaml',
      `${GOOD}\n- id: args-spread\n  description: d\n  features: [args]\n  code: "1"\n  expect:\n    logs: "not a list"\n`,
    );
    expect(problems()).toMatch(/dispatch\.yaml:18 \(case "args-spread"\): \/expect\/logs must be array/);
  });

  it('requires expect', () => {
    write('bare.yaml', GOOD.replace(/ {2}expect:\n {4}result: 42\n {4}logs: \[\]\n/, ''));
    expect(problems()).toMatch(/bare\.yaml:3 \(case "adds"\): must have required property 'expect'/);
  });

  it('points at an unknown property by its key line', () => {
    write('unknown.yaml', GOOD.replace('    logs: []', '    logs: []\n    reslt: 1'));
    expect(problems()).toMatch(/unknown\.yaml:12 \(case "adds"\): \/expect has an unknown property "reslt"/);
  });

  it('refuses an id used twice across files, naming both places', () => {
    write('a.yaml', GOOD);
    write('b.yaml', `\n\n${GOOD}`);
    expect(problems()).toMatch(/b\.yaml:5 \(case "adds"\): duplicate id, first declared at .*a\.yaml:3/);
  });

  it('refuses a skip on a boundary the list does not have, naming the ones it has', () => {
    write('skip.yaml', `${GOOD}  skipOn:\n    - before: codecs\n`);
    expect(problems()).toMatch(
      /skip\.yaml:13 \(case "adds"\): \/skipOn\/0\/before names the boundary "codecs", which cases\/boundaries\.yaml does not list; the boundaries are: codec/,
    );
  });

  it('refuses a skip entry with both sides, or with neither', () => {
    write('both.yaml', `${GOOD}  skipOn:\n    - { before: codec, from: codec }\n`);
    expect(problems()).toMatch(
      /both\.yaml:13 \(case "adds"\): \/skipOn\/0 must name one boundary, with before or from/,
    );
  });

  it('refuses a basis that is not a heading of the upstream doc', () => {
    write('basis.yaml', GOOD.replace('  features: [dispatch]', '  features: [dispatch]\n  basis: Unknown tool'));
    expect(problems()).toMatch(
      /basis\.yaml:6 \(case "adds"\): \/basis names the basis "Unknown tool", which is not a heading/,
    );
    writeFileSync(
      join(dir, 'basis.yaml'),
      `${SCHEMA_COMMENT}\n${GOOD.replace('  features: [dispatch]', '  features: [dispatch]\n  basis: Unknown tools')}`,
    );
    expect(loadCatalogue(dir, doc).cases[0]?.basis).toBe('Unknown tools');
  });

  it('refuses an upstream expectation that equals expect', () => {
    write(
      'same.yaml',
      `${GOOD}  upstream:\n    expect: { result: 42, logs: [] }\n    reason: upstream does the same thing\n`,
    );
    expect(problems()).toMatch(/same\.yaml:12 \(case "adds"\): \/upstream equals expect/);
  });

  it('refuses upstream and skipOn on a case no reference column runs, computed from the request builder', () => {
    const unsafe = `${GOOD}  unsafeOnReference: a spin wedges wrangler dev\n  upstream:\n    expect: { result: 1 }\n    reason: it gives something else\n`;
    write('unsafe.yaml', unsafe);
    expect(problems()).toMatch(
      /unsafe\.yaml:13 \(case "adds"\): \/upstream cannot be checked: no reference column runs this case \(unsafe on the reference/,
    );
    const refused = `${GOOD}  options: { countHostWaits: false }\n  skipOn:\n    - before: codec\n`;
    write('unsafe.yaml', refused);
    expect(problems()).toMatch(
      /unsafe\.yaml:13 \(case "adds"\): \/skipOn skips reference columns that never run this case anyway \(Case "adds" cannot be sent/,
    );
  });

  it('refuses calls without recordCalls, and recordCalls without calls in expect', () => {
    write(
      'calls.yaml',
      `${GOOD}  upstream:\n    expect: { result: 42, calls: [codemode.add] }\n    reason: upstream reports it otherwise\n`,
    );
    expect(problems()).toMatch(
      /calls\.yaml:13 \(case "adds"\): \/upstream\/expect\/calls needs options\.recordCalls: true/,
    );
    write('calls.yaml', `${GOOD}  options: { recordCalls: true }\n`);
    expect(problems()).toMatch(
      /calls\.yaml:12 \(case "adds"\): \/options\/recordCalls records the host calls, but expect has no calls/,
    );
    write(
      'calls.yaml',
      `${GOOD.replace('logs: []', 'logs: []\n    calls: [codemode.add]')}  options: { recordCalls: true }\n`,
    );
    expect((loadCatalogue(dir, doc).cases[0] as LoadedCase | undefined)?.expect.calls).toEqual(['codemode.add']);
  });

  it('refuses a skip expectation that equals what the other columns expect', () => {
    write('skipsame.yaml', `${GOOD}  skipOn:\n    - before: codec\n      expect: { result: 42, logs: [] }\n`);
    expect(problems()).toMatch(
      /skipsame\.yaml:14 \(case "adds"\): \/skipOn\/0\/expect equals what the other columns expect/,
    );
  });

  it('refuses a matcher whose pattern is not a regular expression, wherever it stands', () => {
    write(
      'regex.yaml',
      `${GOOD.replace('result: 42', 'result: { match: "(" }')}  skipOn:\n    - before: codec\n      expect: { error: { match: "[" } }\n`,
    );
    const message = problems();
    expect(message).toMatch(
      /regex\.yaml:10 \(case "adds"\): \/expect\/result\/match is not a valid regular expression/,
    );
    expect(message).toMatch(
      /regex\.yaml:14 \(case "adds"\): \/skipOn\/0\/expect\/error\/match is not a valid regular expression/,
    );
  });

  it('refuses a file without the schema comment on its first line, and a YAML syntax error with its line', () => {
    write('bare.yaml', GOOD, '# cases');
    write('broken.yaml', `${GOOD}- id: [unclosed\n`);
    const message = problems();
    expect(message).toMatch(
      /bare\.yaml:1: the file must begin with the line # yaml-language-server: \$schema=\.\.\/schema\/case\.schema\.json/,
    );
    expect(message).toMatch(/broken\.yaml:1[23]: YAML /);
  });

  it('says a key indented one space too far in our words, at its own line, with its case', () => {
    // The first case is fine; in the second, `code:` is one space deeper than `description:`.
    const second = GOOD.replace('- id: adds', '- id: second').replace(
      '  code: async () => codemode.add(20, 22)',
      '   code: async () => codemode.add(20, 22)',
    );
    write('indent.yaml', `${GOOD}${second}`);
    // Line 1 is the schema comment and GOOD takes lines 2 (blank) to 11; `code:` of the second case is line 16.
    expect(problems()).toBe(
      `${join(dir, 'indent.yaml')}:16 (case "second")` +
        ': "code:" starts at column 4, but "features:" on line 15 starts at column 3: ' +
        'the keys of one mapping start at the same column, and YAML reads a line indented deeper as part of the value above it',
    );
  });

  it('finds the key out of line where the YAML library stops a line earlier, or takes it for a sequence item', () => {
    // After a plain value the library reports the line of that value ("Nested mappings are not
    // allowed in compact mappings"); the mistake is the line below it.
    write(
      'after-value.yaml',
      GOOD.replace('  features: [dispatch]\n  code:', '  features: [dispatch]\n   code:').replace(
        '  description: Two numbers through a tool.\n  features: [dispatch]\n',
        '  features: [dispatch]\n  description: Two numbers through a tool.\n',
      ),
    );
    expect(problems()).toMatch(
      /after-value\.yaml:6 \(case "adds"\): "code:" starts at column 4, but "description:" on line 5 starts at column 3: /,
    );
  });

  it('says a key indented less than its mapping, a tab, and a key given twice, each with its case', () => {
    write('less.yaml', GOOD.replace('    logs: []', '   logs: []'));
    expect(problems()).toMatch(
      /less\.yaml:11 \(case "adds"\): "logs:" starts at column 4, but "result:" on line 10 starts at column 5: the keys of one mapping start at the same column$/,
    );
    rmSync(join(dir, 'less.yaml'));
    write('outdented.yaml', GOOD.replace('  code:', ' code:'));
    expect(problems()).toMatch(
      /outdented\.yaml:6 \(case "adds"\): "code:" starts at column 2, but "features:" on line 5 starts at column 3: /,
    );
    rmSync(join(dir, 'outdented.yaml'));
    write('tab.yaml', GOOD.replace('    - tools:', '\t- tools:'));
    expect(problems()).toBe(
      `${join(dir, 'tab.yaml')}:8 (case "adds"): a tab indents this line: YAML indents with spaces only`,
    );
    // A tab before a key of the mapping, where the library says `Unexpected scalar at node end`.
    write('tab.yaml', GOOD.replace('  features:', '\tfeatures:'));
    expect(problems()).toBe(
      `${join(dir, 'tab.yaml')}:5 (case "adds"): a tab indents this line: YAML indents with spaces only`,
    );
    // A tab before the key after a block scalar, which the library takes for the block cut short.
    write(
      'tab.yaml',
      GOOD.replace(
        '  code: async () => codemode.add(20, 22)\n  providers:',
        '  code: |-\n    async () => codemode.add(20, 22)\n\tproviders:',
      ),
    );
    expect(problems()).toBe(
      `${join(dir, 'tab.yaml')}:8 (case "adds"): a tab indents this line: YAML indents with spaces only`,
    );
    rmSync(join(dir, 'tab.yaml'));
    write('twice.yaml', GOOD.replace('    logs: []', '    logs: []\n    result: 43'));
    expect(problems()).toBe(
      `${join(dir, 'twice.yaml')}:12 (case "adds"): the key "result" appears twice in one mapping`,
    );
  });

  it('reports a line dedented inside a block scalar as the first YAML error, with a hint about its indentation', () => {
    // The first case is fine; the second's code block has a line at column 1 in its middle. The
    // library ends the block there and reports every later line again, over a thousand errors in a
    // real file: the first one and where the block went wrong is what helps.
    const second = GOOD.replace('- id: adds', '- id: second').replace(
      '  code: async () => codemode.add(20, 22)',
      '  code: |-\n    async () => {\n      const sum = await codemode.add(20, 22)\nreturn sum\n    }',
    );
    write('dedent.yaml', `${GOOD}${second}`);
    // Line 1 is the schema comment and GOOD takes lines 2 (blank) to 11; `return sum` is line 19.
    const message = problems();
    expect(message).toMatch(
      /^.*dedent\.yaml:19 \(case "second"\): YAML [^\n]+: this line starts at column 1, inside the block scalar "code: \|-" of line 16, whose lines start at column 5: /,
    );
    expect(message).toContain(
      'indent every line of a block scalar deeper than its key, and at least as deep as its first',
    );
    expect(message).not.toMatch(/more YAML errors/);
    // The same slip at the column of the case's keys.
    write('dedent.yaml', `${GOOD}${second.replace('\nreturn sum', '\n  return sum')}`);
    expect(problems()).toMatch(
      /dedent\.yaml:19 \(case "second"\): YAML [^\n]+: this line starts at column 3, inside the block scalar "code: \|-" of line 16/,
    );
    // A one-line block whose only line sits at its key's column, as most of the catalogue's are.
    const oneLine = GOOD.replace('- id: adds', '- id: second').replace(
      '  code: async () => codemode.add(20, 22)',
      '  code: |-\n  async () => codemode.add(20, 22)',
    );
    write('dedent.yaml', `${GOOD}${oneLine}`);
    expect(problems()).toMatch(
      /dedent\.yaml:17 \(case "second"\): YAML [^\n]+: this line starts at column 3, inside the block scalar "code: \|-" of line 16, whose key starts at column 3: /,
    );
  });

  it('says what a skip entry looks like when one is not a mapping', () => {
    write('skipword.yaml', `${GOOD}  skipOn: [ latest ]\n`);
    expect(problems()).toBe(
      `${join(dir, 'skipword.yaml')}:12 (case "adds"): /skipOn/0 is the string "latest", but a skip entry is a mapping such as { before: args-spread }: it must name one boundary, with before or from, and may add a note`,
    );
  });

  it('suggests the property a mistyped key was meant to be, at every depth', () => {
    write(
      'typo.yaml',
      GOOD.replace('  providers:', '  provders:').replace('    logs: []', '    logs: []\n    reslt: 1'),
    );
    const message = problems();
    expect(message).toContain(
      `typo.yaml:7 (case "adds"): has an unknown property "provders"; did you mean "providers"?`,
    );
    expect(message).toContain(
      `typo.yaml:12 (case "adds"): /expect has an unknown property "reslt"; did you mean "result"?`,
    );
    // A tool's behaviour, whose names the schema lists as propertyNames.
    write('typo.yaml', GOOD.replace('{ add: { add: true } }', '{ add: { return: 42 } }'));
    expect(problems()).toContain(
      `typo.yaml:8 (case "adds"): /providers/0/tools/add has an unknown property "return"; did you mean "returns"?`,
    );
    write('typo.yaml', GOOD.replace('    logs: []', '    logs: []\n    zebra: 1'));
    expect(problems()).toMatch(/\/expect has an unknown property "zebra"$/);
  });

  it('checks the boundaries file against its own schema', () => {
    writeFileSync(
      join(dir, BOUNDARIES_FILE),
      `${BOUNDARIES_SCHEMA_COMMENT}\n- id: codec\n  release: "0.3"\n  reason: the binary codec arrived\n`,
    );
    write('good.yaml', GOOD);
    expect(problems()).toMatch(/boundaries\.yaml:3 \(case "codec"\): \/release must match pattern/);
  });
});

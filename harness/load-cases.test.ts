/** The loader on fixture files in a temp dir: a malformed case names its file, line and id. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CaseFileError, loadCaseFile, loadCatalogue, SCHEMA_COMMENT } from './load-cases.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'cases-'));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

function write(name: string, body: string, header = SCHEMA_COMMENT): string {
  const file = join(dir, name);
  writeFileSync(file, `${header}\n${body}`);
  return file;
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

function errorOf(action: () => unknown): string {
  try {
    action();
  } catch (error) {
    expect(error).toBeInstanceOf(CaseFileError);
    return (error as Error).message;
  }
  throw new Error('expected the load to fail');
}

describe('loadCaseFile', () => {
  it('loads a well-formed file and records each case line', () => {
    const file = write('good.yaml', GOOD);
    const [item] = loadCaseFile(file);
    expect(item).toMatchObject({ id: 'adds', line: 3, expect: { result: 42, logs: [] } });
    expect(item!.file).toMatch(/good\.yaml$/);
  });

  it('names the file, the line of the bad field and the case id', () => {
    const file = write(
      'dispatch.yaml',
      `${GOOD}
- id: args-spread
  description: Arguments spread.
  features: [args]
  code: async () => 1
  expect:
    logs: "not a list"
`,
    );
    const message = errorOf(() => loadCaseFile(file));
    expect(message).toMatch(/dispatch\.yaml:18 \(case "args-spread"\): \/expect\/logs must be array/);
  });

  it('points at an unknown property by its key line', () => {
    const file = write('unknown.yaml', GOOD.replace('    logs: []', '    logs: []\n    reslt: 1'));
    expect(errorOf(() => loadCaseFile(file))).toMatch(
      /unknown\.yaml:12 \(case "adds"\): \/expect has an unknown property "reslt"/,
    );
  });

  it('refuses a feature outside the closed list and lists the allowed ones', () => {
    const file = write('feature.yaml', GOOD.replace('[dispatch]', '[dispatch, telepathy]'));
    expect(errorOf(() => loadCaseFile(file))).toMatch(
      /feature\.yaml:5 \(case "adds"\): \/features\/1 must be one of: "result", "dispatch"/,
    );
  });

  it('requires a reason beside reference: false', () => {
    const file = write('reason.yaml', GOOD.replace('  expect:', '  reference: false\n  expect:'));
    expect(errorOf(() => loadCaseFile(file))).toMatch(
      /reason\.yaml:3 \(case "adds"\): must have required property 'reason'/,
    );
  });

  it('requires a reason on every skipOn entry', () => {
    const file = write('skip.yaml', `${GOOD}  skipOn:\n    - versions: ["0.2.2"]\n`);
    expect(errorOf(() => loadCaseFile(file))).toMatch(
      /skip\.yaml:13 \(case "adds"\): \/skipOn\/0 must have required property 'reason'/,
    );
  });

  it('refuses a case-level reason without reference: false', () => {
    const file = write('stray.yaml', GOOD.replace('  expect:', '  reason: because it is different\n  expect:'));
    expect(errorOf(() => loadCaseFile(file))).toMatch(/stray\.yaml:9 \(case "adds"\): \/reason is not allowed here/);
  });

  it('refuses a tool with no known behaviour', () => {
    const file = write('tool.yaml', GOOD.replace('{ add: { add: true } }', '{ add: { ad: true } }'));
    expect(errorOf(() => loadCaseFile(file))).toMatch(
      /tool\.yaml:8 \(case "adds"\): \/providers\/0\/tools\/add has an unknown property "ad"/,
    );
  });

  it('refuses a matcher whose pattern is not a regular expression', () => {
    const file = write('regex.yaml', GOOD.replace('result: 42', 'result: { match: "(" }'));
    expect(errorOf(() => loadCaseFile(file))).toMatch(
      /regex\.yaml:10 \(case "adds"\): \/expect\/result\/match is not a valid regular expression/,
    );
  });

  it('refuses a file without the schema comment on its first line', () => {
    const file = write('bare.yaml', GOOD, '# cases');
    expect(errorOf(() => loadCaseFile(file))).toMatch(
      /bare\.yaml:1: the file must begin with the line # yaml-language-server: \$schema=\.\.\/schema\/case\.schema\.json/,
    );
  });

  it('reports a YAML syntax error with its line', () => {
    const file = write('broken.yaml', `${GOOD}- id: [unclosed\n`);
    expect(errorOf(() => loadCaseFile(file))).toMatch(/broken\.yaml:1[23]: YAML /);
  });

  it('reports a case without an id by its line', () => {
    const file = write('noid.yaml', GOOD.replace('- id: adds\n  description', '- description'));
    expect(errorOf(() => loadCaseFile(file))).toMatch(/noid\.yaml:3: must have required property 'id'/);
  });
});

describe('loadCatalogue', () => {
  it('refuses an id declared twice across files, naming both places', () => {
    write('a.yaml', GOOD);
    write('b.yaml', `\n\n${GOOD}`);
    expect(errorOf(() => loadCatalogue(dir))).toMatch(
      /b\.yaml:5 \(case "adds"\): duplicate id, first declared at .*a\.yaml:3/,
    );
  });

  it('reports every malformed file, not only the first', () => {
    write('a.yaml', GOOD.replace('[dispatch]', '[nope]'));
    write('b.yaml', GOOD.replace('result: 42', 'result: 42\n    lgs: []'));
    const message = errorOf(() => loadCatalogue(dir));
    expect(message).toMatch(/a\.yaml:5 \(case "adds"\)/);
    expect(message).toMatch(/b\.yaml:11 \(case "adds"\)/);
  });
});

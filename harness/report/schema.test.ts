import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { fixtureRun, greenFixtureRun } from './fixture.js';
import { CELL_STATUSES } from './model.js';
import { matrixProblems, matrixSchema } from './validate-matrix.js';
import { MATRIX_SCHEMA_REF, writeReports } from './write-reports.js';

const dir = mkdtempSync(join(tmpdir(), 'matrix-schema-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A fresh copy of the fixture's matrix.json, as written, to break on purpose. */
function writtenMatrix(): Record<string, any> {
  writeReports(fixtureRun(), dir);
  return JSON.parse(readFileSync(join(dir, 'matrix.json'), 'utf8')) as Record<string, any>;
}

describe('schema/matrix.schema.json', () => {
  it('is JSON Schema 2020-12 and names exactly the statuses the model has', () => {
    const schema = matrixSchema() as any;
    expect(schema.$schema).toBe('https://json-schema.org/draft/2020-12/schema');
    expect(schema.$defs.status.enum).toEqual([...CELL_STATUSES]);
  });

  it('accepts the matrix.json the writer produces, for a broken run and a green one', () => {
    const broken = writtenMatrix();
    expect(broken.$schema).toBe(MATRIX_SCHEMA_REF);
    expect(matrixProblems(broken)).toEqual([]);
    writeReports(greenFixtureRun(), dir);
    expect(matrixProblems(JSON.parse(readFileSync(join(dir, 'matrix.json'), 'utf8')))).toEqual([]);
  });

  it('accepts the committed reports/matrix.json', () => {
    const committed = JSON.parse(readFileSync(join(import.meta.dirname, '..', '..', 'reports', 'matrix.json'), 'utf8'));
    expect(matrixProblems(committed)).toEqual([]);
  });

  it('refuses a cell that fails without a reason', () => {
    const matrix = writtenMatrix();
    const index = matrix.cells.findIndex((cell: any) => cell.status === 'fail');
    delete matrix.cells[index].reason;
    expect(matrixProblems(matrix)).toContain(`/cells/${index}: must have required property 'reason'`);
  });

  it('refuses an unknown status, a diff on a pass, and an unexpected pass that is not a failure', () => {
    const matrix = writtenMatrix();
    const passIndex = matrix.cells.findIndex((cell: any) => cell.status === 'pass');
    matrix.cells[passIndex].diff = '- a\n+ b';
    const staleIndex = matrix.cells.findIndex((cell: any) => cell.unexpectedPass);
    matrix.cells[staleIndex].status = 'skip';
    matrix.cells[0].status = 'flaky';
    const problems = matrixProblems(matrix);
    expect(problems).toContain(`/cells/${passIndex}/status: must be equal to constant`);
    expect(problems).toContain(`/cells/${staleIndex}/status: must be equal to constant`);
    expect(
      problems.some((problem) => problem.startsWith('/cells/0/status: must be equal to one of the allowed values')),
    ).toBe(true);
  });

  it('refuses a column without its versions, and fields the model does not have', () => {
    const matrix = writtenMatrix();
    delete matrix.columns[2].versions.workerd;
    matrix.summary.extra = 1;
    const problems = matrixProblems(matrix);
    expect(problems).toContain(`/columns/2/versions: must have required property 'workerd'`);
    expect(problems).toContain('/summary: must NOT have additional properties');
  });
});

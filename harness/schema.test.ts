/**
 * The schemas own the formats: every property carries the description an editor shows on hover,
 * the matrix schema accepts what the writer produces and refuses what the model forbids, and the
 * committed snapshot is a valid run.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CELL_STATUSES } from './report/model.js';
import { matrixProblems, matrixSchema, writeReports } from './report/write-reports.js';
import { fixtureRun, greenFixtureRun } from './test-support/report-run.js';

const ROOT = join(import.meta.dirname, '..');
const schema = (name: string) => JSON.parse(readFileSync(join(ROOT, 'schema', name), 'utf8')) as unknown;

/** Every `properties` entry anywhere in a schema that has no description of its own, by path. */
function undescribed(node: unknown, path = '#'): string[] {
  if (node === null || typeof node !== 'object') return [];
  const found: string[] = [];
  const record = node as Record<string, unknown>;
  if (record.properties && typeof record.properties === 'object') {
    for (const [name, property] of Object.entries(record.properties as Record<string, unknown>)) {
      if (typeof (property as { description?: unknown }).description !== 'string')
        found.push(`${path}/properties/${name}`);
    }
  }
  // Conditions (if/then/else) restate properties to constrain them; the description lives where they are defined.
  for (const [key, value] of Object.entries(record))
    if (!['if', 'then', 'else', 'not'].includes(key)) found.push(...undescribed(value, `${path}/${key}`));
  return found;
}

describe('schemas', () => {
  it.each(['case.schema.json', 'boundaries.schema.json', 'matrix.schema.json'])(
    '%s describes every property',
    (name) => {
      const found = undescribed(schema(name));
      expect(found).toEqual([]);
    },
  );

  it('the undescribed check can fail', () => {
    expect(
      undescribed({ properties: { a: { type: 'string' }, b: { description: 'b', properties: { c: {} } } } }),
    ).toEqual(['#/properties/a', '#/properties/b/properties/c']);
  });
});

describe('schema/matrix.schema.json', () => {
  const dir = mkdtempSync(join(tmpdir(), 'matrix-schema-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const written = () => {
    writeReports(fixtureRun(), dir);
    return JSON.parse(readFileSync(join(dir, 'matrix.json'), 'utf8')) as Record<string, any>;
  };

  it('names exactly the statuses the model has', () => {
    expect((matrixSchema() as any).$defs.status.enum).toEqual([...CELL_STATUSES]);
  });

  it('accepts what the writer produces, for a broken run and a green one', () => {
    expect(matrixProblems(written())).toEqual([]);
    writeReports(greenFixtureRun(), dir);
    expect(matrixProblems(JSON.parse(readFileSync(join(dir, 'matrix.json'), 'utf8')))).toEqual([]);
  });

  it('refuses a cell that fails without a reason, a diff on a pass, and a stale skip that is not a failure', () => {
    const matrix = written();
    const failing = matrix.cells.findIndex((cell: any) => cell.status === 'fail' && !cell.unexpectedPass);
    delete matrix.cells[failing].reason;
    const passing = matrix.cells.findIndex((cell: any) => cell.status === 'pass');
    matrix.cells[passing].diff = 'x';
    const stale = matrix.cells.findIndex((cell: any) => cell.unexpectedPass);
    matrix.cells[stale].status = 'skip';
    const last = matrix.cells.length - 1;
    matrix.cells[last].status = 'flaky';
    const problems = matrixProblems(matrix);
    expect(problems).toContain(`/cells/${failing}: must have required property 'reason'`);
    expect(problems).toContain(`/cells/${passing}/diff: boolean schema is false`);
    expect(problems).toContain(`/cells/${stale}/status: must be equal to constant`);
    expect(
      problems.some((problem) =>
        problem.startsWith(`/cells/${last}/status: must be equal to one of the allowed values`),
      ),
    ).toBe(true);
  });

  it('accepts the committed snapshot, reports/matrix.json', () => {
    const committed = JSON.parse(readFileSync(join(ROOT, 'reports', 'matrix.json'), 'utf8'));
    expect(matrixProblems(committed)).toEqual([]);
  });
});

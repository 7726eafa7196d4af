/**
 * The forge's workflows (.github/workflows): each parses, validates against SchemaStore's GitHub
 * workflow schema (vendored in schema/vendor/, so no network), and runs only commands that README
 * or docs/matrix.md documents, line for line, so a reader can run what CI runs.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { DEFAULT_COLUMNS, WORKERD_NEWEST } from '../columns.js';

const ROOT = join(import.meta.dirname, '..', '..');
const WORKFLOWS = join(ROOT, '.github', 'workflows');
const schema = JSON.parse(readFileSync(join(ROOT, 'schema', 'vendor', 'github-workflow.json'), 'utf8'));
// SchemaStore's schema uses formats and keywords ajv's strict mode would refuse; it is validated as written.
const validate = new Ajv({ strict: false, allErrors: true }).compile(schema);
const documented = ['README.md', join('docs', 'matrix.md')]
  .map((file) => readFileSync(join(ROOT, file), 'utf8'))
  .join('\n');

type Workflow = { jobs?: Record<string, { steps?: Array<{ run?: string }> }> };

/** Every line of every `run:` step that neither README nor docs/matrix.md writes out. */
function undocumentedCommands(workflow: Workflow): string[] {
  const lines = Object.values(workflow.jobs ?? {}).flatMap((job) =>
    (job.steps ?? []).flatMap((step) => (step.run ?? '').split('\n').map((line) => line.trim())),
  );
  return lines.filter((line) => line && !line.startsWith('#') && !documented.includes(line));
}

const files = readdirSync(WORKFLOWS).filter((name) => /\.ya?ml$/.test(name));

describe('.github/workflows', () => {
  it('has the nightly and the CI workflow', () => {
    expect(files.sort()).toEqual(['ci.yml', 'nightly.yml']);
  });

  for (const name of files) {
    it(`${name} parses, validates against the GitHub workflow schema, and runs only documented commands`, () => {
      const workflow = parse(readFileSync(join(WORKFLOWS, name), 'utf8')) as Workflow;
      expect(validate(workflow) ? [] : validate.errors).toEqual([]);
      expect(undocumentedCommands(workflow)).toEqual([]);
    });
  }

  it('runs the nightly on a schedule and on demand, a fuzz budget before the matrix, failing when upstream changed, and CI on every push and pull request', () => {
    const nightly = parse(readFileSync(join(WORKFLOWS, 'nightly.yml'), 'utf8'));
    expect(Object.keys(nightly.on).sort()).toEqual(['schedule', 'workflow_dispatch']);
    const runs = nightly.jobs.matrix.steps.map((step: { run?: string }) => step.run).filter(Boolean);
    expect(runs).toContain('npm run matrix -- --fail-on-upstream-change');
    // Every default column, workerd's newest release among them: no run of the nightly narrows them.
    expect(DEFAULT_COLUMNS).toContain(WORKERD_NEWEST);
    expect(runs.filter((run: string) => run.includes('--columns'))).toEqual([]);
    // The night's fuzz budget runs first, so the matrix's report shows what it found.
    expect(runs.indexOf('npm run fuzz -- --budget-seconds 900 --count 5000 --drafts reports/run/drafts')).toBe(
      runs.indexOf('npm run matrix -- --fail-on-upstream-change') - 1,
    );
    const ci = parse(readFileSync(join(WORKFLOWS, 'ci.yml'), 'utf8'));
    expect(Object.keys(ci.on).sort()).toEqual(['pull_request', 'push']);
    expect(ci.jobs.test.steps.map((step: { run?: string }) => step.run).filter(Boolean)).toEqual(['.ci/run']);
  });

  it('catches a workflow the schema refuses and a command no doc names', () => {
    expect(validate({ on: 'push', jobs: { test: { steps: [{ run: 'true' }] } } })).toBe(false); // no runs-on
    expect(
      undocumentedCommands({ jobs: { test: { steps: [{ run: 'npm ci --no-audit --no-fund\ncurl x | sh' }] } } }),
    ).toEqual(['curl x | sh']);
  });
});

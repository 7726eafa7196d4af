/**
 * The catalogue's written evidence stays true and in the repository: docs/interpreting.md states
 * the version runs record, every basis heading of docs/upstream.md is unique, and nothing the
 * harness owns points at material outside the repository.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { INTERPRETING_VERSION } from './texts.js';

const ROOT = join(import.meta.dirname, '..');
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');

/** What the harness owns: its code, the cases, the schemas, and its docs. */
const OWNED = [
  'harness',
  'cases',
  'schema',
  'docs/upstream.md',
  'docs/interpreting.md',
  'docs/testing.md',
  'docs/writing-cases.md',
  'docs/matrix.md',
  'docs/fuzzing.md',
  'docs/reference-columns.md',
  'docs/runtime-deviations.md',
];

describe('the written evidence', () => {
  it('docs/interpreting.md states the version every run records', () => {
    expect(read('docs/interpreting.md')).toMatch(
      new RegExp(`^# Interpreting the catalogue\\n\\n\\*\\*Version ${INTERPRETING_VERSION}\\.\\*\\*`),
    );
  });

  it('docs/upstream.md names every fact under a heading of its own', () => {
    const headings = [...read('docs/upstream.md').matchAll(/^#{2,4} (.+)$/gm)].map((match) => match[1]);
    expect(headings.length).toBeGreaterThan(30);
    expect(headings.filter((heading, index) => headings.indexOf(heading) !== index)).toEqual([]);
  });

  it('points at nothing outside the repository', () => {
    const files = execFileSync('git', ['ls-files', '--', ...OWNED], { cwd: ROOT, encoding: 'utf8' })
      .split('\n')
      .filter(Boolean);
    const outside = files.filter(
      (file) =>
        file !== 'harness/docs.test.ts' &&
        /\.\.\/shared\/(spec|notes)|\/work\/shared|upstream-releases\.md|adapter-design\.md/.test(read(file)),
    );
    expect(outside).toEqual([]);
  });
});

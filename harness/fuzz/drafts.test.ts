/**
 * A draft is a case file of its own kind: written where the fuzzer puts it, validated by the case
 * schema and the loader's rules, never loaded by the catalogue (so the matrix never runs it), and
 * refused there if copied in with its fuzz record.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Outcome } from '../case-model.js';
import { loadCatalogue, loadDraftFile } from '../load-cases.js';
import { compareOutcomes } from './compare.js';
import { writeDraft } from './drafts.js';
import type { Program } from './generator.js';
import { programCase } from './run.js';

const ROOT = join(import.meta.dirname, '..', '..');
const scratch = mkdtempSync(join(tmpdir(), 'fuzz-drafts-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const program: Program = {
  shape: 'async-arrow',
  statements: [{ kind: 'log', method: 'warn', args: ['string'] }],
  result: 'number',
  provider: 'codemode',
  timeout: 5000,
  outbound: 'blocked',
};
const ours: Outcome = { logs: ['[warn] text'], calls: [] };
const reference: Outcome = { logs: ['[warning] text'], calls: [] };
const origin = { seed: 3, column: 'latest', index: 12, signature: 'logs:array/array' };

function draftIn(dir: string): string {
  const item = programCase(program, 'draft');
  const mismatches = compareOutcomes(ours, reference);
  return writeDraft(dir, item, program, { ours, reference, mismatches }, origin, new Date(0)).draft;
}

describe('fuzz drafts', () => {
  it('are written with both outcomes and the seed, and validate', () => {
    const dir = join(scratch, 'written');
    const file = draftIn(dir);
    const [draft] = loadDraftFile(file);
    expect(draft!.expect).toEqual({ result: { absent: true }, logs: ['[warn] text'], calls: [] });
    expect(draft!.upstream!.expect).toEqual({ result: { absent: true }, logs: ['[warning] text'], calls: [] });
    expect(draft!.fuzz).toEqual({ ...origin, found: '1970-01-01T00:00:00.000Z' });
    expect(draft!.code).toContain('console.warn("text")');
    const text = readFileSync(file, 'utf8');
    expect(text).toMatch(/^# yaml-language-server: \$schema=\.\.\/\.\.\/schema\/case\.schema\.json\n/);
    // Each outcome is written out in full, never as a YAML alias of the other's.
    expect(text).not.toMatch(/[&*]a\d/);
  });

  it('are not rewritten when the same program was drafted before', () => {
    const dir = join(scratch, 'again');
    const file = draftIn(dir);
    const item = programCase(program, 'draft');
    const again = writeDraft(dir, item, program, { ours, reference, mismatches: [] }, origin);
    expect(again).toEqual({ draft: file, isNew: false });
  });

  it('without their fuzz record are refused, naming the file and line', () => {
    const dir = join(scratch, 'bare');
    const file = draftIn(dir);
    writeFileSync(file, readFileSync(file, 'utf8').replace(/\n {2}fuzz:[\s\S]*$/, '\n'));
    expect(() => loadDraftFile(file)).toThrow(
      /fuzz-[0-9a-f]+\.yaml:5 \(case "fuzz-[0-9a-f]+"\): is a draft without its fuzz record/,
    );
  });

  it('in cases/drafts/ are never loaded by the catalogue the matrix runs', () => {
    const copy = join(scratch, 'catalogue');
    cpSync(join(ROOT, 'cases'), copy, { recursive: true });
    const before = loadCatalogue(copy).cases.map((item) => item.id);
    const file = draftIn(join(copy, 'drafts'));
    const [draft] = loadDraftFile(file, copy);
    const after = loadCatalogue(copy).cases.map((item) => item.id);
    expect(after).toEqual(before);
    expect(after).not.toContain(draft!.id);
  });

  it('copied into the catalogue with their fuzz record are refused', () => {
    const copy = join(scratch, 'promoted');
    cpSync(join(ROOT, 'cases'), copy, { recursive: true });
    const file = draftIn(join(scratch, 'to-promote'));
    const text = readFileSync(file, 'utf8').replace('$schema=../../schema/', '$schema=../schema/');
    writeFileSync(join(copy, 'zz-promoted.yaml'), text);
    expect(() => loadCatalogue(copy)).toThrow(
      /zz-promoted\.yaml:\d+ \(case "fuzz-[0-9a-f]+"\): \/fuzz is a fuzz draft's record/,
    );
  });
});

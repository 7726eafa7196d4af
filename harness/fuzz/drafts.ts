/**
 * A difference written as a draft case in `cases/drafts/`: the shrunk program with the providers
 * and options it ran with, `expect` what ours gave, `upstream.expect` what the reference gave, and
 * the fuzz record (seed, column, first program, signature). The file is checked by the loader's
 * own rules before the run reports it. Node-only.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { stringify } from 'yaml';
import type { Case, FuzzOrigin, Outcome } from '../case-model.js';
import { DRAFT_SCHEMA_COMMENT, loadDraftFile } from '../load-cases.js';
import { exactExpectation } from './compare.js';
import type { Program } from './generator.js';
import { fuzzTexts } from './texts.js';

export type DraftOrigin = Omit<FuzzOrigin, 'found'>;

/** The draft's id: the same program with the same providers and options always gets the same one. */
function draftId(item: Pick<Case, 'code' | 'providers' | 'options'>): string {
  const digest = createHash('sha256')
    .update(JSON.stringify([item.code, item.providers, item.options]))
    .digest('hex');
  return `fuzz-${digest.slice(0, 10)}`;
}

/**
 * Writes the draft unless a draft of the same program is there already (an earlier run found it),
 * and validates it. Its path relative to the working directory, and whether it is new.
 */
export function writeDraft(
  dir: string,
  item: Case,
  _program: Program,
  outcomes: { ours: Outcome; reference: Outcome; mismatches: readonly { path: string }[] },
  origin: DraftOrigin,
  now: Date = new Date(),
): { draft: string; isNew: boolean } {
  const id = draftId(item);
  const file = join(dir, `${id}.yaml`);
  const draft = relative(process.cwd(), file);
  if (existsSync(file)) return { draft, isNew: false };
  const fields = [...new Set(outcomes.mismatches.map((m) => /^[A-Za-z]+/.exec(m.path)?.[0] ?? m.path))];
  // A loaded case's place (file, line) is not part of the format.
  const { timing, file: _file, line: _line, ...rest } = item as Case & { file?: string; line?: number };
  const written: Case = {
    ...rest,
    id,
    description: fuzzTexts.draftDescription(origin.column, fields),
    expect: exactExpectation(outcomes.ours),
    upstream: { expect: exactExpectation(outcomes.reference), reason: fuzzTexts.untriaged },
    ...(timing ? { timing } : {}),
    fuzz: { ...origin, found: now.toISOString() },
  };
  mkdirSync(dir, { recursive: true });
  const body = stringify([written], { blockQuote: 'literal', lineWidth: 0, aliasDuplicateObjects: false });
  writeFileSync(file, `${DRAFT_SCHEMA_COMMENT}\n#\n${fuzzTexts.draftHeader(origin)}\n${body}`);
  loadDraftFile(file);
  return { draft, isNew: true };
}

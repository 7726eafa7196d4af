/**
 * Each documented difference the fuzzer recognises names a catalogue case that documents it (one
 * with `upstream` and its reason), and recognises that case's own two expectations as ours and the
 * reference's outcomes; a difference no case documents is not recognised.
 */
import { describe, expect, it } from 'vitest';
import type { Expectation, LoadedCase, Outcome } from '../case-model.js';
import { checkExpectation, isMatcher } from '../expect.js';
import { loadCatalogue } from '../load-cases.js';
import { KNOWN_DIFFERENCES, knownDifference } from './known.js';

const catalogue = new Map(
  loadCatalogue()
    .cases.filter((item): item is LoadedCase => !('steps' in item))
    .map((item) => [item.id, item]),
);

/** The outcome an expectation describes, when it pins every field (an `absent` field is left out). */
function outcomeOf(expectation: Expectation): Outcome | undefined {
  const outcome: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(expectation)) {
    if (isMatcher(value) && 'absent' in value) continue;
    if (JSON.stringify(value).includes('"match"') || JSON.stringify(value).includes('"any"')) return undefined;
    outcome[field] = value;
  }
  return outcome as Outcome;
}

/** For a case whose expectations match by pattern: outcomes that meet them, checked against them below. */
const SAMPLES: Record<string, { ours: Outcome; reference: Outcome }> = {
  'error-syntax-unbalanced': {
    ours: { error: "Unexpected token '}'", logs: [] },
    reference: { threw: "Failed to start Worker:\nUncaught SyntaxError: Unexpected token '}'\n  at executor.js:3:5" },
  },
};

describe('known differences', () => {
  it.each(KNOWN_DIFFERENCES.map((known) => [known.caseId, known] as const))(
    '%s is a documented difference, and its own expectations are recognised as it',
    (caseId, known) => {
      const item = catalogue.get(caseId);
      expect(item, `${caseId} is not a case of the catalogue`).toBeDefined();
      expect(item!.upstream, `${caseId} documents no difference (no upstream)`).toBeDefined();
      const sample = SAMPLES[caseId];
      const ours = sample?.ours ?? outcomeOf(item!.expect);
      const reference = sample?.reference ?? outcomeOf(item!.upstream!.expect);
      expect(ours && reference, `${caseId}: give SAMPLES an outcome pair for its patterns`).toBeTruthy();
      expect(checkExpectation(item!.expect, ours!)).toEqual([]);
      expect(checkExpectation(item!.upstream!.expect, reference!)).toEqual([]);
      expect(known.matches(ours!, reference!, item!.code)).toBe(true);
      expect(knownDifference(ours!, reference!, item!.code)).toBeDefined();
    },
  );

  it('does not recognise a difference no case documents', () => {
    const ours: Outcome = { result: 7, logs: ['[warn] text'], calls: [] };
    const code = 'async () => 7';
    expect(knownDifference(ours, { ...ours, logs: ['[warning] text'] }, code)).toBeUndefined();
    expect(knownDifference(ours, { ...ours, result: 8 }, code)).toBeUndefined();
    expect(knownDifference(ours, { ...ours, calls: ['codemode.echo'] }, code)).toBeUndefined();
    expect(knownDifference({ error: 'it broke', logs: [] }, { error: 'it failed', logs: [] }, code)).toBeUndefined();
    expect(knownDifference({ result: { a: 1, b: 2 } }, { result: { a: 1 } }, code)).toBeUndefined();
    // A timeout on ours alone is documented only for a program that replaced setTimeout.
    const timedOut: Outcome = { error: 'Execution timed out', logs: [] };
    expect(
      knownDifference(timedOut, { result: 1, logs: [] }, 'async () => { await wait(250); return 1 }'),
    ).toBeUndefined();
  });
});

/**
 * Applying an expectation to a normalized outcome, by the rules of docs/interpreting.md:
 * `checkExpectation` returns mismatches with a path, `formatMismatches` turns them into a
 * readable diff. Runtime-neutral.
 */
import type { Expectation, Matcher, Outcome } from './case-model.js';

export interface Mismatch {
  /** Where, e.g. `result.items[2]` or `logs`. */
  path: string;
  /** What was expected: a value, or a matcher's description. */
  expected: string;
  actual: string;
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

/** An object whose only key is `match` (a string), `any: true` or `absent: true`. */
export function isMatcher(value: unknown): value is Matcher {
  if (!isRecord(value) || Object.keys(value).length !== 1) return false;
  return typeof value.match === 'string' || value.any === true || value.absent === true;
}

const LONG_STRING = 160;

/** JSON text of a value with every long string shortened, so a 200 KB result stays readable. */
export function brief(value: unknown): string {
  return JSON.stringify(value, (_key, nested: unknown) =>
    typeof nested === 'string' && nested.length > LONG_STRING
      ? `${nested.slice(0, LONG_STRING)}… (${nested.length} characters)`
      : nested,
  );
}

/** A value as the diff shows it; `undefined` reads as absent. */
function show(value: unknown): string {
  return value === undefined ? '(absent)' : brief(value);
}

function showExpected(expected: unknown): string {
  if (isMatcher(expected)) {
    if ('match' in expected) return `a string matching /${expected.match}/`;
    if ('absent' in expected) return '(absent)';
    return 'anything';
  }
  return JSON.stringify(expected, (_key, value: unknown) => (isMatcher(value) ? showExpected(value) : value));
}

function childPath(path: string, key: string | number): string {
  if (typeof key === 'number') return `${path}[${key}]`;
  return /^[A-Za-z_$][\w$]*$/.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`;
}

/** Deep match of an actual value against an expected one, which may contain matchers anywhere. */
export function matchValue(expected: unknown, actual: unknown, path: string, out: Mismatch[]): void {
  const differ = () => out.push({ path, expected: showExpected(expected), actual: show(actual) });
  if (isMatcher(expected)) {
    const ok =
      'any' in expected ||
      ('absent' in expected && actual === undefined) ||
      ('match' in expected && typeof actual === 'string' && new RegExp(expected.match).test(actual));
    if (!ok) differ();
  } else if (Array.isArray(expected)) {
    if (!Array.isArray(actual)) differ();
    else if (expected.length !== actual.length)
      out.push({
        path,
        expected: `${showExpected(expected)} (${expected.length} items)`,
        actual: `${show(actual)} (${actual.length} items)`,
      });
    else
      expected.forEach((item, index) => {
        matchValue(item, actual[index], childPath(path, index), out);
      });
  } else if (isRecord(expected)) {
    if (!isRecord(actual)) differ();
    else {
      for (const key of Object.keys(expected))
        matchValue(expected[key], Object.hasOwn(actual, key) ? actual[key] : undefined, childPath(path, key), out);
      for (const key of Object.keys(actual))
        if (!Object.hasOwn(expected, key))
          out.push({ path: childPath(path, key), expected: '(absent)', actual: show(actual[key]) });
    }
  } else if (expected !== actual) differ();
}

const ABSENT: Matcher = { absent: true };

const OUTCOME_FIELDS: readonly string[] = ['result', 'error', 'logs', 'threw', 'calls'];

/**
 * Applies `expect` to a normalized outcome. `result`, `logs` and `calls` left out are not
 * compared; `error` and `threw` left out must be absent, so an unexpected failure never passes.
 */
export function checkExpectation(expect: Expectation, outcome: Outcome): Mismatch[] {
  const out: Mismatch[] = [];
  if ('result' in expect) matchValue(expect.result, outcome.result, 'result', out);
  matchValue('error' in expect ? expect.error : ABSENT, outcome.error, 'error', out);
  if ('logs' in expect) matchValue(expect.logs, outcome.logs, 'logs', out);
  matchValue('threw' in expect ? expect.threw : ABSENT, outcome.threw, 'threw', out);
  if ('calls' in expect) matchValue(expect.calls, outcome.calls, 'calls', out);
  for (const key of Object.keys(outcome)) {
    if (!OUTCOME_FIELDS.includes(key)) {
      out.push({ path: key, expected: '(absent)', actual: show((outcome as Record<string, unknown>)[key]) });
    }
  }
  return out;
}

/** The diff, one line per mismatch: `  logs[1]: expected "[warn] x", got "x"`. */
export function formatMismatches(mismatches: readonly Mismatch[]): string {
  return mismatches.map((m) => `  ${m.path}: expected ${m.expected}, got ${m.actual}`).join('\n');
}

/** The top-level outcome fields a set of mismatches touches, in first-seen order. */
export function fieldsOf(mismatches: readonly Mismatch[]): string[] {
  return [...new Set(mismatches.map((mismatch) => /^[A-Za-z_$][\w$]*/.exec(mismatch.path)?.[0] ?? mismatch.path))];
}

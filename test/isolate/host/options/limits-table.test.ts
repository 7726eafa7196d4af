/**
 * docs/isolate.md's `## Limits` table, held to the code. The rules, strict on every word and
 * number the table states, and free in how it describes and enforces:
 *
 * - The options of a row are the `;`-separated parts of its second cell that open with an option
 *   in backticks, followed by its default (`` `pool.heapLimitMb`, 256 `` or `` `cpuTimeout` (none
 *   by default) ``). A cell that opens with `derived:` (a cap the others set) or is `—` names none,
 *   and a part that opens otherwise is words beside them (`64 KiB a line`).
 * - The limit options are every `limits.*` cap, the timeouts, and the pool options whose
 *   `POOL_NUMBER_ROLES` is `limit` (table.ts writes that list down once). Each is the option of
 *   exactly one row, and no row names an option outside them.
 * - A default the option table gives as a number is the first number the default states, in the
 *   option's unit (`1 MiB` is 1048576). A default that depends on the host or is none states no
 *   number, and opens with what the Options table's default opens with, up to its first `(` or `:`.
 * - Every code span of prose (one with a space) in the third cell is one of the row's texts, as the
 *   module that composes it renders it (TEXTS below), and each of those texts is there: the
 *   same words, `<any name>` where the text takes an argument, and a closing ` …` may stand for
 *   the text's last whole sentences.
 */
import { describe, expect, it } from 'vitest';
import { defaultMaxTimeout } from '../../../../src/isolate/host/options/rules.js';
import {
  DEFAULT_LIMITS,
  DEFAULT_POOL,
  DEFAULT_TIMEOUT_MS,
  DEFAULT_TURN_GRACE_MS,
  LIMIT_NUMBERS,
  POOL_NUMBER_ROLES,
  TOP_NUMBERS,
} from '../../../../src/isolate/host/options/table.js';
import { isolateText } from '../../../../src/isolate/host/texts.js';
import { formatCpuTimeout, formatTimeout } from '../../../../src/protocol/texts.js';
import { codeSpans, firstNumber, readDocs, tableUnder } from '../../../support/docs-tables.js';

const docs = readDocs('isolate.md');

type Text = (...args: any[]) => string;

/** The texts a row's cap fails with, by the row's first option (or its cap, where it names none). */
const TEXTS: Record<string, readonly Text[]> = {
  timeout: [formatTimeout],
  cpuTimeout: [formatCpuTimeout],
  'pool.heapLimitMb': [isolateText.outOfMemory],
  'pool.memoryLimitMb': [isolateText.memoryLimit],
  'pool.memoryBudgetMb': [isolateText.memoryBudget],
  'limits.maxCodeBytes': [isolateText.codeTooLarge],
  'limits.maxRequestBytes': [isolateText.requestTooLarge],
  'limits.maxResultBytes': [isolateText.resultTooLarge],
  'limits.maxToolArgsBytes': [isolateText.toolArgsTooLarge],
  'limits.maxConcurrentToolCalls': [isolateText.toolArgsOverWaitingCap],
  'limits.maxToolResultBytes': [isolateText.toolResultTooLarge],
  'limits.maxLogLines': [isolateText.logsCut],
  'limits.maxRequestBodyBytes': [isolateText.requestBodyTooLarge],
  'limits.maxResponseBodyBytes': [isolateText.responseBodyTooLarge],
  'limits.maxConcurrentFetches': [isolateText.tooManyFetches],
  'a frame to the host': [isolateText.callTooLarge, isolateText.outcomeTooLarge],
  'limits.maxProcessOutputBytes': [isolateText.processOutputTooLarge],
  "a module's name": [isolateText.moduleNameOutside],
  'pool.maxQueue': [isolateText.queueFull],
  'pool.maxRetained': [isolateText.retainedLimit],
  'pool.retainedIdleTimeoutMs': [isolateText.executionExpired],
  'pool.maxNestedRuns': [isolateText.nestedLimit],
  'pool.programStartTimeoutMs': [isolateText.programStartTimedOut],
};

/** Each limit option by its path, with its default: a number, or `undefined` where it has none of its own. */
const LIMIT_DEFAULTS = new Map<string, number | undefined>([
  ...Object.keys(TOP_NUMBERS).map((name): [string, number | undefined] => [
    name,
    {
      timeout: DEFAULT_TIMEOUT_MS,
      maxTimeout: defaultMaxTimeout(),
      cpuTimeout: undefined,
      turnGraceMs: DEFAULT_TURN_GRACE_MS,
    }[name],
  ]),
  ...Object.entries(POOL_NUMBER_ROLES)
    .filter(([, role]) => role === 'limit')
    .map(([name]): [string, number | undefined] => [`pool.${name}`, (DEFAULT_POOL as Record<string, number>)[name]]),
  ...Object.keys(LIMIT_NUMBERS).map((name): [string, number] => [
    `limits.${name}`,
    DEFAULT_LIMITS[name as keyof typeof DEFAULT_LIMITS],
  ]),
]);

interface Row {
  cap: string;
  /** Each option the row names, with the words of its default. */
  options: Map<string, string>;
  texts: string[];
}

function optionsOf(cell: string): Map<string, string> {
  const options = new Map<string, string>();
  if (cell.startsWith('derived:') || cell === '—') return options;
  for (const part of cell.split(';').map((text) => text.trim())) {
    const match = /^`([\w.]+)`(?:, (.*)| \((.*)\))$/.exec(part);
    if (match !== null) options.set(match[1]!, (match[2] ?? match[3])!);
  }
  return options;
}

const ROWS: Row[] = tableUnder(docs, '## Limits').map(([cap, options, texts]) => ({
  cap: cap!,
  options: optionsOf(options!),
  texts: codeSpans(texts!).filter((span) => /\s/.test(span)),
}));

const keyOf = (row: Row) => row.options.keys().next().value ?? row.cap;

/** The Options table's default of each option, up to its first `(` or `:`, without backticks. */
const OPTIONS_DEFAULTS = new Map(
  tableUnder(docs, '## Options').map(([option, fallback]) => [
    codeSpans(option!)[0]!,
    fallback!.replaceAll('`', '').split(/[(:]/)[0]!.trim(),
  ]),
);

/** An argument no text holds otherwise, by its position; every one reads as `<>` once rendered. */
const ARGUMENT = 900_000_000;
const PLACEHOLDER = '<>';

function rendered(text: Text): string {
  const args = Array.from({ length: text.length }, (_, index) => String(ARGUMENT + index));
  return text(...args).replace(/9000000\d\d/g, PLACEHOLDER);
}

/** Whether the docs' span says the text: its words, any placeholder for each argument, and maybe a closing ` …`. */
function says(span: string, text: string): boolean {
  const words = span.replace(/<[^<>]+>/g, PLACEHOLDER);
  if (words === text) return true;
  const kept = words.endsWith(' …') ? words.slice(0, -2) : undefined;
  return kept?.endsWith('.') === true && text.startsWith(`${kept} `);
}

describe("docs/isolate.md's Limits table", () => {
  it('has a row for each limit option, and names no other option', () => {
    expect(ROWS.length).toBeGreaterThan(15);
    const named = ROWS.flatMap((row) => [...row.options.keys()]);
    expect(named.filter((option) => !LIMIT_DEFAULTS.has(option))).toEqual([]);
    for (const option of LIMIT_DEFAULTS.keys())
      expect({ option, rows: named.filter((name) => name === option).length }).toEqual({ option, rows: 1 });
  });

  it("gives each option the option table's default", () => {
    for (const row of ROWS) {
      for (const [option, words] of row.options) {
        const fallback = LIMIT_DEFAULTS.get(option);
        if (fallback !== undefined) {
          expect({ option, words, default: firstNumber(words) }).toEqual({ option, words, default: fallback });
        } else {
          const optionsDefault = OPTIONS_DEFAULTS.get(option);
          expect({ option, words, states: firstNumber(words) }).toEqual({ option, words, states: undefined });
          expect(optionsDefault, `the Options table's default of ${option}`).toMatch(/^\D+$/);
          expect(words.startsWith(optionsDefault!), `${option}: "${words}" opens with "${optionsDefault}"`).toBe(true);
        }
      }
    }
  });

  it('has the texts for exactly the rows it has', () => {
    expect(ROWS.map(keyOf).sort()).toEqual(Object.keys(TEXTS).sort());
  });

  it("shows each cap's text as the module that composes it renders it", () => {
    for (const row of ROWS) {
      const texts = (TEXTS[keyOf(row)] ?? []).map(rendered);
      for (const span of row.texts) {
        expect({ row: row.cap, span, said: texts.some((text) => says(span, text)) }).toEqual({
          row: row.cap,
          span,
          said: true,
        });
      }
      for (const text of texts) {
        expect({ row: row.cap, text, shown: row.texts.some((span) => says(span, text)) }).toEqual({
          row: row.cap,
          text,
          shown: true,
        });
      }
    }
  });
});

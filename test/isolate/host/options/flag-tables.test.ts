/**
 * The docs' tables of the daemon's flags, held to the code: docs/remote.md's flag table lists
 * exactly the flags --help does, each with the default the option table (src/isolate/host/options/
 * table.ts) or the server's (src/server/options/server-options.ts) gives it and, for a sandbox flag, the
 * option it sets; docs/fleet.md's table of one tenant's bounds names each flag's option and default.
 * A default is compared as its first number, in the option's unit (`16 MiB` is 16777216); one the
 * host sets (the pool's size, its starting processes, its memory budget) by the words of its rule,
 * in docs/remote.md and docs/isolate.md's Options table alike.
 */
import { describe, expect, it } from 'vitest';
import { CONFINEMENT_OPTIONS } from '../../../../src/isolate/host/confinement/detect.js';
import {
  DEFAULT_BUDGET_SHARE,
  DEFAULT_STARTING,
  openFilesLimit,
  SMALLEST_MEMBER_MB,
} from '../../../../src/isolate/host/options/host-sizing.js';
import { defaultMaxTimeout } from '../../../../src/isolate/host/options/rules.js';
import {
  CGROUP_FLAG,
  DEFAULT_CONFINEMENT,
  DEFAULT_LIMITS,
  DEFAULT_POOL,
  DEFAULT_TIMEOUT_MS,
  DEFAULT_TURN_GRACE_MS,
  LIMIT_NUMBERS,
  type NumberRule,
  POOL_NUMBERS,
  TOP_NUMBERS,
} from '../../../../src/isolate/host/options/table.js';
import { USAGE } from '../../../../src/server/command/cli-args.js';
import { LOG_FORMATS } from '../../../../src/server/observe/log.js';
import {
  SERVER_DEFAULTS,
  SERVER_NUMBERS,
  SERVER_ROWS,
  TOKEN_ENV,
} from '../../../../src/server/options/server-options.js';
import {
  DAEMON_FDS_RESERVED,
  MAX_CONNECTIONS_CEILING,
  maxConnectionsFor,
} from '../../../../src/server/transport/descriptors.js';
import { codeSpans, firstNumber, readDocs, tableUnder } from '../../../support/docs-tables.js';

/** What the docs say a flag's default is: a number, or the text of a code span. */
interface FlagDefault {
  /** The IsolateExecutor option the flag sets, as the docs name it. */
  option?: string;
  number?: number;
  text?: string;
}

function sandboxFlags(
  prefix: string,
  table: Record<string, NumberRule>,
  defaults: Record<string, number | undefined>,
): [string, FlagDefault][] {
  return Object.entries(table).flatMap(([name, rule]): [string, FlagDefault][] => {
    if (rule.flag === undefined) return [];
    const number = defaults[name];
    return [[`--${rule.flag}`, { option: `${prefix}${name}`, ...(number === undefined ? {} : { number }) }]];
  });
}

const FLAG_DEFAULTS = new Map<string, FlagDefault>([
  ['--host', { text: SERVER_DEFAULTS.host }],
  ['--port', { number: SERVER_DEFAULTS.port }],
  ['--token', { text: `$${TOKEN_ENV}` }],
  ['--admin-host', { text: SERVER_DEFAULTS.adminHost }],
  // A default the host sets (--max-connections, by its descriptor limit) is checked by its rule below.
  ...Object.entries(SERVER_NUMBERS).flatMap(([name, { flag }]): [string, FlagDefault][] =>
    'hostDefault' in SERVER_ROWS[name as keyof typeof SERVER_NUMBERS]
      ? []
      : [[`--${flag}`, { number: SERVER_DEFAULTS[name as keyof typeof SERVER_NUMBERS] }]],
  ),
  ...sandboxFlags('', TOP_NUMBERS, {
    timeout: DEFAULT_TIMEOUT_MS,
    maxTimeout: defaultMaxTimeout(),
    turnGraceMs: DEFAULT_TURN_GRACE_MS,
  }),
  ['--confinement', { option: 'confinement', text: DEFAULT_CONFINEMENT }],
  ...sandboxFlags('pool.', POOL_NUMBERS, DEFAULT_POOL),
  [`--${CGROUP_FLAG}`, { option: 'pool.cgroup' }],
  ...sandboxFlags('limits.', LIMIT_NUMBERS, DEFAULT_LIMITS),
]);

/** The docs' words for the host-sizing rules' factors. */
const FACTOR_WORDS = new Map([
  [0.5, 'half'],
  [2, 'twice'],
  [16, '16 times'],
]);
const wordFor = (factor: number) => FACTOR_WORDS.get(factor) ?? `(no word for ${factor})`;

/** What each default the host sets must say, in any docs table that gives it. */
const HOST_SIZED = new Map([
  ['maxWorkers', `at ${SMALLEST_MEMBER_MB} MB a `],
  [
    'maxStarting',
    `${wordFor(DEFAULT_STARTING.perCore)} the CPU count, ${DEFAULT_STARTING.least} to ${DEFAULT_STARTING.most}`,
  ],
  ['memoryBudgetMb', `${wordFor(DEFAULT_BUDGET_SHARE)} of the host's memory`],
]);

const remote = tableUnder(readDocs('remote.md'), '## The daemon: `codemode-executor serve`').map(
  ([flag, fallback, meaning]) => ({
    spans: codeSpans(flag!),
    flag: codeSpans(flag!)
      .find((span) => span.startsWith('--'))!
      .split(' ')[0]!,
    fallback: fallback!,
    meaning: meaning!,
  }),
);

describe("docs/remote.md's flag table", () => {
  it('lists the flags --help lists', () => {
    const help = [...USAGE.matchAll(/^ {2}(?:-\w, )?(--[a-z-]+)/gm)].map((match) => match[1]!);
    expect(help.length).toBeGreaterThan(50);
    expect(remote.map((row) => row.flag).sort()).toEqual([...new Set(help)].sort());
  });

  it('gives each flag its default, and the option it sets', () => {
    for (const [flag, expected] of FLAG_DEFAULTS) {
      const row = remote.find((entry) => entry.flag === flag);
      expect(row, `docs/remote.md has no row for ${flag}`).toBeDefined();
      const { fallback, meaning } = row!;
      if (expected.number !== undefined)
        expect({ flag, fallback, default: firstNumber(fallback) }).toEqual({
          flag,
          fallback,
          default: expected.number,
        });
      if (expected.text !== undefined)
        expect({ flag, fallback, default: codeSpans(fallback)[0] }).toEqual({ flag, fallback, default: expected.text });
      if (expected.option !== undefined)
        expect({ flag, names: codeSpans(meaning).includes(expected.option) }).toEqual({ flag, names: true });
    }
  });

  it('says a default the host sets by its rule, and states none where there is none', () => {
    for (const [flag, { option, number, text }] of FLAG_DEFAULTS) {
      if (option === undefined || number !== undefined || text !== undefined) continue;
      const { fallback } = remote.find((entry) => entry.flag === flag)!;
      const rule = HOST_SIZED.get(option.replace('pool.', ''));
      if (rule === undefined)
        expect({ flag, fallback, states: firstNumber(fallback) }).toEqual({ flag, fallback, states: undefined });
      else expect(fallback, flag).toContain(rule);
    }
  });

  it("says --max-connections' default by its rule: the descriptor limit, the reserve, the ceiling", () => {
    const { fallback } = remote.find((entry) => entry.flag === '--max-connections')!;
    expect(fallback).toContain(
      `half the file descriptors the process may open (\`ulimit -n\`) beyond ${DAEMON_FDS_RESERVED} for its own files`,
    );
    expect(fallback).toContain(`at most ${MAX_CONNECTIONS_CEILING}`);
    expect(SERVER_DEFAULTS.maxConnections).toBe(maxConnectionsFor(openFilesLimit()));
  });

  it('shows the values --confinement and --log-format take', () => {
    const takes = (flag: string) => remote.find((row) => row.flag === flag)!.spans[0]!.split(' ')[1];
    expect(takes('--confinement')).toBe(`<${CONFINEMENT_OPTIONS.join('|')}>`);
    expect(takes('--log-format')).toBe(`<${LOG_FORMATS.join('|')}>`);
  });
});

describe("docs/isolate.md's Options table", () => {
  it('says each default the host sets by its rule', () => {
    const rows = new Map(
      tableUnder(readDocs('isolate.md'), '## Options').map(([option, fallback]) => [codeSpans(option!)[0]!, fallback!]),
    );
    for (const [option, rule] of HOST_SIZED) expect(rows.get(`pool.${option}`), option).toContain(rule);
  });
});

describe("docs/fleet.md's bounds on one tenant", () => {
  it("names each flag's option and default", () => {
    const rows = tableUnder(readDocs('fleet.md'), '## Bounds on one tenant');
    expect(rows.length).toBeGreaterThan(5);
    for (const [flagAndOption, fallback] of rows) {
      const [flag, option] = codeSpans(flagAndOption!);
      const rule = SERVER_NUMBERS[option as keyof typeof SERVER_NUMBERS];
      expect({ option, flag: rule && `--${rule.flag}` }).toEqual({ option, flag });
      const expected = SERVER_DEFAULTS[option as keyof typeof SERVER_NUMBERS];
      expect({ flag, default: firstNumber(fallback!) }).toEqual({ flag, default: expected });
    }
  });
});

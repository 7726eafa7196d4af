/**
 * The option schema (src/isolate/host/options/schema.ts, its rows read back in table.ts) is the one source of each option's default,
 * bounds and daemon flag: the constructor's checks and the daemon's command line take and refuse
 * the same values, and docs/isolate.md lists every option with the table's default.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { resolveSettings } from '../../../../src/isolate/host/options/resolve.js';
import {
  DEFAULT_LIMITS,
  DEFAULT_POOL,
  DEFAULT_TIMEOUT_MS,
  LIMIT_NUMBERS,
  type NumberRule,
  POOL_NUMBERS,
  TOP_NUMBERS,
} from '../../../../src/isolate/host/options/table.js';
import { parseCommandLine, USAGE } from '../../../../src/server/command/cli-args.js';
import { resolveServerOptions, SERVER_NUMBERS } from '../../../../src/server/options/server-options.js';

const docs = readFileSync(new URL('../../../../docs/isolate.md', import.meta.url), 'utf8');

/** Every number option by its path in IsolateExecutorOptions, with its rule. */
const OPTIONS: [path: string, rule: NumberRule][] = [
  ...Object.entries(TOP_NUMBERS).map(([name, rule]): [string, NumberRule] => [name, rule]),
  ...Object.entries(POOL_NUMBERS).map(([name, rule]): [string, NumberRule] => [`pool.${name}`, rule]),
  ...Object.entries(LIMIT_NUMBERS).map(([name, rule]): [string, NumberRule] => [`limits.${name}`, rule]),
];

/** IsolateExecutorOptions with one option set, and what it needs beside it to be valid alone. */
function optionsWith(path: string, value: number): Record<string, unknown> {
  const [group, name] = path.includes('.') ? path.split('.') : [undefined, path];
  if (group !== undefined) return { [group]: { [name!]: value } };
  // A lower maxTimeout takes a timeout no larger.
  return path === 'maxTimeout'
    ? { maxTimeout: value, timeout: Math.min(value, DEFAULT_TIMEOUT_MS) }
    : { [path]: value };
}

function constructorTakes(path: string, value: number): boolean {
  try {
    resolveSettings(optionsWith(path, value));
    return true;
  } catch {
    return false;
  }
}

function commandLineTakes(flag: string, value: number, path: string): boolean {
  const extra = path === 'maxTimeout' ? ['--timeout', String(Math.min(value, DEFAULT_TIMEOUT_MS))] : [];
  try {
    parseCommandLine(['serve', `--${flag}`, String(value), ...extra], {});
    return true;
  } catch {
    return false;
  }
}

/** The values at each edge of a rule: the last refused, the first taken, and past the maximum. */
function edges(rule: NumberRule): { refused: number[]; taken: number[] } {
  const first = rule.kind === 'positive' ? 1 : rule.min;
  const refused = [rule.kind === 'positive' ? 0 : rule.min - 1];
  const taken = [first];
  if (rule.max !== undefined) {
    refused.push(rule.max + 1);
    taken.push(rule.max);
  }
  return { refused, taken };
}

describe('the option table', () => {
  it('bounds each option the same in the constructor and on the daemon command line', () => {
    const withFlags = OPTIONS.filter(([, rule]) => rule.flag !== undefined);
    expect(withFlags.length).toBeGreaterThan(20);
    for (const [path, rule] of withFlags) {
      const { refused, taken } = edges(rule);
      for (const value of refused) {
        expect({ path, value, constructor: constructorTakes(path, value) }).toEqual({
          path,
          value,
          constructor: false,
        });
        expect({ path, value, cli: commandLineTakes(rule.flag!, value, path) }).toEqual({ path, value, cli: false });
      }
      for (const value of taken) {
        expect({ path, value, constructor: constructorTakes(path, value) }).toEqual({ path, value, constructor: true });
        expect({ path, value, cli: commandLineTakes(rule.flag!, value, path) }).toEqual({ path, value, cli: true });
      }
    }
  });

  it('bounds the options without a flag in the constructor', () => {
    for (const [path, rule] of OPTIONS.filter(([, rule]) => rule.flag === undefined)) {
      const { refused, taken } = edges(rule);
      for (const value of refused)
        expect({ path, value, taken: constructorTakes(path, value) }).toMatchObject({ taken: false });
      for (const value of taken)
        expect({ path, value, taken: constructorTakes(path, value) }).toMatchObject({ taken: true });
    }
  });

  it('lists every daemon flag in --help', () => {
    for (const [, rule] of OPTIONS) if (rule.flag !== undefined) expect(USAGE).toContain(`  --${rule.flag} <`);
  });

  it("has a row for every option in docs/isolate.md's options table, with the table's default", () => {
    const rows = new Map(
      [...docs.matchAll(/^\| `([\w.]+)` \| ([^|]+) \|/gm)].map((match) => [match[1]!, match[2]!.trim()]),
    );
    const mib = (bytes: number) => `${bytes / 2 ** 20} MiB`;
    for (const [path] of OPTIONS) expect(rows.has(path), `docs/isolate.md has no row for ${path}`).toBe(true);
    for (const [name, value] of Object.entries(DEFAULT_POOL)) expect(rows.get(`pool.${name}`)).toBe(`\`${value}\``);
    for (const [name, value] of Object.entries(DEFAULT_LIMITS)) {
      const cell = rows.get(`limits.${name}`);
      expect([`\`${value}\``, mib(value)]).toContain(cell);
    }
    expect(rows.get('timeout')).toBe(`\`${DEFAULT_TIMEOUT_MS}\``);
  });

  it("bounds the daemon's own integer options the same in createExecutorServer and on the command line", () => {
    const executor = { execute: async () => ({ result: undefined, logs: [] }) } as never;
    for (const [name, { min, flag }] of Object.entries(SERVER_NUMBERS)) {
      const serverTakes = (value: number) => {
        try {
          resolveServerOptions({ executor, [name]: value });
          return true;
        } catch {
          return false;
        }
      };
      const cliTakes = (value: number) => {
        try {
          parseCommandLine(['serve', `--${flag}`, String(value)], {});
          return true;
        } catch {
          return false;
        }
      };
      expect({ name, server: serverTakes(min - 1), cli: cliTakes(min - 1) }).toEqual({
        name,
        server: false,
        cli: false,
      });
      expect({ name, server: serverTakes(min), cli: cliTakes(min) }).toEqual({ name, server: true, cli: true });
      expect(USAGE).toContain(`  --${flag} <`);
    }
  });
});

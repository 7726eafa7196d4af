/**
 * The option schema (src/protocol/option-schema.ts and each entry point's rows) is where the docs
 * tables and --help come from: each generated table in docs is exactly what its rows render
 * (`npm run docs:options` writes them), --help lists every row's flag with its default, and every
 * number option's name ends with its unit, unless its row says why not.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { docsPath, OPTION_TABLES, tableSpan } from '../../../../scripts/option-tables.js';
import { ISOLATE_OPTION_ROWS } from '../../../../src/isolate/index.js';
import { type OptionRow, UNIT_SUFFIXES } from '../../../../src/protocol/option-schema.js';
import { CONNECT_ROWS } from '../../../../src/remote/connect-options.js';
import { USAGE } from '../../../../src/server/command/cli-args.js';
import { DAEMON_ROWS, SERVER_ROWS } from '../../../../src/server/options/server-options.js';

const EVERY_ROW: [name: string, row: OptionRow][] = [
  ...Object.values(ISOLATE_OPTION_ROWS).flatMap((rows) => Object.entries(rows) as [string, OptionRow][]),
  ...(Object.entries(SERVER_ROWS) as [string, OptionRow][]),
  ...(Object.entries(DAEMON_ROWS) as [string, OptionRow][]),
  ...(Object.entries(CONNECT_ROWS) as [string, OptionRow][]),
];

describe('the docs tables of the options', () => {
  it.each(OPTION_TABLES.map((table) => [`docs/${table.page}, ${table.heading}`, table] as const))(
    '%s is what the rows render (npm run docs:options)',
    (_, { page, heading, render }) => {
      const { lines, start, end } = tableSpan(readFileSync(docsPath(page), 'utf8'), heading);
      expect(lines.slice(start, end).join('\n')).toBe(render());
    },
  );
});

describe('--help', () => {
  const words = USAGE.replace(/\s+/g, ' ');

  it("lists every row's flag, with its default", () => {
    const withFlags = EVERY_ROW.filter(([, row]) => row.flag !== undefined);
    expect(withFlags.length).toBeGreaterThan(50);
    for (const [name, row] of withFlags) {
      expect(USAGE, name).toMatch(new RegExp(`^ {2}--${row.flag}\\b`, 'm'));
      if (typeof row.default === 'number') expect(words, name).toContain(`(default ${row.default})`);
    }
  });
});

describe('the unit convention', () => {
  it('ends each number option in its unit, or says why not', () => {
    for (const [name, row] of EVERY_ROW) {
      const suffix = row.unit === undefined ? undefined : UNIT_SUFFIXES[row.unit];
      if (suffix === undefined || row.unitExempt !== undefined) continue;
      expect({ name, endsInUnit: name.endsWith(suffix) }).toEqual({ name, endsInUnit: true });
    }
  });

  it("ends each flag of a number option in its unit where the option's name does", () => {
    for (const [name, row] of EVERY_ROW) {
      const suffix = row.unit === undefined ? undefined : UNIT_SUFFIXES[row.unit];
      if (suffix === undefined || row.flag === undefined || !name.endsWith(suffix)) continue;
      expect({ name, flag: row.flag.endsWith(`-${suffix.toLowerCase()}`) }).toEqual({ name, flag: true });
    }
  });
});

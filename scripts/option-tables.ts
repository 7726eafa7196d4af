/**
 * The docs tables of the options, rendered from their rows: docs/isolate.md's Options table
 * (IsolateExecutor) and docs/remote.md's flag table (the daemon). `npm run docs:options` writes
 * them into the pages; test/isolate/host/options/option-docs.test.ts fails when a page's table is not what its
 * rows render, so a row changed without its docs fails the tests.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { DURABLE_ROWS } from '../src/durable/open-options.js';
import { CONFINEMENT_OPTIONS, ISOLATE_OPTION_ROWS, type IsolateOptionRow } from '../src/isolate/index.js';
import type { OptionRow } from '../src/protocol/option-schema.js';
import { CONNECT_ROWS } from '../src/remote/connect-options.js';
import { LOG_FORMATS } from '../src/server/observe/log.js';
import { DAEMON_ROWS, SERVER_ROWS, type ServerOptionRow } from '../src/server/options/server-options.js';

const MIB = 2 ** 20;

/** A markdown table cell: a `|` outside a code span is escaped. */
function cell(text: string): string {
  return text.replaceAll('|', '\\|');
}

/** A default in docs/isolate.md's words: a number in its unit (bytes as MiB where whole), a value as code. */
function isolateDefault(row: OptionRow): string {
  if (row.defaultText !== undefined) return row.defaultText;
  if (typeof row.default === 'number')
    return row.unit === 'bytes' && row.default % MIB === 0 ? `${row.default / MIB} MiB` : `\`${row.default}\``;
  if (typeof row.default === 'string') return `\`'${row.default}'\``;
  return 'none';
}

/** docs/isolate.md's Options table: every option but the groups, by its path. */
export function isolateOptionsTable(): string {
  const lines = ['| option | default | meaning |', '|---|---|---|'];
  for (const [prefix, rows] of [
    ['', ISOLATE_OPTION_ROWS.top],
    ['pool.', ISOLATE_OPTION_ROWS.pool],
    ['limits.', ISOLATE_OPTION_ROWS.limits],
  ] as const) {
    for (const [name, row] of Object.entries(rows) as [string, IsolateOptionRow][]) {
      if (row.type === 'object') continue;
      lines.push(`| \`${prefix}${name}\` | ${isolateDefault(row)} | ${row.description} |`);
    }
  }
  return lines.join('\n');
}

/** What a flag takes, as docs/remote.md's first column shows it. */
function flagArgument(row: OptionRow): string {
  if (row.type === 'boolean') return '';
  if (row.flag === 'confinement') return ` <${CONFINEMENT_OPTIONS.join('|')}>`;
  if (row.flag === 'log-format') return ` <${LOG_FORMATS.join('|')}>`;
  if (row.unit === 'ms') return ' <ms>';
  if (row.unit === 'bytes') return ' <bytes>';
  if (row.type === 'string')
    return ` <${row.flag === 'token' ? 'token' : row.flag === 'daemon-id' ? 'name' : row.flag === 'cgroup' ? 'path' : 'address'}>`;
  return ' <n>';
}

/** A flag's default in docs/remote.md's words: the number the flag takes, a value as code. */
function flagDefault(row: OptionRow): string {
  if (row.defaultText !== undefined) return row.defaultText;
  if (typeof row.default === 'number') return String(row.default);
  if (typeof row.default === 'string') return `\`${row.default}\``;
  if (row.default === false) return 'off';
  return 'none';
}

function flagLine(row: OptionRow & { flagHelp?: string }, option?: string): string {
  const meaning = option === undefined ? row.description : `${row.flagHelp ?? row.description} (\`${option}\`)`;
  return `| ${cell(`\`--${row.flag}${flagArgument(row)}\``)} | ${flagDefault(row)} | ${meaning} |`;
}

/** docs/remote.md's flag table: the daemon's flags, in --help's order, each sandbox flag with its option. */
export function daemonFlagTable(): string {
  const lines = ['| flag | default | meaning |', '|---|---|---|'];
  for (const row of [...Object.values(SERVER_ROWS), ...Object.values(DAEMON_ROWS)] as ServerOptionRow[])
    if (row.flag !== undefined) lines.push(flagLine(row));
  for (const [prefix, rows] of [
    ['', ISOLATE_OPTION_ROWS.top],
    ['pool.', ISOLATE_OPTION_ROWS.pool],
    ['limits.', ISOLATE_OPTION_ROWS.limits],
  ] as const) {
    for (const [name, row] of Object.entries(rows) as [string, IsolateOptionRow][])
      if (row.flag !== undefined) lines.push(flagLine(row, `${prefix}${name}`));
  }
  lines.push('| `-h`, `--help` | | usage, with every default |');
  lines.push(
    "| `-V`, `--version` | | (`-v` too) the package's version and the wire protocol's (`codemode-executor 0.1.0 (protocol 1)`) |",
  );
  return lines.join('\n');
}

/** A default in docs/remote.md's words for `connect()`: milliseconds with their unit, a value as code. */
function connectDefault(row: OptionRow): string {
  if (row.defaultText !== undefined) return row.defaultText;
  if (typeof row.default === 'number') return row.unit === 'ms' ? `${row.default} ms` : String(row.default);
  if (typeof row.default === 'boolean') return `\`${row.default}\``;
  return 'none';
}

/** docs/remote.md's table of `connect()`'s options. */
export function connectOptionsTable(): string {
  const lines = ['| option | default | meaning |', '|---|---|---|'];
  for (const [name, row] of Object.entries(CONNECT_ROWS) as [string, OptionRow][])
    lines.push(`| \`${name}\` | ${connectDefault(row)} | ${row.description} |`);
  return lines.join('\n');
}

/** docs/remote.md's table of renamed options and flags, from the rows' `renamedFrom`. */
export function renamedOptionsTable(): string {
  const lines = ['| old name | new name | where |', '|---|---|---|'];
  const groups: [where: string, prefix: string, rows: Readonly<Record<string, OptionRow>>][] = [
    ['`IsolateExecutor`', '', ISOLATE_OPTION_ROWS.top],
    ['`IsolateExecutor`', 'pool.', ISOLATE_OPTION_ROWS.pool],
    ['`IsolateExecutor`', 'limits.', ISOLATE_OPTION_ROWS.limits],
    ['`createExecutorServer()`', '', SERVER_ROWS],
    ['`connect()`', '', CONNECT_ROWS],
  ];
  for (const [where, prefix, rows] of groups) {
    for (const [name, row] of Object.entries(rows)) {
      if (row.renamedFrom === undefined) continue;
      lines.push(`| \`${prefix}${row.renamedFrom.name}\` | \`${prefix}${name}\` | ${where} |`);
      if (row.renamedFrom.flag !== undefined && row.flag !== undefined)
        lines.push(`| \`--${row.renamedFrom.flag}\` | \`--${row.flag}\` | \`codemode-executor serve\` |`);
    }
  }
  return lines.join('\n');
}

/** docs/durable-state.md's table of `openDurableState`'s options. */
export function durableOptionsTable(): string {
  const lines = ['| option | what it is |', '|---|---|'];
  for (const [name, row] of Object.entries(DURABLE_ROWS)) lines.push(`| \`${name}\` | ${row.description} |`);
  return lines.join('\n');
}

/** The generated tables: the page, the heading its table is the first under, and the table. */
export const OPTION_TABLES = [
  { page: 'isolate.md', heading: '## Options', render: isolateOptionsTable },
  { page: 'remote.md', heading: '## `connect(url, options)`', render: connectOptionsTable },
  { page: 'remote.md', heading: '## The daemon: `codemode-executor serve`', render: daemonFlagTable },
  { page: 'remote.md', heading: '### Renamed options', render: renamedOptionsTable },
  { page: 'durable-state.md', heading: '## Opening and closing', render: durableOptionsTable },
] as const;

/** The first table under `heading`: where it starts and ends, in lines. */
export function tableSpan(markdown: string, heading: string): { lines: string[]; start: number; end: number } {
  const lines = markdown.split('\n');
  const at = lines.indexOf(heading);
  if (at < 0) throw new Error(`no heading ${heading}`);
  const start = lines.findIndex((line, index) => index > at && line.startsWith('|'));
  let end = start;
  while (end < lines.length && lines[end]!.startsWith('|')) end += 1;
  return { lines, start, end };
}

export function docsPath(page: string): string {
  return fileURLToPath(new URL(`../docs/${page}`, import.meta.url));
}

const USAGE = `usage: npm run docs:options

Writes the options tables, rendered from the option rows, into the docs pages that hold them:
${OPTION_TABLES.map(({ page, heading }) => `docs/${page} (${heading.replace(/^#+ /, '')})`).join(', ')}.
test/isolate/host/options/option-docs.test.ts fails when a page's table is not what its rows render.

  -h, --help   print this text`;

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  if (args.some((arg) => arg === '--help' || arg === '-h')) {
    console.log(USAGE);
    process.exit(0);
  }
  // It takes no argument, so anything else is a slip: rewriting the pages then would surprise.
  if (args.length > 0) {
    console.error(`docs:options: unexpected argument ${args[0]}\n\n${USAGE}`);
    process.exit(2);
  }
  for (const { page, heading, render } of OPTION_TABLES) {
    const { lines, start, end } = tableSpan(readFileSync(docsPath(page), 'utf8'), heading);
    lines.splice(start, end - start, render());
    writeFileSync(docsPath(page), lines.join('\n'));
    console.log(`docs/${page}: ${heading}`);
  }
}

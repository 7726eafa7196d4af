/**
 * `codemode-executor --help`, composed from the option rows: the server's (server-options.ts) and
 * IsolateExecutor's (through the `/isolate` entry), so a flag, its default and its words are written
 * once, in its row.
 */
import { CONFINEMENT_OPTIONS, ISOLATE_OPTION_ROWS, type IsolateOptionRow } from '../../isolate/index.js';
import { LOG_FORMATS } from '../observe/log.js';
import { DAEMON_ROWS, SERVER_ROWS, type ServerOptionRow } from '../options/server-options.js';

/** Where a flag's text starts, and how wide a line of --help grows before it wraps. */
const TEXT_COLUMN = 41;
const LINE_WIDTH = 110;
/** Joins words a wrap must not part (`(default 512)`); a space once wrapped. */
const GLUE = '\u00a0';

/** A row's words as plain text: --help shows no markdown. */
function plain(markdown: string): string {
  return markdown.replaceAll('`', '');
}

/** One flag's lines: the flag at two spaces, its text from TEXT_COLUMN, wrapped at LINE_WIDTH (never at a GLUE). */
function helpLine(flag: string, text: string): string {
  const head = `  ${flag}`;
  const indent = ' '.repeat(TEXT_COLUMN);
  const lines: string[] = [];
  let current = '';
  for (const word of text.split(' ')) {
    if (current !== '' && TEXT_COLUMN + current.length + 1 + word.length > LINE_WIDTH) {
      lines.push(current);
      current = word;
    } else current = current === '' ? word : `${current} ${word}`;
  }
  lines.push(current);
  const first =
    head.length + 2 <= TEXT_COLUMN ? `${head.padEnd(TEXT_COLUMN)}${lines[0]}` : `${head}\n${indent}${lines[0]}`;
  return [first, ...lines.slice(1).map((line) => `${indent}${line}`)].join('\n').replaceAll(GLUE, ' ');
}

/** What a flag takes, by its row: `<ms>`, `<bytes>`, a choice's values, `<n>`. */
function argumentOf(row: IsolateOptionRow | ServerOptionRow, choices?: readonly string[]): string {
  if (row.type === 'boolean') return '';
  if (choices !== undefined) return ` <${choices.join('|')}>`;
  if (row.unit === 'ms') return ' <ms>';
  if (row.unit === 'bytes') return ' <bytes>';
  if (row.type === 'string')
    return ` <${row.flag === 'token' ? 'token' : row.flag === 'daemon-id' ? 'name' : row.flag === 'cgroup' ? 'path' : 'address'}>`;
  return ' <n>';
}

/** A row's default as --help says it. */
function defaultOf(row: IsolateOptionRow | ServerOptionRow): string {
  const hostFigure =
    'hostDefault' in row && row.hostDefault !== undefined ? `;${GLUE}${row.hostDefault()}${GLUE}here` : '';
  if (row.defaultText !== undefined) return `(default: ${plain(row.defaultText)}${hostFigure})`;
  if (row.default === false) return '(default: off)';
  if (row.default === undefined || row.default === null) return '(default: none)';
  return `(default${GLUE}${row.default})`;
}

function rowLine(row: IsolateOptionRow | ServerOptionRow, choices?: readonly string[], value?: string): string {
  const flag = `--${row.flag}${value ?? argumentOf(row, choices)}`;
  return helpLine(flag, `${plain(row.flagHelp ?? row.description)} ${defaultOf(row)}`);
}

/** The values a choice flag takes. */
const CHOICES: Readonly<Record<string, readonly string[]>> = {
  confinement: CONFINEMENT_OPTIONS,
  'log-format': LOG_FORMATS,
};

function linesOf(rows: Readonly<Record<string, IsolateOptionRow | ServerOptionRow>>): string[] {
  return Object.values(rows).flatMap((row) => (row.flag === undefined ? [] : [rowLine(row, CHOICES[row.flag])]));
}

export const USAGE = `Usage: codemode-executor serve [options]

Serves an IsolateExecutor over a capnweb WebSocket, for connect() from @supolka/cloudflare-codemode-executor.
(codemode-executor bundle --help: a module map of npm packages for the sandbox.)

Server:
${[...linesOf(SERVER_ROWS), ...linesOf(DAEMON_ROWS)].join('\n')}

Sandbox (IsolateExecutor):
${linesOf(ISOLATE_OPTION_ROWS.top).join('\n')}

Pool (processes, one execution each):
${linesOf(ISOLATE_OPTION_ROWS.pool).join('\n')}

Size caps of one execution (bytes, UTF-8 for text):
${linesOf(ISOLATE_OPTION_ROWS.limits).join('\n')}

  -h, --help                             this text
  -V, --version                          the package's version and its wire protocol's (-v too)
`;

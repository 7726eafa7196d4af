/**
 * Reading the tables of a docs page, for the tests that hold them to the code: the rows of the
 * first table under a heading, split into cells, and the code spans of a cell.
 */
import { readFileSync } from 'node:fs';

export function readDocs(page: string): string {
  return readFileSync(new URL(`../../docs/${page}`, import.meta.url), 'utf8');
}

/** One row's cells, split on `|` outside code spans; `\|` is a `|` of the cell's text. */
function cellsOf(line: string): string[] {
  const cells: string[] = [];
  let cell = '';
  let inCode = false;
  for (let index = 1; index < line.length; index += 1) {
    const char = line[index]!;
    if (char === '\\' && line[index + 1] === '|') {
      cell += '|';
      index += 1;
    } else if (char === '`') {
      inCode = !inCode;
      cell += char;
    } else if (char === '|' && !inCode) {
      cells.push(cell.trim());
      cell = '';
    } else cell += char;
  }
  return cells;
}

/** The body rows of the first table after the heading line `heading` (`## Limits`), as cells. */
export function tableUnder(markdown: string, heading: string): string[][] {
  const lines = markdown.split('\n');
  const at = lines.indexOf(heading);
  if (at < 0) throw new Error(`no heading ${heading}`);
  const start = lines.findIndex((line, index) => index > at && line.startsWith('|'));
  const rows: string[][] = [];
  // The header and its separator line come first.
  for (let index = start + 2; index < lines.length && lines[index]!.startsWith('|'); index += 1) {
    rows.push(cellsOf(lines[index]!));
  }
  return rows;
}

/** The code spans of a cell, without their backticks. */
export function codeSpans(cell: string): string[] {
  return [...cell.matchAll(/`([^`]+)`/g)].map((match) => match[1]!);
}

const UNITS: Record<string, number> = { KiB: 2 ** 10, MiB: 2 ** 20, GiB: 2 ** 30 };

/**
 * The first number a docs cell states, with its unit applied: `1 MiB` is 1048576, `60000 ms` and
 * `256` are themselves (ms, MB and counts are written in the option's own unit). Undefined when the
 * cell states none.
 */
export function firstNumber(text: string): number | undefined {
  const match = /(\d+(?:\.\d+)?)(?:\s*(KiB|MiB|GiB)\b)?/.exec(text);
  if (match === null) return undefined;
  return Number(match[1]) * (match[2] === undefined ? 1 : UNITS[match[2]]!);
}

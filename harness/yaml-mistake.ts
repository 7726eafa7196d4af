/**
 * A YAML syntax error in a case file, said in our words at the line of the mistake, with the case
 * it belongs to. The YAML library words an indentation slip by what it could not parse (a
 * `code:` indented one space too far reads as `Nested mappings are not allowed in compact
 * mappings`, at the line before); a case author wants to hear which key is out of line.
 */
import type { LineCounter, YAMLError } from 'yaml';
import { texts } from './texts.js';

/** A line that opens with a key: `  code: ...`, or `- id: ...`, which keys a sequence item's mapping. */
const KEY_LINE = /^( *)(- +)?([A-Za-z_$][\w$-]*): */;

/** A case item of a catalogue file: `- id: ...` at column 0, or `-` there with `id:` among its keys. */
const ITEM_START = /^- /;
const ID_KEY = /^(?:- +| +)id: *(["']?)([\w.$-]+)\1 *(?:#.*)?$/;

/** The errors whose cause is where a key starts, which the library reports where it stopped reading. */
const INDENTATION_CODES = new Set(['BLOCK_AS_IMPLICIT_KEY', 'MULTILINE_IMPLICIT_KEY', 'BAD_INDENT']);

/** A key indented less than its mapping's: the library takes it for a sequence item without its `-`. */
function isIndentationError(error: YAMLError): boolean {
  return (
    INDENTATION_CODES.has(error.code) || (error.code === 'MISSING_CHAR' && /without - indicator/.test(error.message))
  );
}

interface KeyLine {
  line: number;
  key: string;
  /** The column its key starts at: after `- ` for the first key of a sequence item. */
  indent: number;
}

function keyLine(lines: readonly string[], line: number): KeyLine | undefined {
  const match = KEY_LINE.exec(lines[line - 1] ?? '');
  if (!match) return undefined;
  return { line, key: match[3]!, indent: match[1]!.length + (match[2]?.length ?? 0) };
}

/** The key line closest above `line`, skipping blank and comment lines. */
function previousKeyLine(lines: readonly string[], line: number): KeyLine | undefined {
  for (let at = line - 1; at >= 1; at -= 1) {
    const text = lines[at - 1]!;
    if (text.trim() === '' || text.trimStart().startsWith('#')) continue;
    return keyLine(lines, at);
  }
  return undefined;
}

/** The id of the case item that holds `line`, when it has one. */
function caseIdAt(lines: readonly string[], line: number): string | undefined {
  let start = line;
  while (start >= 1 && !ITEM_START.test(lines[start - 1]!)) start -= 1;
  if (start < 1) return undefined;
  for (let at = start; at <= lines.length; at += 1) {
    if (at > start && ITEM_START.test(lines[at - 1]!)) break;
    const id = ID_KEY.exec(lines[at - 1]!);
    if (id) return id[2];
  }
  return undefined;
}

/**
 * The complaint for the first of `errors`: `file:line (case "id"): message`, at the line of the
 * mistake. Later errors mostly cascade from the first, and are only counted.
 */
export function describeYamlMistake(
  fileName: string,
  source: string,
  errors: readonly YAMLError[],
  lineCounter: LineCounter,
): string {
  const first = errors[0]!;
  const lines = source.split(/\r?\n/);
  const reported = lineCounter.linePos(first.pos[0]).line;
  let line = reported;
  let message = texts.loader.yaml(first.message.split('\n')[0] ?? '', errors.length - 1);
  if (isIndentationError(first)) {
    // The library stops where it could not go on; the key out of line is where the errors sharing its start end.
    const ends = errors
      .filter((error) => error.pos[0] === first.pos[0])
      .map((error) => lineCounter.linePos(Math.max(error.pos[0], error.pos[1] - 1)).line);
    const mistake = keyLine(lines, Math.max(...ends));
    const before = mistake && previousKeyLine(lines, mistake.line);
    if (mistake && before && mistake.indent !== before.indent) {
      line = mistake.line;
      message = texts.loader.keyOutOfLine(mistake.key, mistake.indent, before.key, before.line, before.indent);
    }
  } else if (first.code === 'TAB_AS_INDENT') {
    message = texts.loader.tabIndent;
  } else if (first.code === 'DUPLICATE_KEY') {
    const duplicate = keyLine(lines, reported);
    if (duplicate) message = texts.loader.duplicateKey(duplicate.key);
  }
  const id = caseIdAt(lines, line);
  return `${fileName}:${line}${id === undefined ? '' : ` (case "${id}")`}: ${message}`;
}

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

/** A key whose value is a block scalar: `  code: |-`, with its chomping or indentation indicator. */
const BLOCK_SCALAR_HEADER = /^( *)(- +)?([A-Za-z_$][\w$-]*: *[|>][-+0-9]*) *(?:#.*)?$/;

/** A line whose indentation has a tab: spaces, if any, then a tab. */
const TAB_INDENT = /^ *\t/;

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

interface BlockDedent {
  /** The line indented less than the block's first, and its indentation. */
  line: number;
  indent: number;
  /** The block's header (`code: |-`), its line, its key's indentation, and the block's first line's. */
  header: string;
  headerLine: number;
  keyIndent: number;
  /** Absent when the line cut short is the block's first. */
  blockIndent: number | undefined;
}

/**
 * The first line that cuts a block scalar short: indented no deeper than the block's key, or less
 * than the block's first line, where nothing can stand but the next key of the mapping that holds
 * the block (or a sequence item, or a comment) at the key's column or left of it. YAML ends the
 * block there and takes the line for a key, so every line after it is an error.
 */
function blockScalarDedent(lines: readonly string[]): BlockDedent | undefined {
  for (let at = 0; at < lines.length; at += 1) {
    const header = BLOCK_SCALAR_HEADER.exec(lines[at]!);
    if (!header) continue;
    const keyIndent = header[1]!.length + (header[2]?.length ?? 0);
    let blockIndent: number | undefined;
    for (let next = at + 1; next < lines.length; next += 1) {
      const text = lines[next]!;
      if (text.trim() === '') continue;
      const indent = text.length - text.trimStart().length;
      if (blockIndent !== undefined && indent >= blockIndent) continue;
      const endsTheBlock =
        indent <= keyIndent && (keyLine(lines, next + 1) !== undefined || /^(- |-$|#)/.test(text.trimStart()));
      if (endsTheBlock) break;
      // The block's first line sets its indentation, and must sit deeper than the key.
      if (blockIndent === undefined && indent > keyIndent) {
        blockIndent = indent;
        continue;
      }
      return { line: next + 1, indent, header: header[3]!.trim(), headerLine: at + 1, keyIndent, blockIndent };
    }
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
 * mistake. Later errors mostly cascade from the first (a block scalar cut short makes every later
 * line an error, over a thousand in a catalogue file), so only the first is reported.
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
  const firstMessage = first.message.split('\n')[0] ?? '';
  let message = texts.loader.yaml(firstMessage);
  const dedent = blockScalarDedent(lines);
  const inDedent = dedent && dedent.line <= lineCounter.linePos(Math.max(first.pos[0], first.pos[1] - 1)).line;
  // A tab the library stops at is worded by what it could not parse there (`Unexpected scalar at
  // node end`, or a block scalar cut short when the tab follows one); the author needs the tab.
  const tabbed = [inDedent ? dedent.line : undefined, reported].find(
    (at) => at !== undefined && TAB_INDENT.test(lines[at - 1] ?? ''),
  );
  if (tabbed !== undefined) {
    line = tabbed;
    message = texts.loader.tabIndent;
  } else if (inDedent) {
    // A dedent inside a block scalar causes whatever the library says first at or after its line.
    line = dedent.line;
    message = texts.loader.blockScalarDedent(
      firstMessage,
      dedent.indent,
      dedent.header,
      dedent.headerLine,
      dedent.keyIndent,
      dedent.blockIndent,
    );
  } else if (isIndentationError(first)) {
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

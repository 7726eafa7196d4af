/**
 * Loads the catalogue: every `cases/*.yaml`, checked against `schema/case.schema.json` and a few
 * rules a schema cannot state. Every complaint names the file, the line and the case id, e.g.
 * `cases/dispatch.yaml:42 (case "args-spread"): /expect/logs must be array`.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import { type Document, isMap, isScalar, isSeq, LineCounter, type Node, parseDocument } from 'yaml';
import type { Case, LoadedCase } from './case-model.js';
import { isMatcher } from './expect.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const CASES_DIR = join(ROOT, 'cases');
const SCHEMA_PATH = join(ROOT, 'schema', 'case.schema.json');

/** The first line of every case file, so editors complete and check fields against the schema. */
export const SCHEMA_COMMENT = '# yaml-language-server: $schema=../schema/case.schema.json';

/** A case file that cannot be used. The message lists every problem, one per line. */
export class CaseFileError extends Error {
  override name = 'CaseFileError';
}

let compiled: ValidateFunction | undefined;

function validator(): ValidateFunction {
  compiled ??= new Ajv2020({ allErrors: true, verbose: true, strict: true, strictRequired: false }).compile(
    JSON.parse(readFileSync(SCHEMA_PATH, 'utf8')) as object,
  );
  return compiled;
}

/** How a file is named in messages: relative to the working directory when it lies below it. */
function displayName(file: string): string {
  const fromCwd = relative(process.cwd(), file);
  return fromCwd.startsWith('..') ? file : fromCwd;
}

interface Located {
  line: number;
  caseId: string | undefined;
}

/** Finds lines and case ids in one parsed document. */
class Positions {
  constructor(
    private readonly doc: Document,
    private readonly lines: LineCounter,
  ) {}

  lineOf(offset: number): number {
    return this.lines.linePos(offset).line;
  }

  /** The node at a JSON pointer path, or the deepest ancestor that exists. */
  private nodeAt(segments: string[]): { node: Node | undefined; rest: string[] } {
    let node: unknown = this.doc.contents;
    for (let i = 0; i < segments.length; i++) {
      const key = segments[i]!;
      let next: unknown;
      if (isSeq(node)) next = node.items[Number(key)];
      else if (isMap(node))
        next = node.items.find((pair) => isScalar(pair.key) && String(pair.key.value) === key)?.value;
      if (next === undefined || next === null) return { node: node as Node, rest: segments.slice(i) };
      node = next;
    }
    return { node: node as Node, rest: [] };
  }

  /** The line of a property key inside the map at `segments`, when it is there. */
  private keyLine(segments: string[], key: string): number | undefined {
    const { node, rest } = this.nodeAt(segments);
    if (rest.length > 0 || !isMap(node)) return undefined;
    const pair = node.items.find((item) => isScalar(item.key) && String(item.key.value) === key);
    const range = (pair?.key as Node | undefined)?.range;
    return range ? this.lineOf(range[0]) : undefined;
  }

  locate(segments: string[], key?: string): Located {
    const caseIndex = segments[0];
    const caseId = caseIndex === undefined ? undefined : this.caseId(Number(caseIndex));
    const keyed = key === undefined ? undefined : this.keyLine(segments, key);
    if (keyed !== undefined) return { line: keyed, caseId };
    const { node } = this.nodeAt(segments);
    const range = node?.range;
    return { line: range ? this.lineOf(range[0]) : 1, caseId };
  }

  caseId(index: number): string | undefined {
    const id = this.doc.getIn([index, 'id']);
    return typeof id === 'string' ? id : undefined;
  }

  caseLine(index: number): number {
    return this.locate([String(index)]).line;
  }
}

function pointerSegments(pointer: string): string[] {
  if (pointer === '') return [];
  return pointer
    .slice(1)
    .split('/')
    .map((segment) => segment.replace(/~1/g, '/').replace(/~0/g, '~'));
}

function complaint(file: string, where: Located, path: string, message: string): string {
  const who = where.caseId === undefined ? '' : ` (case "${where.caseId}")`;
  return `${displayName(file)}:${where.line}${who}: ${path === '' ? '' : `${path} `}${message}`;
}

/**
 * Ajv reports every branch of a union. Keep what names the actual problem: drop the errors inside a
 * union's branches, and keep a union's own summary only where nothing deeper or more precise was said.
 */
function usefulErrors(errors: readonly ErrorObject[]): ErrorObject[] {
  const isSummary = (error: ErrorObject) => error.keyword === 'oneOf' || error.keyword === 'anyOf';
  const direct = errors.filter((error) => error.keyword !== 'if' && !/\/(oneOf|anyOf)\/\d+\//.test(error.schemaPath));
  return direct.filter((error, index) => {
    if (!isSummary(error)) return true;
    return !direct.some(
      (other, otherIndex) =>
        other !== error &&
        (other.instancePath.startsWith(`${error.instancePath}/`) ||
          (other.instancePath === error.instancePath && (!isSummary(other) || otherIndex > index))),
    );
  });
}

function describeError(error: ErrorObject): { message: string; key?: string } {
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'additionalProperties':
      return {
        message: `has an unknown property "${String(params.additionalProperty)}"`,
        key: String(params.additionalProperty),
      };
    case 'propertyNames':
      return { message: `has an unknown property "${String(params.propertyName)}"`, key: String(params.propertyName) };
    case 'enum':
      return {
        message: `must be one of: ${(params.allowedValues as unknown[]).map((value) => JSON.stringify(value)).join(', ')}`,
      };
    case 'false schema':
      return {
        message: 'is not allowed here (a case-level reason belongs beside reference: false; a skip carries its own)',
      };
    case 'oneOf':
    case 'anyOf': {
      const description = (error.parentSchema as { description?: unknown } | undefined)?.description;
      return { message: typeof description === 'string' ? description : (error.message ?? error.keyword) };
    }
    default:
      return { message: error.message ?? error.keyword };
  }
}

/** Rules the schema cannot state. Each returns `[path, message]` pairs. */
function semanticProblems(cases: readonly Case[]): Array<{ segments: string[]; path: string; message: string }> {
  const problems: Array<{ segments: string[]; path: string; message: string }> = [];
  cases.forEach((item, index) => {
    const at = (path: string, message: string) =>
      problems.push({ segments: [String(index), ...pointerSegments(path)], path, message });
    walkMatchers(item.expect, '/expect', (path, pattern) => {
      try {
        new RegExp(pattern);
      } catch (error) {
        at(`${path}/match`, `is not a valid regular expression: ${(error as Error).message}`);
      }
    });
    if (item.options?.bareRecord) {
      const providers = item.providers ?? [];
      if (providers.length !== 1 || (providers[0]!.name ?? 'codemode') !== 'codemode') {
        at('/options/bareRecord', 'needs exactly one provider, named codemode or unnamed');
      } else if (Object.keys(providers[0]!).some((key) => key !== 'name' && key !== 'tools')) {
        at(
          '/options/bareRecord',
          'passes functions alone: the provider can carry no positionalArgs, proxySource or prelude',
        );
      }
    }
    if (item.reference === false) {
      item.skipOn?.forEach((skip, skipIndex) => {
        if (skip.versions.some((side) => side !== 'ours' && side !== 'ours-remote')) {
          at(`/skipOn/${skipIndex}/versions`, 'names a reference column, but the case is reference: false already');
        }
      });
    }
  });
  return problems;
}

function walkMatchers(value: unknown, path: string, visit: (path: string, pattern: string) => void): void {
  if (isMatcher(value)) {
    if ('match' in value) visit(path, value.match);
    return;
  }
  if (Array.isArray(value))
    value.forEach((item, index) => {
      walkMatchers(item, `${path}/${index}`, visit);
    });
  else if (value !== null && typeof value === 'object') {
    for (const [key, nested] of Object.entries(value)) walkMatchers(nested, `${path}/${key}`, visit);
  }
}

/** Loads and checks one case file. Throws `CaseFileError` naming every problem. */
export function loadCaseFile(file: string): LoadedCase[] {
  const source = readFileSync(file, 'utf8');
  const firstLine = source.split(/\r?\n/, 1)[0];
  if (firstLine !== SCHEMA_COMMENT) {
    throw new CaseFileError(`${displayName(file)}:1: the file must begin with the line ${SCHEMA_COMMENT}`);
  }
  const lines = new LineCounter();
  const doc = parseDocument(source, { lineCounter: lines, prettyErrors: false, uniqueKeys: true });
  if (doc.errors.length > 0) {
    // Later YAML errors mostly cascade from the first, so only the first is worth reading.
    const [first] = doc.errors;
    const more = doc.errors.length > 1 ? ` (and ${doc.errors.length - 1} more YAML errors after it)` : '';
    throw new CaseFileError(
      `${displayName(file)}:${lines.linePos(first!.pos[0]).line}: YAML ${first!.message.split('\n')[0]}${more}`,
    );
  }
  const positions = new Positions(doc, lines);
  const data: unknown = doc.toJS();
  const validate = validator();
  const messages: Array<{ line: number; text: string }> = [];
  if (!validate(data)) {
    for (const error of usefulErrors(validate.errors ?? [])) {
      const { message, key } = describeError(error);
      const segments = pointerSegments(error.instancePath);
      const where = positions.locate(segments, key);
      messages.push({
        line: where.line,
        text: complaint(file, where, error.instancePath.replace(/^\/\d+/, ''), message),
      });
    }
  } else {
    for (const problem of semanticProblems(data as Case[])) {
      const where = positions.locate(problem.segments);
      messages.push({ line: where.line, text: complaint(file, where, problem.path, problem.message) });
    }
  }
  if (messages.length > 0) {
    const unique = [...new Map(messages.map((entry) => [entry.text, entry])).values()].sort((a, b) => a.line - b.line);
    throw new CaseFileError(unique.map((entry) => entry.text).join('\n'));
  }
  const name = displayName(file);
  return (data as Case[]).map((item, index) => ({ ...item, file: name, line: positions.caseLine(index) }));
}

/** Every case file of a directory, sorted by name. */
function caseFiles(dir: string = CASES_DIR): string[] {
  return readdirSync(dir)
    .filter((entry) => entry.endsWith('.yaml'))
    .sort()
    .map((entry) => join(dir, entry));
}

/** Loads the whole catalogue. Ids are unique across files; every problem of every file is reported. */
export function loadCatalogue(dir: string = CASES_DIR): LoadedCase[] {
  const problems: string[] = [];
  const cases: LoadedCase[] = [];
  for (const file of caseFiles(dir)) {
    try {
      cases.push(...loadCaseFile(file));
    } catch (error) {
      if (!(error instanceof CaseFileError)) throw error;
      problems.push(error.message);
    }
  }
  const seen = new Map<string, LoadedCase>();
  for (const item of cases) {
    const first = seen.get(item.id);
    if (first) {
      problems.push(
        `${item.file}:${item.line} (case "${item.id}"): duplicate id, first declared at ${first.file}:${first.line}`,
      );
    } else seen.set(item.id, item);
  }
  if (problems.length > 0) throw new CaseFileError(problems.join('\n'));
  if (cases.length === 0) throw new CaseFileError(`${displayName(dir)}: no case files (*.yaml) found`);
  return cases;
}

/** `<file> › <id>`, the name a case's test carries everywhere. */
export function caseTitle(item: LoadedCase): string {
  return `${basename(item.file)} › ${item.id}`;
}

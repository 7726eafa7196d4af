/**
 * Loads the catalogue: `cases/boundaries.yaml` and every other `cases/*.yaml`, each checked against
 * its schema and against the rules a schema cannot state (a boundary or a basis that exists, an id
 * used once across files, an `upstream` that can be checked). Every entry point loads through here,
 * so every one refuses the same things. Each complaint names the file, the line and the case id:
 * `cases/args.yaml:42 (case "args-spread"): /expect/logs must be array`. Node-only.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { basename, join, relative, resolve } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import { type Document, isMap, isScalar, LineCounter, type Node, parseDocument } from 'yaml';
import { nearestName } from '../src/protocol/nearest-name.js';
import type { Boundary, Case, LoadedCase } from './case-model.js';
import { isMatcher } from './expect.js';
import type { Flow, LoadedFlow } from './flow-model.js';
import { compareReleases, isFlow, RUNTIME_BOUNDARY, referenceRefusal } from './judge.js';
import { texts } from './texts.js';
import { describeYamlMistake } from './yaml-mistake.js';

const ROOT = resolve(import.meta.dirname, '..');
const CASES_DIR = join(ROOT, 'cases');
const UPSTREAM_DOC = join(ROOT, 'docs', 'upstream.md');
export const BOUNDARIES_FILE = 'boundaries.yaml';

/** The first line of every case file, so editors complete and check fields against the schema. */
export const SCHEMA_COMMENT = '# yaml-language-server: $schema=../schema/case.schema.json';
/** The first line of a fuzz draft, one folder further down (`cases/drafts/`). */
export const DRAFT_SCHEMA_COMMENT = '# yaml-language-server: $schema=../../schema/case.schema.json';
export const BOUNDARIES_SCHEMA_COMMENT = '# yaml-language-server: $schema=../schema/boundaries.schema.json';

/** A catalogue that cannot be used. The message lists every problem, one per line. */
export class CaseFileError extends Error {
  override name = 'CaseFileError';
}

/** An executor case or a runtime flow, with where it came from. */
export type CatalogueItem = LoadedCase | LoadedFlow;

export interface Catalogue {
  /** Executor cases and runtime flows, in file order. */
  cases: CatalogueItem[];
  boundaries: Map<string, Boundary>;
}

const validators = new Map<string, ValidateFunction>();

function validator(schemaFile: string): ValidateFunction {
  let compiled = validators.get(schemaFile);
  if (!compiled) {
    const schema = JSON.parse(readFileSync(join(ROOT, 'schema', schemaFile), 'utf8')) as object;
    compiled = new Ajv2020({ allErrors: true, verbose: true, strict: true, strictRequired: false }).compile(schema);
    validators.set(schemaFile, compiled);
  }
  return compiled;
}

/** How a file is named in messages: relative to the working directory when it lies below it. */
function displayName(file: string): string {
  const fromCwd = relative(process.cwd(), file);
  return fromCwd.startsWith('..') ? file : fromCwd;
}

/** Lines and ids in one parsed file, for complaints. */
class Positions {
  constructor(
    private readonly file: string,
    private readonly doc: Document,
    private readonly lines: LineCounter,
  ) {}

  /** The line of the key `segments` ends with, or of the deepest node on the path that exists. */
  lineOf(segments: readonly string[]): number {
    const parent = this.doc.getIn(segments.slice(0, -1), true);
    const last = segments[segments.length - 1];
    const pair = isMap(parent)
      ? parent.items.find((item) => isScalar(item.key) && String(item.key.value) === last)
      : undefined;
    let range = (pair?.key as Node | undefined)?.range;
    for (let depth = segments.length; range === undefined && depth >= 0; depth -= 1)
      range = (this.doc.getIn(segments.slice(0, depth), true) as Node | undefined)?.range ?? undefined;
    return range ? this.lines.linePos(range[0]).line : 1;
  }

  /**
   * `file:line (case "id"): path message`, the path left out when it is the case itself. `key`
   * names a property inside the path, whose own line is the one to point at.
   */
  complaint(segments: readonly string[], message: string, key?: string): string {
    const [index, ...rest] = segments;
    const id = index === undefined ? undefined : this.doc.getIn([Number(index), 'id']);
    const who = typeof id === 'string' ? ` (case "${id}")` : '';
    const path = rest.length ? `/${rest.join('/')} ` : '';
    const line = this.lineOf(key === undefined ? segments : [...segments, key]);
    return `${displayName(this.file)}:${line}${who}: ${path}${message}`;
  }
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

/** The annotations of a schema node that complaints read. */
interface SchemaNode {
  title?: string;
  description?: string;
  examples?: Array<Record<string, string>>;
  properties?: Record<string, unknown>;
}

/** A flat mapping as a case file writes it inline: `{ before: args-spread }`. */
function flowMapping(value: Record<string, string>): string {
  return `{ ${Object.entries(value)
    .map(([key, item]) => `${key}: ${item}`)
    .join(', ')} }`;
}

/** The complaint for one schema error, and the property it is about when that has a line of its own. */
function describeError(error: ErrorObject): { message: string; key?: string } {
  const params = error.params as { additionalProperty?: string; propertyName?: string; allowedValues?: unknown[] };
  const unknownKey =
    error.keyword === 'additionalProperties'
      ? params.additionalProperty
      : error.keyword === 'propertyNames'
        ? params.propertyName
        : undefined;
  const schema = (error.parentSchema ?? {}) as SchemaNode;
  if (unknownKey !== undefined) {
    // A property the schema lists, for a slip such as `provders`, or a name its `propertyNames`
    // allows, for a tool's behaviour such as `return:`.
    const allowed = (schema as { propertyNames?: { enum?: unknown[] } }).propertyNames?.enum ?? [];
    const known = [...Object.keys(schema.properties ?? {}), ...allowed.filter((name) => typeof name === 'string')];
    return { message: texts.loader.unknownProperty(unknownKey, nearestName(unknownKey, known)), key: unknownKey };
  }
  if (error.keyword === 'enum') return { message: texts.loader.notOneOf(params.allowedValues ?? []) };
  // Ajv's "must be object" says neither what was written nor what belongs there; a mapping the
  // schema titles and shows an example of (a skip entry) is said in those words.
  const [example] = schema.examples ?? [];
  if (error.keyword === 'type' && schema.title !== undefined && example !== undefined && schema.description)
    return { message: texts.loader.notAMapping(error.data, schema.title, flowMapping(example), schema.description) };
  // A union's own error is vague ("must match exactly one schema"); its schema's description says what it takes.
  const description = schema.description;
  if ((error.keyword === 'oneOf' || error.keyword === 'anyOf') && typeof description === 'string')
    return { message: description };
  return { message: error.message ?? error.keyword };
}

/** Parses one YAML file and checks it against its schema; the data, or every complaint. */
function parseFile(
  file: string,
  schemaFile: string,
  comment: string,
): { data: unknown[]; positions: Positions } | { problems: string[] } {
  const source = readFileSync(file, 'utf8');
  if (source.split(/\r?\n/, 1)[0] !== comment)
    return { problems: [`${displayName(file)}:1: ${texts.loader.schemaComment(comment)}`] };
  const lines = new LineCounter();
  const doc = parseDocument(source, { lineCounter: lines, prettyErrors: false, uniqueKeys: true });
  if (doc.errors.length > 0) return { problems: [describeYamlMistake(displayName(file), source, doc.errors, lines)] };
  const positions = new Positions(file, doc, lines);
  const data: unknown = doc.toJS();
  const validate = validator(schemaFile);
  if (validate(data)) return { data: data as unknown[], positions };
  const problems = usefulErrors(validate.errors ?? []).map((error) => {
    const { message, key } = describeError(error);
    // A JSON pointer: `/0/expect/logs`, with `~1` for `/` and `~0` for `~` inside a key.
    const segments = error.instancePath
      .split('/')
      .slice(1)
      .map((segment) => segment.replace(/~1/g, '/').replace(/~0/g, '~'));
    return positions.complaint(segments, message, key);
  });
  return { problems };
}

/** The headings of docs/upstream.md: what a `basis` may name. */
function upstreamHeadings(doc = UPSTREAM_DOC): Set<string> {
  const headings = new Set<string>();
  for (const match of readFileSync(doc, 'utf8').matchAll(/^#{2,4} (.+?)\s*$/gm)) headings.add(match[1]!);
  return headings;
}

function walkMatchers(value: unknown, path: string[], visit: (path: string[], pattern: string) => void): void {
  if (isMatcher(value)) {
    if ('match' in value) visit([...path, 'match'], value.match);
    return;
  }
  if (Array.isArray(value)) {
    value.forEach((item, index) => {
      walkMatchers(item, [...path, String(index)], visit);
    });
  } else if (value !== null && typeof value === 'object')
    for (const [key, nested] of Object.entries(value)) walkMatchers(nested, [...path, key], visit);
}

/** The rules a schema cannot state, for one case: `[path, message]` pairs. */
function caseProblems(item: Case, boundaries: ReadonlyMap<string, Boundary>, headings: ReadonlySet<string>) {
  const problems: Array<[string[], string]> = [];
  const expectations: Array<[string[], unknown]> = [
    [['expect'], item.expect],
    [['upstream', 'expect'], item.upstream?.expect],
    ...(item.skipOn ?? []).map((entry, index): [string[], unknown] => [
      ['skipOn', String(index), 'expect'],
      entry.expect,
    ]),
  ];
  const recordsCalls = item.options?.recordCalls === true;
  for (const [where, expectation] of expectations) {
    if (!recordsCalls && expectation !== undefined && 'calls' in (expectation as object))
      problems.push([[...where, 'calls'], texts.loader.callsWithoutRecord]);
    walkMatchers(expectation, where, (path, pattern) => {
      try {
        new RegExp(pattern);
      } catch (error) {
        problems.push([path, texts.loader.badRegExp((error as Error).message)]);
      }
    });
  }
  if (recordsCalls && !('calls' in item.expect))
    problems.push([['options', 'recordCalls'], texts.loader.recordWithoutCalls]);
  if (item.basis !== undefined && !headings.has(item.basis))
    problems.push([['basis'], texts.loader.unknownBasis(item.basis)]);
  item.skipOn?.forEach((entry, index) => {
    const name = 'before' in entry ? entry.before : entry.from;
    if (!boundaries.has(name))
      problems.push([
        ['skipOn', String(index), 'before' in entry ? 'before' : 'from'],
        texts.loader.unknownBoundary(name, [...boundaries.keys()]),
      ]);
    if (entry.expect !== undefined && isDeepStrictEqual(entry.expect, item.upstream?.expect ?? item.expect))
      problems.push([['skipOn', String(index), 'expect'], texts.loader.skipExpectSameAsExpect]);
  });
  if (item.options?.bareRecord) {
    const providers = item.providers ?? [];
    const [only] = providers;
    if (
      providers.length !== 1 ||
      (only!.name ?? 'codemode') !== 'codemode' ||
      Object.keys(only!).some((key) => key !== 'name' && key !== 'tools')
    )
      problems.push([['options', 'bareRecord'], texts.loader.bareRecordShape]);
  }
  if (item.upstream !== undefined && isDeepStrictEqual(item.upstream.expect, item.expect))
    problems.push([['upstream'], texts.loader.upstreamSameAsExpect]);
  const refusal = referenceRefusal(item);
  if (refusal !== undefined) {
    if (item.upstream !== undefined) problems.push([['upstream'], texts.loader.upstreamNeverRuns(refusal.reason)]);
    if (item.skipOn !== undefined) problems.push([['skipOn'], texts.loader.skipNeverRuns(refusal.reason)]);
  }
  return problems;
}

/**
 * The rules a schema cannot state, for one flow: a basis and boundaries that exist, matchers that
 * compile, and skip entries that can apply and say something: one expectation per step, not the
 * flow's own, on a side of the boundary that `since` leaves in.
 */
function flowProblems(item: Flow, boundaries: ReadonlyMap<string, Boundary>, headings: ReadonlySet<string>) {
  const problems: Array<[string[], string]> = [];
  if (item.basis !== undefined && !headings.has(item.basis))
    problems.push([['basis'], texts.loader.unknownBasis(item.basis)]);
  const since = item.since ?? RUNTIME_BOUNDARY;
  const sinceBoundary = boundaries.get(since);
  if (!sinceBoundary) problems.push([['since'], texts.loader.unknownBoundary(since, [...boundaries.keys()])]);
  const expectations: Array<[string[], unknown]> = [
    ...item.steps.map((step, index): [string[], unknown] => [['steps', String(index), 'expect'], step.expect]),
    ...(item.skipOn ?? []).map((entry, index): [string[], unknown] => [
      ['skipOn', String(index), 'steps'],
      entry.steps,
    ]),
  ];
  for (const [where, expectation] of expectations)
    walkMatchers(expectation, where, (path, pattern) => {
      try {
        new RegExp(pattern);
      } catch (error) {
        problems.push([path, texts.loader.badRegExp((error as Error).message)]);
      }
    });
  item.skipOn?.forEach((entry, index) => {
    const side = 'before' in entry ? 'before' : 'from';
    const name = 'before' in entry ? entry.before : entry.from;
    const boundary = boundaries.get(name);
    if (!boundary)
      problems.push([['skipOn', String(index), side], texts.loader.unknownBoundary(name, [...boundaries.keys()])]);
    else if (side === 'before' && sinceBoundary && compareReleases(boundary.release, sinceBoundary.release) <= 0)
      problems.push([
        ['skipOn', String(index), side],
        texts.loader.skipBeforeSince(name, boundary.release, since, sinceBoundary.release),
      ]);
    if (entry.steps === undefined) return;
    if (entry.steps.length !== item.steps.length)
      problems.push([
        ['skipOn', String(index), 'steps'],
        texts.loader.skipStepCount(entry.steps.length, item.steps.length),
      ]);
    else if (
      isDeepStrictEqual(
        entry.steps,
        item.steps.map((step) => step.expect),
      )
    )
      problems.push([['skipOn', String(index), 'steps'], texts.loader.skipExpectSameAsExpect]);
  });
  return problems;
}

/** Loads the boundaries and every case file of a directory; one error names every problem of every file. */
export function loadCatalogue(dir: string = CASES_DIR, upstreamDoc: string = UPSTREAM_DOC): Catalogue {
  const problems: string[] = [];
  const headings = upstreamHeadings(upstreamDoc);
  const boundaries = new Map<string, Boundary>();
  const boundariesFile = join(dir, BOUNDARIES_FILE);
  const parsedBoundaries = parseFile(boundariesFile, 'boundaries.schema.json', BOUNDARIES_SCHEMA_COMMENT);
  if ('problems' in parsedBoundaries) problems.push(...parsedBoundaries.problems);
  else
    (parsedBoundaries.data as Boundary[]).forEach((boundary, index) => {
      const { positions } = parsedBoundaries;
      if (boundaries.has(boundary.id))
        problems.push(
          positions.complaint([String(index)], texts.loader.duplicateId(displayName(boundariesFile)), 'id'),
        );
      if (boundary.basis !== undefined && !headings.has(boundary.basis))
        problems.push(positions.complaint([String(index), 'basis'], texts.loader.unknownBasis(boundary.basis)));
      boundaries.set(boundary.id, boundary);
    });

  const cases: Array<LoadedCase | LoadedFlow> = [];
  const seen = new Map<string, string>();
  const files = readdirSync(dir)
    .filter((entry) => entry.endsWith('.yaml') && entry !== BOUNDARIES_FILE)
    .sort()
    .map((entry) => join(dir, entry));
  for (const file of files) {
    const parsed = parseFile(file, 'case.schema.json', SCHEMA_COMMENT);
    if ('problems' in parsed) {
      problems.push(...parsed.problems);
      continue;
    }
    (parsed.data as Array<Case | Flow>).forEach((item, index) => {
      const line = parsed.positions.lineOf([String(index)]);
      const itemProblems = isFlow(item)
        ? flowProblems(item, boundaries, headings)
        : caseProblems(item, boundaries, headings);
      if (!isFlow(item) && item.fuzz !== undefined) itemProblems.push([['fuzz'], texts.loader.fuzzInCatalogue]);
      for (const [path, message] of itemProblems)
        problems.push(parsed.positions.complaint([String(index), ...path], message));
      const here = `${displayName(file)}:${line}`;
      const first = seen.get(item.id);
      if (first !== undefined)
        problems.push(parsed.positions.complaint([String(index)], texts.loader.duplicateId(first), 'id'));
      else seen.set(item.id, here);
      cases.push({ ...item, file: displayName(file), line });
    });
  }
  if (files.length === 0) problems.push(`${displayName(dir)}: ${texts.loader.noFiles}`);
  if (problems.length > 0) throw new CaseFileError([...new Set(problems)].join('\n'));
  return { cases, boundaries };
}

/**
 * One fuzz draft (`cases/drafts/*.yaml`, which the catalogue never loads), checked as the
 * catalogue checks a case, and for the fuzz record every draft carries. Throws a CaseFileError
 * naming every problem.
 */
export function loadDraftFile(file: string, dir: string = CASES_DIR, upstreamDoc: string = UPSTREAM_DOC): LoadedCase[] {
  const { boundaries } = loadCatalogue(dir, upstreamDoc);
  const parsed = parseFile(file, 'case.schema.json', DRAFT_SCHEMA_COMMENT);
  if ('problems' in parsed) throw new CaseFileError(parsed.problems.join('\n'));
  const problems: string[] = [];
  const drafts: LoadedCase[] = [];
  (parsed.data as Case[]).forEach((item, index) => {
    const itemProblems: Array<[string[], string]> = isFlow(item)
      ? []
      : caseProblems(item, boundaries, upstreamHeadings(upstreamDoc));
    if (isFlow(item) || item.fuzz === undefined) itemProblems.push([[], texts.loader.draftWithoutFuzz]);
    for (const [path, message] of itemProblems)
      problems.push(parsed.positions.complaint([String(index), ...path], message));
    drafts.push({ ...item, file: displayName(file), line: parsed.positions.lineOf([String(index)]) });
  });
  if (problems.length > 0) throw new CaseFileError(problems.join('\n'));
  return drafts;
}

/** `<file> › <id>`, the name a case carries in every test title and progress line. */
export function caseTitle(item: Pick<LoadedCase, 'file' | 'id'>): string {
  return `${basename(item.file)} › ${item.id}`;
}

/**
 * Every text the harness composes (loader complaints, cell reasons, progress and CLI lines, the
 * reference wire's refusals, process failures, the surface inventory's), in one place so a reword
 * is one deliberate edit and tests can name the exact string. The report's own are in
 * report/texts.ts. Runtime-neutral: the reference worker bundles it.
 */
import { formatDidYouMean } from '../src/protocol/did-you-mean.js';
import type { CellStatus } from './report/model.js';
import { RELEASE_DIFF_KINDS, type ReleaseDiff } from './report/model.js';

/** The version of docs/interpreting.md, the rules by which an outcome is judged; a run records it. */
export const INTERPRETING_VERSION = 4;

const STALE_SKIP_PREFIX = 'unexpected pass: the skip is stale';

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)}s`;

/** Which expectation a cell was judged against. */
type Against = 'expect' | 'upstream' | 'skip';
const AGAINST: Record<Against, string> = {
  expect: 'expect',
  upstream: 'upstream.expect',
  skip: 'the expect of its skip entry',
};

/** A YAML value as a complaint names it: `the string "latest"`, `a list`, `null`. */
function givenValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'string') return `the string ${JSON.stringify(value)}`;
  return `the ${typeof value} ${String(value)}`;
}

export const texts = {
  loader: {
    schemaComment: (comment: string) => `the file must begin with the line ${comment}`,
    unknownProperty: (key: string, meant?: string) =>
      `has an unknown property "${key}"${meant === undefined ? '' : `; did you mean "${meant}"?`}`,
    /** A value where the schema wants a mapping it names (`title`) and shows (`example`). */
    notAMapping: (given: unknown, title: string, example: string, description: string) =>
      `is ${givenValue(given)}, but ${title} is a mapping such as ${example}: it ${description}`,
    notOneOf: (allowed: readonly unknown[]) =>
      `must be one of: ${allowed.map((value) => JSON.stringify(value)).join(', ')}`,
    duplicateId: (first: string) => `duplicate id, first declared at ${first}`,
    unknownBoundary: (name: string, known: readonly string[]) =>
      `names the boundary "${name}", which cases/boundaries.yaml does not list; the boundaries are: ${known.join(', ')}`,
    unknownBasis: (heading: string) =>
      `names the basis "${heading}", which is not a heading of docs/upstream.md (write the fact there first, under that heading)`,
    badRegExp: (why: string) => `is not a valid regular expression: ${why}`,
    bareRecordShape: 'needs exactly one provider, named codemode or unnamed, carrying tools only',
    upstreamSameAsExpect: 'equals expect: upstream does not differ, so drop upstream',
    fuzzInCatalogue:
      "is a fuzz draft's record: a draft belongs in cases/drafts/, and promoting it into the catalogue removes fuzz (docs/fuzzing.md)",
    draftWithoutFuzz:
      'is a draft without its fuzz record (seed, column, index, signature, found), which npm run fuzz writes',
    skipExpectSameAsExpect:
      'equals what the other columns expect: the skipped side would pass, so the skip says nothing',
    upstreamNeverRuns: (why: string) =>
      `cannot be checked: no reference column runs this case (${why}), so drop upstream`,
    skipNeverRuns: (why: string) => `skips reference columns that never run this case anyway (${why})`,
    skipStepCount: (given: number, steps: number) =>
      `has ${given} step expectation${given === 1 ? '' : 's'}, but the flow has ${steps} step${steps === 1 ? '' : 's'}: give one per step, in order ({} for a wait or a restart)`,
    skipBeforeSince: (boundary: string, release: string, since: string, sinceRelease: string) =>
      `skips the releases before ${boundary} (${release}), but the flow's since: ${since} (${sinceRelease}) already leaves every one of them out; drop the entry, or move since to the boundary the flow needs`,
    callsWithoutRecord: 'needs options.recordCalls: true, or no side reports the calls it would compare',
    recordWithoutCalls: 'records the host calls, but expect has no calls to compare them with',
    noFiles: 'no case files (*.yaml) found',
    yaml: (message: string) => `YAML ${message}`,
    blockScalarDedent: (
      message: string,
      indent: number,
      header: string,
      headerLine: number,
      keyIndent: number,
      blockIndent: number | undefined,
    ) =>
      `YAML ${message}: this line starts at column ${indent + 1}, inside the block scalar "${header}" of line ${headerLine}, ` +
      (blockIndent === undefined
        ? `whose key starts at column ${keyIndent + 1}: YAML ends the block at a line indented no deeper than its key, `
        : `whose lines start at column ${blockIndent + 1}: YAML ends the block at a line indented less than its first, `) +
      `and reads the rest as keys; indent every line of a block scalar deeper than its key, and at least as deep as its first`,
    keyOutOfLine: (key: string, indent: number, previousKey: string, previousLine: number, previousIndent: number) =>
      `"${key}:" starts at column ${indent + 1}, but "${previousKey}:" on line ${previousLine} starts at column ${previousIndent + 1}: ` +
      `the keys of one mapping start at the same column${indent > previousIndent ? `, and YAML reads a line indented deeper as part of the value above it` : ''}`,
    tabIndent: 'a tab indents this line: YAML indents with spaces only',
    duplicateKey: (key: string) => `the key "${key}" appears twice in one mapping`,
  },

  /** Why a cell is not run or not passed, as the report and the tests show it. */
  cell: {
    skipped: (side: 'before' | 'from', boundary: string, release: string, reason: string, note?: string) =>
      `${side === 'before' ? 'before' : 'from'} ${boundary} (${release}): ${reason}${note ? ` ${note}` : ''}`,
    unsafe: (reason: string) => `unsafe on the reference: ${reason}`,
    unsafeLabel: 'unsafe here',
    refusedLabel: 'not expressible',
    skipLabel: (side: 'before' | 'from', boundary: string, release: string) => `${side} ${boundary} (${release})`,
    staleSkip: (skipReason: string) => `${STALE_SKIP_PREFIX}: the case passed here (skipped ${skipReason})`,
    expectationFailed: (fields: readonly string[], against: Against) =>
      `outcome differs from ${AGAINST[against]}${fields.length ? ` in ${fields.join(', ')}` : ''}`,
    columnUnavailable: (reason: string) => `column unavailable: ${reason}`,
    columnBroke: (caseId: string, reason: string) => `the column broke at case "${caseId}": ${reason}`,
    failedAgain: (first: string, second: string) =>
      `${second}\n(the first attempt, before the run from the start: ${first})`,
    interrupted: 'the run was interrupted before this case ran',
    columnClosed: 'the column was closed before this case ran',
    noOutcome: (ms: number) => `the harness got no outcome within ${ms} ms`,
    diffTitle: (where: string, column: string, against: Against) =>
      `${where} on ${column} does not meet ${AGAINST[against]}`,
    flowsOnly: "this column hosts upstream's runtime and runs runtime flows only",
    flowsOnlyLabel: 'flows only',
    noFlows: (column: string) => `the ${column} side has no runtime host for flows`,
    beforeRuntime: (boundary: string, release: string, reason: string) => `before ${boundary} (${release}): ${reason}`,
    beforeRuntimeLabel: (boundary: string, release: string) => `before ${boundary} (${release})`,
    flowsCrash: (release: string) =>
      `an infrastructure fault of this column, not a behaviour of ${release}: under wrangler dev its workerd (1.20260426) aborted partway through the runtime flows in full runs ("tried to defer destruction during isolate shutdown"), losing every later cell, so the flows are not run here; 0.4.1 and the newest release carry the reference for flows (docs/reference-columns.md)`,
    flowsCrashLabel: 'infrastructure: workerd aborts here',
  },

  flow: {
    preflight: (column: string, got: string) =>
      `The ${column} column started, but a trivial runtime flow (execute async () => 6 * 7) did not complete with 42: ${got}`,
    notRestarted: (session: string, status: number, body: string) =>
      `the runtime host of flow session ${session} did not restart (HTTP ${status}): ${body}`,
    stepFailed: (column: string, session: string, status: number, body: string) =>
      `${column}: a flow call on session ${session} failed with HTTP ${status}: ${body}`,
    sameInstance: (session: string) => `the flow host ${session} was not restarted: the same instance still answers`,
    transformThrows: 'the flow transform throws',
    /** A `toModelOutput` step on a release whose runtime tool has none (before 0.5.2). */
    noModelOutput: "this release's runtime.tool() has no toModelOutput",
    unknownCall: (call: string) => `flow host: no handle call for ${call}`,
    noDaemon: 'ours-worker: a flow call names no daemon',
  },

  suite: {
    didNotOpen: (column: string, why: string) =>
      `The ${column} column did not open, so none of its cases ran (an infrastructure failure, not a case result):\n${why}`,
    unsupportedTitle: (title: string, reason: string) => `${title} [unsupported: ${reason}]`,
    skipTitle: (title: string, label: string) => `${title} [skip: ${label}]`,
    cellFailed: (cell: { status: string; reason?: string; diff?: string }) =>
      [cell.status === 'infra-error' ? `infra-error: ${cell.reason ?? ''}` : (cell.reason ?? ''), cell.diff]
        .filter(Boolean)
        .join('\n'),
    summary: (label: string, counts: string) => `catalogue on ${label}: ${counts}`,
  },

  preflight: (column: string, got: string) =>
    `The ${column} column started, but a trivial execution (async () => 6 * 7) did not give 42: ${got}`,
  withOutput: (message: string, output: string) =>
    output.trim() === '' ? message : `${message}\nThe end of its output:\n${output}`,

  progress: {
    opening: (column: string) => `[${column}] opening the column…`,
    columnLine: (
      column: string,
      done: number,
      total: number,
      elapsedMs: number,
      failures: number,
      waitingOn: readonly string[],
    ) =>
      `[${column}] ${done}/${total} · ${seconds(elapsedMs)}${failures ? ` · ${failures} failed` : ''}${waitingOn.length ? ` · waiting on ${waitingOn.join(', ')}` : ''}`,
    failure: (column: string, title: string, reason: string) => `[${column}] ✗ ${title}: ${reason}`,
    infra: (column: string, reason: string) => `[${column}] ⚠ infra-error: ${reason}`,
    flaky: (column: string, title: string, firstReason: string) =>
      `[${column}] ~ flaky: ${title} failed once (${firstReason}) and passed on the rerun`,
    /** A failure's diff under its line: the first lines, indented; the report keeps all of it. */
    shortDiff: (diff: string, shown = 8) => {
      const lines = diff.split('\n');
      const more = lines.length > shown ? [`… ${lines.length - shown} more lines in the report`] : [];
      return [...lines.slice(0, shown), ...more].map((line) => `    ${line}`).join('\n');
    },
    columnDone: (column: string, counts: string, elapsedMs: number) =>
      `[${column}] done in ${seconds(elapsedMs)}: ${counts}`,
    interrupted: (signal: string) => `${signal}: stopping every column that is still running…`,
    written: (dir: string) => `reports written to ${dir}`,
    resolved: (column: string, version: string, published: string | null, inPeerRange: boolean) =>
      `[${column}] @cloudflare/codemode ${version}${published ? `, published ${published.slice(0, 10)}` : ''}${inPeerRange ? '' : ', outside the peer range'}`,
    resolvedWorkerd: (version: string, published: string | null, pinned: string) =>
      `[ours-workerd-newest] workerd ${version}${published ? `, published ${published.slice(0, 10)}` : ''}${version === pinned ? ', the pinned release' : `, against the pinned ${pinned}`}`,
    releaseDiff: (diff: ReleaseDiff) =>
      diff.rows.length === 0
        ? `${diff.of ?? 'release'} diff ${diff.from.release} → ${diff.to.release}: no case differs`
        : `${diff.of ?? 'release'} diff ${diff.from.release} → ${diff.to.release}: ${diff.rows.length} case(s) differ (${RELEASE_DIFF_KINDS.map((kind) => `${diff.rows.filter((row) => row.kind === kind).length} ${kind}`).join(', ')})`,
    verdict: (green: boolean) =>
      green ? 'matrix is green' : 'matrix is NOT green (see failures and infra-errors above)',
  },

  counts: (counts: Record<CellStatus, number>, stale: number) =>
    `${counts.pass} pass · ${counts.fail} fail${stale ? ` (${stale} stale skip)` : ''} · ${counts.skip} skip · ${counts.unsupported} unsupported · ${counts['infra-error']} infra-error`,

  cli: {
    unknownColumns: (unknown: readonly string[], known: readonly string[]) =>
      `--columns: unknown column(s) ${unknown.join(', ') || '(none given)'}; the columns are ${known.join(', ')}, or all`,
    /** `nearest`: the option most likely meant (nearest-name.ts), with the daemon's did-you-mean. */
    unknownOption: (flag: string, nearest: string | undefined, usage: string) =>
      `unknown option ${flag}${formatDidYouMean(nearest)}\n\n${usage}`,
    needsValue: (flag: string, usage: string) => `${flag} needs a value\n\n${usage}`,
    /** `npm run case` alone: it runs the cases named, and names none by default. */
    noSelector: (usage: string) =>
      `name the cases to run: a case id, a pattern with *, or a case file (npm run matrix runs them all)\n\n${usage}`,
    unexpectedArgument: (argument: string, usage: string) => `unexpected argument ${argument}\n\n${usage}`,
    compareNeedsRelease: '--columns compare needs --compare <version>: the compare column runs the release it names',
    snapshotWithOut: '--snapshot writes the committed snapshot in reports/; it cannot be combined with --out',
    noMatch: (selector: string, near: readonly string[]) =>
      `no case matches "${selector}"${near.length ? `; did you mean ${near.join(', ')}?` : ''}`,
    ranCases: (cases: number, columns: readonly string[], failed: number) =>
      `\n${cases} case(s) on ${columns.join(', ')}: ${failed === 0 ? 'all as expected' : `${failed} failed`}`,
  },

  /** The reference columns: what the wire refuses, and how a column fails. */
  reference: {
    refusal: (caseId: string, why: string) => `Case "${caseId}" cannot be sent to a reference column: ${why}`,
    countHostWaitsFalse:
      'options.countHostWaits: false: the reference clock is always wall-clock time (DynamicWorkerExecutor has no such option)',
    proxySource: (provider: string) =>
      `providers[${JSON.stringify(provider)}].proxySource: upstream ResolvedProvider has no field for a provider's own proxy source`,
    bareRecordShape:
      'options.bareRecord with more than one provider, or with a provider carrying name, positionalArgs, prelude or proxySource: a bare record carries functions only',
    unknownField: (where: string, key: string) => `${where}.${key}: the reference wire does not know this field`,
    timeoutNotNumber: (value: unknown) =>
      `options.timeout ${JSON.stringify(value)}: upstream splices the timeout into module source, so it must be a finite number`,
    badBody: (detail: string) => `Bad reference request body: ${detail}`,
    unknownColumn: (name: string, known: readonly string[]) =>
      `Unknown reference column "${name}"; the columns are ${known.map((k) => `"${k}"`).join(', ')}`,
    aliasMismatch: (column: string, packageName: string, found: string) =>
      `Reference column ${column} expects ${packageName} to be @cloudflare/codemode ${column}, but ${found} is installed; fix the npm alias in package.json`,
    label: (column: string) => `wrangler dev for reference column ${column}`,
    requestFailed: (column: string, caseId: string, status: number, body: string) =>
      `Reference column ${column} failed case "${caseId}" with HTTP ${status}: ${body}`,
    unreachable: (column: string, caseId: string, cause: string) =>
      `Reference column ${column} could not be reached for case "${caseId}": ${cause}`,
    timedOut: (column: string, caseId: string, ms: number) =>
      `Reference column ${column} did not answer case "${caseId}" within ${ms} ms`,
    stopped: (column: string) => `Reference column ${column} has been stopped`,
    notInstalled: (name: string, from: string) => `${name} is not installed (looked from ${from})`,
    noCompatibility: (file: string) => `Could not find the loader's compatibility settings in ${file}`,
  },

  /** Releases resolved at run time (reference/releases.ts): the `newest` and `compare` columns. */
  releases: {
    registryUnreachable: (url: string, cause: string) =>
      `the npm registry did not answer (${url}: ${cause}); the column needs the network, or name a release already in the cache with --newest`,
    registryStatus: (url: string, status: number) => `the npm registry answered HTTP ${status} for ${url}`,
    registryNotJson: (url: string, why: string) => `the npm registry's answer for ${url} is not JSON (${why})`,
    noLatestTag: (name: string) => `the npm registry lists no stable release of ${name} (no dist-tag latest)`,
    notAVersion: (value: string) => `"${value}" is not a release version; give one like 0.5.6`,
    notPublished: (name: string, version: string, known: readonly string[]) =>
      `${name} ${version} is not published; the registry has ${known.slice(-8).join(', ')}${known.length > 8 ? ', …' : ''}`,
    tarballFailed: (url: string, why: string) => `could not download ${url} (${why})`,
    noIntegrity: (name: string, version: string) =>
      `the registry gives no integrity for ${name} ${version}, so it is not installed`,
    integrityMismatch: (name: string, version: string, integrity: string) =>
      `the tarball of ${name} ${version} does not match the registry's integrity ${integrity}; it was not installed`,
    unreadableRange: (range: string) => `the peer range "${range}" is not a list of comparators like ">=0.2.2 <0.6.0"`,
    notResolved: (column: string) =>
      `column ${column} has no release: it is resolved from the npm registry when npm run matrix starts`,
  },

  /** A process the harness starts (processes.ts), by the label its starter gives it. */
  service: {
    daemonLabel: (label: string, command: readonly string[]) => `The ${label} daemon (${command.join(' ')})`,
    status: (code: number | null, signal: string | null) => `code ${code}, signal ${signal}`,
    spawnFailed: (why = 'no process id') => `could not be spawned: ${why}`,
    notReady: (label: string, line: string, ms: number, output: string) =>
      `${label} printed no "${line}" line within ${ms} ms. Its output:\n${output || '(no output)'}`,
    exitedEarly: (label: string, status: string, output: string) =>
      `${label} exited before it was ready (${status}). Its output:\n${output || '(no output)'}`,
    exitedLater: (label: string, status: string, output: string) =>
      `${label} exited during the run (${status}). Its output:\n${output || '(no output)'}`,
    portsTaken: 'Address already in use, on every attempt',
    outlivedKill: (group: number) => `Process group ${group} still runs after SIGKILL`,
  },

  surface: {
    probeFailed: (side: string, outcome: unknown) =>
      `The surface probe did not return a record on ${side}; its outcome was ${JSON.stringify(outcome)}`,
    tableMissing: (path: string, cause: string) =>
      `The recorded surface table ${path} could not be read (${cause}); run \`npx tsx harness/surface/record.ts\``,
    tableLacksSide: (path: string, side: string) =>
      `The recorded surface table ${path} holds no measurement for ${side}; run \`npx tsx harness/surface/record.ts --side ${side}\``,
    unknownArgument: (argument: string) =>
      `Unknown argument "${argument}"; expected --side reference|ours (repeatable) or --doc-only`,
    unexplained: 'UNEXPLAINED: add a reason to DEVIATION_REASONS in harness/surface/surface.ts and re-record',
    docOutOfDate: (path: string) =>
      `${path} does not list the recorded differences as the table has them; run \`npx tsx harness/surface/record.ts --doc-only\``,
    docMarkersMissing: (path: string, start: string, end: string) =>
      `${path} lacks the markers ${start} and ${end} that enclose the generated list of differences`,
    noDifference: 'The recorded table holds no difference between ours and the reference.',
    recorded: (path: string, reference: number, ours: number) =>
      `${path}: reference ${reference} entries, ours ${ours} entries`,
    differences: (count: number, unexplained: number) =>
      `${count} differences between ours and the reference; ${unexplained} without a reason`,
  },

  statusLabel: {
    pass: 'pass',
    fail: 'fail',
    skip: 'skip',
    unsupported: 'unsupported',
    'infra-error': 'infra-error',
  } satisfies Record<CellStatus, string>,
  statusSymbol: {
    pass: '✓',
    fail: '✗',
    skip: '–',
    unsupported: '∅',
    'infra-error': '⚠',
  } satisfies Record<CellStatus, string>,
  statusMeaning: {
    pass: 'The column ran the case and its outcome met the expectation: expect on ours, and upstream.expect on a reference column when the case differs from upstream on purpose (marked ≠).',
    fail: 'The column ran the case and its outcome did not meet it; the diff says how. A dashed border marks a stale skip: the case passed on a column its boundary skips.',
    skip: 'A release boundary (cases/boundaries.yaml) puts this column on the other side: the case still runs, and must not pass.',
    unsupported:
      'Not run: the program is unsafe on the reference, or the reference wire cannot express an option; or, when the label says infrastructure, the column’s platform cannot run it under wrangler dev, a fault of the harness’s host and not a behaviour of the release.',
    'infra-error':
      'The harness broke (for example wrangler dev did not start). Not a result: the column’s behaviour is unknown.',
  } satisfies Record<CellStatus, string>,
  upstreamMark: '≠',
  staleMark: 'stale skip',
} as const;

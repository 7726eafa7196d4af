/**
 * The body of one POST to a reference worker, both ways: `describeRequest` builds it from a case,
 * `parseReferenceRequest` reads it in the worker (a bad body is a 400). It carries everything
 * `DynamicWorkerExecutor` can be told and nothing it cannot: an option the wire cannot represent
 * is refused while the request is built, naming the case. That refusal is the one source of a
 * case's `unsupported` cells on the reference columns (judge.ts), so a case that grows such an
 * option is never sent half-expressed. Runtime-neutral: the worker bundles it.
 */
import { messageOf } from '../../src/protocol/index.js';
import type { Case, CaseConnector, CaseModule, CaseOptions, CaseOutbound, CaseProvider } from '../case-model.js';
import { texts } from '../texts.js';
import { DEFAULT_PROVIDER_NAME } from '../tools.js';

const t = texts.reference;

export interface ReferenceRequest {
  /** The case this request runs, for error messages on both ends. */
  caseId: string;
  code: string;
  /** Declarative providers; the worker materializes them with `harness/tools.ts`. Never `proxySource`. */
  providers: CaseProvider[];
  /** Present: passed as `execute`'s third argument `{connectors}` (0.4.0+ reads it; older lines ignore it). */
  connectors?: CaseConnector[];
  /** Pass the first provider's functions as the deprecated bare record. */
  bareRecord?: boolean;
  /** Constructor option `modules`: source text, or a Worker Loader module kind, handed over as it is. */
  modules?: Record<string, CaseModule>;
  /** Constructor option `timeout` (ms). Absent: the release's default. */
  timeout?: number;
  /** `blocked`: `globalOutbound: null`. A response: a Fetcher of the worker's own that answers with it. */
  globalOutbound?: 'blocked' | OutboundResponse;
  /** The Worker Loader given to the executor adds `limits: {cpuMs}` to every WorkerCode it loads. */
  loaderCpuMs?: number;
  /** Answer with the host functions called by the time `execute` settled, as `calls`. */
  recordCalls?: boolean;
}

/** What the Fetcher answers every request with (a case's `outbound: {respond}`). */
export type OutboundResponse = Extract<CaseOutbound, { respond: unknown }>['respond'];

/** The fields this wire understands; anything else a case grows is refused until it is taught here. */
const KNOWN_OPTIONS: ReadonlySet<string> = new Set<keyof CaseOptions>([
  'connectors',
  'modules',
  // Bundled into modules on the host before the request is made (harness/packages.ts).
  'packages',
  'timeout',
  'outbound',
  'countHostWaits',
  'bareRecord',
  'loaderCpuMs',
  'recordCalls',
]);
const KNOWN_PROVIDER_FIELDS: ReadonlySet<string> = new Set<keyof CaseProvider>([
  'name',
  'tools',
  'positionalArgs',
  'proxySource',
  'prelude',
]);
const KNOWN_CONNECTOR_FIELDS: ReadonlySet<string> = new Set<keyof CaseConnector>(['name', 'tools']);

/** The case as the reference wire carries it; throws, naming the case, what the wire cannot express. */
export function describeRequest(item: Pick<Case, 'id' | 'code' | 'providers' | 'options'>): ReferenceRequest {
  const refuse = (why: string): never => {
    throw new Error(t.refusal(item.id, why));
  };
  const checkKnown = (where: string, value: object, known: ReadonlySet<string>) => {
    for (const key of Object.keys(value)) if (!known.has(key)) refuse(t.unknownField(where, key));
  };
  const options = item.options ?? {};
  const providers = item.providers ?? [];
  checkKnown('options', options, KNOWN_OPTIONS);
  for (const provider of providers) {
    checkKnown('providers[]', provider, KNOWN_PROVIDER_FIELDS);
    if (provider.proxySource !== undefined) refuse(t.proxySource(provider.name ?? DEFAULT_PROVIDER_NAME));
  }
  if (options.bareRecord) {
    const [first] = providers;
    const carriesMore =
      first !== undefined &&
      ((first.name !== undefined && first.name !== DEFAULT_PROVIDER_NAME) ||
        first.positionalArgs !== undefined ||
        first.prelude !== undefined);
    if (providers.length > 1 || carriesMore) refuse(t.bareRecordShape);
  }
  // countHostWaits: true is the wall clock the reference always has, so it needs no field.
  if (options.countHostWaits === false) refuse(t.countHostWaitsFalse);

  const request: ReferenceRequest = { caseId: item.id, code: item.code, providers };
  const { outbound } = options;
  if (outbound === 'blocked') request.globalOutbound = 'blocked';
  else if (typeof outbound === 'object' && outbound !== null && 'respond' in outbound)
    request.globalOutbound = outbound.respond;
  else if (outbound !== undefined && outbound !== 'default')
    refuse(t.unknownField('options', `outbound=${JSON.stringify(outbound)}`));
  if (options.connectors !== undefined) {
    for (const connector of options.connectors) checkKnown('options.connectors[]', connector, KNOWN_CONNECTOR_FIELDS);
    request.connectors = options.connectors;
  }
  // Module kinds cross too: every release hands its modules to the Worker Loader as they are.
  if (options.modules !== undefined) request.modules = options.modules;
  if (options.timeout !== undefined) {
    if (typeof options.timeout !== 'number' || !Number.isFinite(options.timeout))
      refuse(t.timeoutNotNumber(options.timeout));
    request.timeout = options.timeout;
  }
  if (options.bareRecord !== undefined) request.bareRecord = options.bareRecord;
  if (options.loaderCpuMs !== undefined) request.loaderCpuMs = options.loaderCpuMs;
  if (options.recordCalls !== undefined) request.recordCalls = options.recordCalls;
  return request;
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const optional = (check: (value: unknown) => boolean) => (value: unknown) => value === undefined || check(value);
const isBoolean = (value: unknown) => typeof value === 'boolean';

/** Source text, or exactly one of `{js}`, `{cjs}`, `{text}` (text) or `{json}` (any value). */
function isModule(value: unknown): boolean {
  if (typeof value === 'string') return true;
  if (!isRecord(value) || Object.keys(value).length !== 1) return false;
  const [kind] = Object.keys(value) as [string];
  return kind === 'json' || (['js', 'cjs', 'text'].includes(kind) && typeof value[kind] === 'string');
}

/** Each field's shape, with what a bad one is told; the case schema has already checked the details. */
const BODY_RULES: [keyof ReferenceRequest, (value: unknown) => boolean, string][] = [
  ['caseId', (value) => typeof value === 'string', 'caseId must be a string'],
  ['code', (value) => typeof value === 'string', 'code must be a string'],
  [
    'providers',
    (value) => Array.isArray(value) && value.every((p) => isRecord(p) && isRecord(p.tools)),
    'providers must be an array of {name?, tools}',
  ],
  [
    'connectors',
    optional(
      (value) =>
        Array.isArray(value) && value.every((c) => isRecord(c) && typeof c.name === 'string' && isRecord(c.tools)),
    ),
    'connectors must be an array of {name, tools}',
  ],
  ['bareRecord', optional(isBoolean), 'bareRecord must be a boolean'],
  [
    'modules',
    optional((value) => isRecord(value) && Object.values(value).every(isModule)),
    'modules must map names to source text, or to one of {js}, {cjs}, {text}, {json}',
  ],
  [
    'timeout',
    optional((value) => typeof value === 'number' && Number.isFinite(value)),
    'timeout must be a finite number',
  ],
  [
    'globalOutbound',
    optional((value) => value === 'blocked' || isRecord(value)),
    'globalOutbound must be "blocked", a response {status?, body?, headers?}, or absent',
  ],
  [
    'loaderCpuMs',
    optional((value) => typeof value === 'number' && Number.isInteger(value) && value > 0),
    'loaderCpuMs must be a positive integer',
  ],
  ['recordCalls', optional(isBoolean), 'recordCalls must be a boolean'],
];

/** The body as a request, or an error naming the first field that is wrong. */
export function parseReferenceRequest(text: string): ReferenceRequest {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (error) {
    throw new Error(t.badBody(`not JSON (${messageOf(error)})`));
  }
  if (!isRecord(body)) throw new Error(t.badBody('expected a JSON object'));
  for (const [field, valid, problem] of BODY_RULES) if (!valid(body[field])) throw new Error(t.badBody(problem));
  return body as unknown as ReferenceRequest;
}

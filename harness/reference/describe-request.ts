/**
 * `describeRequest`: a case as the reference wire carries it. An option the wire cannot represent
 * is refused here, while the request is built, with the case id in the message. That refusal is
 * the one source of a case's `unsupported` cells on the reference columns (harness/plan.ts), so a
 * case that grows such an option is never sent half-expressed. Runtime-neutral.
 */
import type { Case, CaseOptions, CaseProvider } from '../case-model.js';
import { DEFAULT_PROVIDER_NAME } from '../tools.js';
import { refusal, UNREPRESENTABLE } from './messages.js';
import type { ReferenceRequest } from './wire.js';

/** The fields this wire understands; anything else a case grows is refused until it is taught here. */
const KNOWN_OPTIONS = new Set<keyof CaseOptions>([
  'connectors',
  'modules',
  'timeout',
  'outbound',
  'countHostWaits',
  'bareRecord',
  'recordCalls',
]);
const KNOWN_PROVIDER_FIELDS = new Set<keyof CaseProvider>([
  'name',
  'tools',
  'positionalArgs',
  'proxySource',
  'prelude',
]);
const KNOWN_CONNECTOR_FIELDS = new Set(['name', 'tools']);

function refuse(testCase: Pick<Case, 'id'>, why: string): never {
  throw new Error(refusal(testCase.id, why));
}

function checkKnown(testCase: Pick<Case, 'id'>, where: string, value: object, known: ReadonlySet<string>): void {
  for (const key of Object.keys(value)) if (!known.has(key)) refuse(testCase, UNREPRESENTABLE.unknownField(where, key));
}

function describeProviders(testCase: Pick<Case, 'id' | 'providers' | 'options'>): CaseProvider[] {
  const providers = testCase.providers ?? [];
  for (const provider of providers) {
    checkKnown(testCase, 'providers[]', provider, KNOWN_PROVIDER_FIELDS as ReadonlySet<string>);
    if (provider.proxySource !== undefined)
      refuse(testCase, UNREPRESENTABLE.proxySource(provider.name ?? DEFAULT_PROVIDER_NAME));
  }
  if (testCase.options?.bareRecord) {
    const [first] = providers;
    const carriesMore =
      first !== undefined &&
      ((first.name !== undefined && first.name !== DEFAULT_PROVIDER_NAME) ||
        first.positionalArgs !== undefined ||
        first.prelude !== undefined);
    if (providers.length > 1 || carriesMore) refuse(testCase, UNREPRESENTABLE.bareRecordShape);
  }
  return providers;
}

export function describeRequest(testCase: Pick<Case, 'id' | 'code' | 'providers' | 'options'>): ReferenceRequest {
  const options = testCase.options ?? {};
  checkKnown(testCase, 'options', options, KNOWN_OPTIONS as ReadonlySet<string>);

  const request: ReferenceRequest = {
    caseId: testCase.id,
    code: testCase.code,
    providers: describeProviders(testCase),
  };

  if (options.countHostWaits === false) refuse(testCase, UNREPRESENTABLE.countHostWaitsFalse);
  // countHostWaits: true is the wall clock the reference always has, so it needs no field.

  const outbound = options.outbound;
  if (outbound !== undefined && outbound !== 'default') {
    if (outbound === 'blocked') request.globalOutbound = 'blocked';
    else if (typeof outbound === 'object' && outbound !== null && 'respond' in outbound)
      request.globalOutbound = outbound.respond;
    else refuse(testCase, UNREPRESENTABLE.unknownField('options', `outbound=${JSON.stringify(outbound)}`));
  }

  if (options.connectors !== undefined) {
    for (const connector of options.connectors)
      checkKnown(testCase, 'options.connectors[]', connector, KNOWN_CONNECTOR_FIELDS);
    request.connectors = options.connectors;
  }
  // Module kinds cross too: every release hands its modules to the Worker Loader as they are.
  if (options.modules !== undefined) request.modules = options.modules;
  if (options.timeout !== undefined) {
    if (typeof options.timeout !== 'number' || !Number.isFinite(options.timeout))
      refuse(testCase, UNREPRESENTABLE.timeoutNotNumber(options.timeout));
    request.timeout = options.timeout;
  }
  if (options.bareRecord !== undefined) request.bareRecord = options.bareRecord;
  if (options.recordCalls !== undefined) request.recordCalls = options.recordCalls;
  return request;
}

/**
 * What one dialect call becomes on the native side: the names it may bind (and the texts that
 * refuse the others), the descriptors that cross to the native executor, and the handlers that
 * stay here. Provider and connector functions never leave this process; only names cross, with
 * whatever source a provider chose to bring.
 */
import { type CompletionGuard, createEnvelopeDispatch, type ProviderHandler } from '../protocol/dispatch.js';
import { ToolNotFoundError } from '../protocol/errors.js';
import { JAVASCRIPT_RESERVED_WORDS, PROVIDER_NAME_PATTERN, RESERVED_PROVIDER_NAMES } from '../protocol/providers.js';
import type { Dispatch, ExecuteRequest, ProviderDescriptor } from '../protocol/types.js';
import { detectSanitizeCollision, sanitizeToolName } from './tool-name.js';

/**
 * A host tool function. The dialect types it `(...args: unknown[]) => Promise<unknown>`; this one
 * is wider so that such functions fit, and so do synchronous ones and functions with their own
 * parameter types (`(input: {q: string}) => ...`), which `unknown[]` would refuse.
 */
// biome-ignore lint/suspicious/noExplicitAny: `unknown[]` would refuse functions with typed parameters (see above).
export type ToolFunction = (...args: any[]) => unknown;

/**
 * The dialect's `ResolvedProvider` as `@cloudflare/codemode` 0.4+ declares it. It is restated here
 * rather than imported, so the public types resolve without the optional peer and mean the same
 * whichever release of it a host has installed.
 */
export interface DialectProvider {
  name: string;
  fns: Record<string, ToolFunction>;
  /** Sandbox-side JavaScript run after every namespace is bound. */
  prelude?: string | undefined;
}

/** A dialect provider, widened with the two native `ProviderDescriptor` members the dialect has no field for. */
export interface ExtendedProvider extends DialectProvider, Pick<ProviderDescriptor, 'positionalArgs' | 'proxySource'> {}

/** The dialect's `ConnectorBinding`: tool names live behind `callTool`. */
export interface ConnectorBinding {
  name: string;
  binding: {
    callTool(method: string, args: unknown): unknown;
  };
}

/**
 * The dialect's `ExecuteOptions` (`connectors`), plus the module map, the timeout and the outbound
 * fetcher on the call, forwarded unchanged to the native `ExecuteRequest`, so one long-lived
 * executor serves a host that bundles per call.
 */
export interface ExtendedExecuteOptions {
  connectors?: ConnectorBinding[] | undefined;
  modules?: ExecuteRequest['modules'] | undefined;
  timeout?: ExecuteRequest['timeout'] | undefined;
  outbound?: ExecuteRequest['outbound'] | undefined;
}

/**
 * Names the dialect's generated worker binds, beyond the protocol's `RESERVED_PROVIDER_NAMES`:
 * `@cloudflare/codemode` 0.4+ reserves these 12 and four more (`Promise`, `setTimeout`, `Error`,
 * `console`) that the protocol's set already refuses. Replicated verbatim so a host moving over
 * keeps every refusal it had.
 */
export const DIALECT_RESERVED_NAMES: ReadonlySet<string> = new Set([
  '__dispatchers',
  '__connectors',
  '__logs',
  '__CODEMODE_BINARY_TAG',
  '__bytesToBase64',
  '__base64ToBytes',
  '__encodeCodemodeValue',
  '__decodeCodemodeValue',
  '__stringifyForCodemode',
  '__parseForCodemode',
  'WorkerEntrypoint',
  'CodeExecutor',
]);

export function isReservedName(name: string): boolean {
  return RESERVED_PROVIDER_NAMES.has(name) || DIALECT_RESERVED_NAMES.has(name);
}

/** Which list a name came from; the texts open with it. */
type NameKind = 'Provider' | 'Connector';

/** The dialect's rejection texts. Hosts surface them, so they are contract. */
const nameRejection = {
  reserved: (kind: NameKind, name: string) => `${kind} name "${name}" is reserved`,
  notIdentifier: (kind: NameKind, name: string) => `${kind} name "${name}" is not a valid JavaScript identifier`,
  reservedWord: (kind: NameKind, name: string) => `${kind} name "${name}" is a JavaScript reserved word`,
  duplicateProvider: (name: string) => `Duplicate provider name "${name}"`,
  /** Also the text of a clash between two connectors, as upstream words it. */
  duplicateConnector: (name: string) => `Duplicate name "${name}" (connector clashes with provider)`,
} as const;

/**
 * The first text that refuses the call, or `null`. Providers first, then connectors, each name
 * through reserved, identifier pattern, reserved word, duplicate; then the sanitize collision.
 * The reserved-word rule is a deliberate superset: upstream's worker fails to start on those.
 */
export function validateExecution(
  providers: readonly ExtendedProvider[],
  connectors: readonly ConnectorBinding[],
): string | null {
  const seen = new Set<string>();
  for (const { name } of providers) {
    const text = rejectName('Provider', name, seen);
    if (text) return text;
  }
  for (const { name } of connectors) {
    const text = rejectName('Connector', name, seen);
    if (text) return text;
  }
  return detectSanitizeCollision(providers);
}

function rejectName(kind: NameKind, name: string, seen: Set<string>): string | null {
  if (isReservedName(name)) return nameRejection.reserved(kind, name);
  if (!PROVIDER_NAME_PATTERN.test(name)) return nameRejection.notIdentifier(kind, name);
  if (JAVASCRIPT_RESERVED_WORDS.has(name)) return nameRejection.reservedWord(kind, name);
  if (seen.has(name))
    return kind === 'Provider' ? nameRejection.duplicateProvider(name) : nameRejection.duplicateConnector(name);
  seen.add(name);
  return null;
}

/** The texts of a call whose providers argument is not providers at all: a host bug, so `execute` rejects. */
const malformedProvider = {
  notObject: (index: number, provider: unknown) =>
    `Provider at index ${index} is ${provider === null ? 'null' : typeof provider}, not {name, fns}`,
  noFunctions: (index: number, name: unknown, fns: unknown) =>
    `Provider "${String(name)}" (index ${index}) has no record of functions: fns is ${fns === null ? 'null' : typeof fns}`,
} as const;

/**
 * Throws a `TypeError` naming the first provider that is not `{name, fns}` with `fns` an object.
 * Upstream rejects there too, with `Cannot convert undefined or null to object`.
 */
export function assertFunctionRecords(providers: readonly unknown[]): void {
  providers.forEach((provider, index) => {
    if (typeof provider !== 'object' || provider === null)
      throw new TypeError(malformedProvider.notObject(index, provider));
    const { name, fns } = provider as { name?: unknown; fns?: unknown };
    if (typeof fns !== 'object' || fns === null) throw new TypeError(malformedProvider.noFunctions(index, name, fns));
  });
}

/** What crosses to the native executor, and what stays to answer its tool calls. */
export interface ExecutionPlan {
  descriptors: ProviderDescriptor[];
  handlers: Record<string, ProviderHandler>;
}

/** Run `validateExecution` first: the plan assumes distinct, valid names and no collision. */
export function planExecution(
  providers: readonly ExtendedProvider[],
  connectors: readonly ConnectorBinding[],
): ExecutionPlan {
  const descriptors: ProviderDescriptor[] = [];
  const handlers: [string, ProviderHandler][] = [];
  for (const provider of providers) {
    const table = sanitizeFunctions(provider.fns);
    descriptors.push(describeProvider(provider, [...table.keys()]));
    handlers.push([provider.name, providerHandler(table)]);
  }
  for (const connector of connectors) {
    // A connector's tool names live behind callTool, so it declares none.
    descriptors.push({ name: connector.name, tools: [] });
    handlers.push([connector.name, connectorHandler(connector)]);
  }
  // fromEntries defines own properties, so even a provider named __proto__ stays a key.
  return { descriptors, handlers: Object.fromEntries(handlers) };
}

/** The descriptor of a provider: each optional member is copied only when it is defined. */
export function describeProvider(provider: ExtendedProvider, tools: string[]): ProviderDescriptor {
  const descriptor: ProviderDescriptor = { name: provider.name, tools };
  if (provider.positionalArgs !== undefined) descriptor.positionalArgs = provider.positionalArgs;
  if (provider.proxySource !== undefined) descriptor.proxySource = provider.proxySource;
  if (provider.prelude !== undefined) descriptor.prelude = provider.prelude;
  return descriptor;
}

/** Every raw key under its sanitized identifier, the one the model was shown. A later key wins. */
function sanitizeFunctions(fns: Readonly<Record<string, ToolFunction>>): Map<string, ToolFunction> {
  const table = new Map<string, ToolFunction>();
  for (const [raw, fn] of Object.entries(fns)) table.set(sanitizeToolName(raw), fn);
  return table;
}

/** Own entries only: a call spelled the raw way, or named after an Object.prototype member, is not found. */
function providerHandler(table: ReadonlyMap<string, ToolFunction>): ProviderHandler {
  return (tool, args) => {
    const fn = table.get(tool);
    if (!fn) throw new ToolNotFoundError(tool);
    return fn(...args);
  };
}

/** Connector calls take the first argument only, as the dialect's connector proxy passes it. */
function connectorHandler(connector: ConnectorBinding): ProviderHandler {
  return async (tool, args) => readControlMarker(await connector.binding.callTool(tool, args[0]));
}

const CONTROL_KEY = '__codemode_control__';
const PAUSE_MESSAGE = '__CODEMODE_PAUSE__';

/**
 * A connector reports its control decisions as a marker object, not as a throw across RPC. This
 * turns the marker back into a local throw, which then travels as the envelope error.
 */
export function readControlMarker(value: unknown): unknown {
  if (value && typeof value === 'object') {
    const marker = value as Record<string, unknown>;
    if (marker[CONTROL_KEY] === 'pause') throw new Error(PAUSE_MESSAGE);
    if (marker[CONTROL_KEY] === 'error') throw new Error(String(marker.message));
  }
  return value;
}

/** The plan's handlers behind the protocol's envelope and completion guard. */
export function createDispatch(handlers: Readonly<Record<string, ProviderHandler>>, guard: CompletionGuard): Dispatch {
  return createEnvelopeDispatch(handlers, guard);
}

/**
 * What one dialect call becomes on the native side: the descriptors that cross to the native
 * executor, and the handlers that stay here. Provider and connector functions never leave this
 * process; only names cross, with whatever source a provider chose to bring.
 */
import { type CompletionGuard, createEnvelopeDispatch, type ProviderHandler } from '../protocol/dispatch.js';
import { ToolNotFoundError } from '../protocol/errors.js';
import type { Dispatch, ProviderDescriptor } from '../protocol/types.js';
import { malformedProvider, PAUSE_MESSAGE } from './texts.js';
import { sanitizeToolName } from './tool-name.js';
import type { ConnectorBinding, ExtendedProvider, ToolFunction } from './types.js';

/**
 * Throws a `TypeError` naming the first provider that is not `{name, fns}` with `fns` an object:
 * the plan reads every provider's functions. Upstream rejects there too, with
 * `Cannot convert undefined or null to object`.
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
  const call = (tool: string, args: unknown[]) => {
    const fn = table.get(tool);
    if (!fn) throw new ToolNotFoundError(tool);
    return fn(...args);
  };
  return Object.assign(call, { has: (tool: string) => table.has(tool) });
}

/** Connector calls take the first argument only, as the dialect's connector proxy passes it. */
function connectorHandler(connector: ConnectorBinding): ProviderHandler {
  return async (tool, args) => readControlMarker(await connector.binding.callTool(tool, args[0]));
}

/** The key of the dialect's connector control marker, `{"__codemode_control__": "pause" | "error"}`. */
const CONTROL_KEY = '__codemode_control__';

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

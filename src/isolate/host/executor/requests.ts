/**
 * The checks a request passes before it may spend a sandbox: each failure is an
 * `INVALID_REQUEST` rejection naming the field. Provider names are not checked here: a rejected
 * name is a result (`validateProviders`), as the contract says.
 */

import { codeBytesOver } from '../../../protocol/code-size.js';
import { describeValue } from '../../../protocol/describe-value.js';
import { invalidRequest } from '../../../protocol/errors.js';
import { messageOf } from '../../../protocol/message-of.js';
import { meetsField } from '../../../protocol/request-schema.js';
import type {
  Dispatch,
  ExecuteRequest,
  InvokeHandleRequest,
  ModuleSource,
  OutboundFetch,
  ProviderDescriptor,
} from '../../../protocol/types.js';
import { encodeValue } from '../../../protocol/value-codec.js';
import { channelGrammar } from '../../contract/channel.js';
import { INTERNAL_MODULES } from '../../contract/sandbox-constants.js';
import { isolateText } from '../../host/texts.js';
import { type IsolateLimits, type IsolateSettings, resolveCpuTimeout, resolveTimeout } from '../options.js';

export interface CheckedExecuteRequest {
  code: string;
  providers: readonly ProviderDescriptor[];
  dispatch: Dispatch | null | undefined;
  modules: Record<string, ModuleSource>;
  timeout: number;
  cpuTimeout: number | null;
  countHostWaits: boolean;
  outbound: OutboundFetch | null;
  retainHandles: boolean;
  /** Who it runs for (the tenant level's key), or undefined. */
  tenant: string | undefined;
}

export interface CheckedInvokeRequest {
  executionId: string;
  handle: string;
  args: unknown[];
  dispatch: Dispatch | null | undefined;
  timeout: number;
  cpuTimeout: number | null;
  countHostWaits: boolean;
}

function optionalBoolean(field: 'countHostWaits' | 'retainHandles', value: unknown): boolean {
  if (value === undefined) return false;
  if (!meetsField(field, value))
    throw invalidRequest(isolateText.booleanInvalid(`request.${field}`, describeValue(value)));
  return value;
}

function optionalDispatch(value: unknown): Dispatch | null | undefined {
  if (value === undefined || value === null || typeof value === 'function') return value as Dispatch | null | undefined;
  throw invalidRequest(isolateText.dispatchNotFunction(describeValue(value)));
}

/**
 * Whether a module name stays inside the worker's module root: workerd resolves a name that
 * starts with `/`, or whose `..` segments climb above the root, to a path outside it, and fails
 * the whole run with an opaque "internal error; reference = …".
 */
function staysInsideRoot(name: string): boolean {
  if (name.startsWith('/')) return false;
  let depth = 0;
  for (const segment of name.split('/')) {
    if (segment === '..') depth -= 1;
    else if (segment !== '.' && segment !== '') depth += 1;
    if (depth < 0) return false;
  }
  return true;
}

/**
 * Each frozen module object the host was given, as checked: the same module on every call that
 * passes it, so the channel escapes its text once (channel.ts). Frozen, its fields cannot change
 * between the check and a later call.
 */
const checkedFrozen = new WeakMap<object, ModuleSource>();

function checkedModuleSource(source: unknown): ModuleSource | null {
  const frozen = typeof source === 'object' && source !== null && Object.isFrozen(source) && hasDataFieldsOnly(source);
  if (frozen) {
    const known = checkedFrozen.get(source);
    if (known !== undefined) return known;
  }
  const module = channelGrammar.parseModuleSource(source);
  if (module === null || !frozen) return module;
  Object.freeze(module);
  checkedFrozen.set(source, module);
  return module;
}

/** No getter: a frozen object whose field is a getter may still answer differently each time. */
function hasDataFieldsOnly(source: object): boolean {
  return Object.values(Object.getOwnPropertyDescriptors(source)).every((field) => 'value' in field);
}

/** The user's modules, minus any that would collide with the executor's own module names. */
function checkModules(value: unknown): Record<string, ModuleSource> {
  if (value === undefined) return {};
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw invalidRequest(isolateText.modulesNotRecord(describeValue(value)));
  }
  const modules: Record<string, ModuleSource> = {};
  for (const [name, source] of Object.entries(value)) {
    // The channel's own reading of a module, so the host refuses what the supervisor would.
    const module = checkedModuleSource(source);
    if (module === null) throw invalidRequest(isolateText.modulesInvalid(name));
    if (!staysInsideRoot(name)) throw invalidRequest(isolateText.moduleNameOutside(name));
    if (!INTERNAL_MODULES.has(name)) modules[name] = module;
  }
  return modules;
}

/** `undefined` takes the executor's default, `null` blocks, a function answers every fetch. */
function resolveOutbound(field: string, value: unknown, fallback: OutboundFetch | null): OutboundFetch | null {
  if (value === undefined) return fallback;
  if (meetsField('outbound', value)) return value;
  throw invalidRequest(isolateText.outboundInvalid(field, describeValue(value)));
}

export function checkExecuteRequest(request: unknown, settings: IsolateSettings): CheckedExecuteRequest {
  if (typeof request !== 'object' || request === null) throw invalidRequest(isolateText.requestNotObject);
  const raw = request as ExecuteRequest;
  if (typeof raw.code !== 'string') throw invalidRequest(isolateText.codeNotString(describeValue(raw.code)));
  if (raw.providers !== undefined && !Array.isArray(raw.providers)) {
    throw invalidRequest(isolateText.providersNotArray(describeValue(raw.providers)));
  }
  return {
    code: raw.code,
    providers: raw.providers ?? [],
    dispatch: optionalDispatch(raw.dispatch),
    modules: checkModules(raw.modules),
    timeout: resolveTimeout('request.timeout', raw.timeout, settings),
    cpuTimeout: resolveCpuTimeout('request.cpuTimeout', raw.cpuTimeout, settings),
    countHostWaits: optionalBoolean('countHostWaits', raw.countHostWaits),
    outbound: resolveOutbound('request.outbound', raw.outbound, settings.outbound),
    retainHandles: optionalBoolean('retainHandles', raw.retainHandles),
    tenant: optionalTenant(raw.tenant),
  };
}

function optionalTenant(value: unknown): string | undefined {
  if (value === undefined || meetsField('tenant', value)) return value;
  throw invalidRequest(isolateText.tenantInvalid(describeValue(value)));
}

/**
 * The refusal of code over `limits.maxCodeBytes`, or null: checked before anything reads the code
 * (the import scan, the entry module), so a huge program costs its size count alone.
 */
export function codeOverCap(code: string, limits: Pick<IsolateLimits, 'maxCodeBytes'>): string | null {
  const size = codeBytesOver(code, limits.maxCodeBytes);
  return size === null ? null : isolateText.codeTooLarge(size, limits.maxCodeBytes);
}

/** After `validateProviders` accepted the names: a declared provider needs a way to the host. */
export function assertDispatchFor(checked: CheckedExecuteRequest): void {
  const [first] = checked.providers;
  if (first !== undefined && typeof checked.dispatch !== 'function')
    throw invalidRequest(isolateText.dispatchMissing(first.name));
}

export function checkInvokeRequest(request: unknown, settings: IsolateSettings): CheckedInvokeRequest {
  if (typeof request !== 'object' || request === null) throw invalidRequest(isolateText.invokeNotObject);
  const raw = request as InvokeHandleRequest;
  for (const field of ['executionId', 'handle'] as const) {
    if (typeof raw[field] !== 'string' || raw[field] === '') {
      throw invalidRequest(isolateText.stringFieldInvalid(`request.${field}`, describeValue(raw[field])));
    }
  }
  if (raw.args !== undefined && !Array.isArray(raw.args))
    throw invalidRequest(isolateText.argsInvalid(describeValue(raw.args)));
  return {
    executionId: raw.executionId,
    handle: raw.handle,
    args: raw.args ?? [],
    dispatch: optionalDispatch(raw.dispatch),
    timeout: resolveTimeout('request.timeout', raw.timeout, settings),
    cpuTimeout: resolveCpuTimeout('request.cpuTimeout', raw.cpuTimeout, settings),
    countHostWaits: optionalBoolean('countHostWaits', raw.countHostWaits),
  };
}

/** A handle call's arguments in the value codec's encoded form; they may hold no function. */
export function encodeInvokeArgs(args: unknown): unknown {
  let encoded: unknown;
  try {
    encoded = encodeValue(args);
  } catch (error) {
    throw invalidRequest(isolateText.argsUnencodable(messageOf(error)));
  }
  // Strings are quoted in the encoded form, so this token can only be a function's tag.
  if (JSON.stringify(encoded).includes('["f"]'))
    throw invalidRequest(isolateText.argsUnencodable(isolateText.argsHoldFunction));
  return encoded;
}

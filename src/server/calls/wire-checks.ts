/**
 * Every value a client sends is checked against the wire grammar (src/wire/types.ts) before the
 * daemon uses it: a malformed one is `INVALID_REQUEST` naming the method and the field, never a
 * raw `TypeError` from deep inside. Checks are of shape, but for the fields a call's schema rules
 * (src/protocol/request-schema.ts): `timeout` is held to its one rule here, refused with the text
 * the executor gives it, and the booleans to theirs. What a field means against the executor (a
 * provider's names, a timeout above its maxTimeout, a `cpuTimeout` that is no bound) is the
 * executor's to check.
 */
import { EVENT_ROWS } from '../../events/options.js';
import { describeValue } from '../../protocol/describe-value.js';
import { invalidRequest } from '../../protocol/errors.js';
import { everyKey } from '../../protocol/every-key.js';
import { meetsBounds } from '../../protocol/option-schema.js';
import { meetsField } from '../../protocol/request-schema.js';
import { formatTimeoutInvalid } from '../../protocol/texts.js';
import type { ModuleSource } from '../../protocol/types.js';
import { decodeValue } from '../../protocol/value-codec.js';
import { isTraceparent } from '../../tracing/registered-tracer.js';
import { MODULE_HASH_PATTERN } from '../../wire/module-refs.js';
import type { OutboundMode, WireExecuteRequest, WireInvokeHandleRequest } from '../../wire/types.js';
import {
  formatArgumentInvalid,
  formatFieldInvalid,
  formatFieldUnknown,
  formatInvalidCancelToken,
  formatInvalidOutboundMode,
  formatModuleHashesInvalid,
  formatModulePutsInvalid,
  formatRequestNotObject,
  OUTBOUND_STUB_MISSING,
} from '../texts.js';

type WireMethod = 'execute' | 'invokeHandle' | 'closeHandles' | 'rejectOversizedMessage';

const OUTBOUND_MODES: readonly OutboundMode[] = ['default', 'blocked', 'stub'];

const EXECUTE_FIELDS = everyKey<WireExecuteRequest>({
  code: true,
  dispatch: true,
  outboundMode: true,
  outbound: true,
  providers: true,
  modules: true,
  moduleRefs: true,
  timeout: true,
  cpuTimeout: true,
  countHostWaits: true,
  retainHandles: true,
  cancelToken: true,
  callId: true,
  parent: true,
  heartbeatLease: true,
  events: true,
  maxQueuedEvents: true,
  traceparent: true,
});

const INVOKE_FIELDS = everyKey<WireInvokeHandleRequest>({
  executionId: true,
  handle: true,
  args: true,
  dispatch: true,
  timeout: true,
  cpuTimeout: true,
  countHostWaits: true,
  cancelToken: true,
  callId: true,
  parent: true,
  heartbeatLease: true,
  events: true,
  maxQueuedEvents: true,
  traceparent: true,
});

type Fields = Record<string, unknown>;

function record(method: WireMethod, value: unknown, known: readonly string[]): Fields {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw invalidRequest(formatRequestNotObject(method, describeValue(value)));
  }
  for (const key of Object.keys(value)) {
    if (!known.includes(key)) throw invalidRequest(formatFieldUnknown(method, key, known));
  }
  return value as Fields;
}

function field(method: WireMethod, fields: Fields, name: string, expected: string, ok: (value: unknown) => boolean) {
  const value = fields[name];
  if (!ok(value)) throw invalidRequest(formatFieldInvalid(method, name, expected, describeValue(value)));
}

const optional = (check: (value: unknown) => boolean) => (value: unknown) => value === undefined || check(value);
const isString = (value: unknown) => typeof value === 'string';
const isNonEmptyString = (value: unknown) => typeof value === 'string' && value !== '';
const isFunction = (value: unknown) => typeof value === 'function';
const isQueueBound = (value: unknown) => meetsBounds(EVENT_ROWS.maxQueuedEvents.bounds, value);
const isFunctionOrNull = (value: unknown) => value === null || typeof value === 'function';
const isNumber = (value: unknown) => typeof value === 'number';
/** The call's rule for the field, from its schema. */
const ruled = (name: 'countHostWaits' | 'retainHandles') => (value: unknown) => meetsField(name, value);
const isLease = (value: unknown) => typeof value === 'number' && Number.isFinite(value) && value > 0;
const isRecord = (value: unknown) => typeof value === 'object' && value !== null && !Array.isArray(value);
const isHash = (value: unknown) => typeof value === 'string' && MODULE_HASH_PATTERN.test(value);
const isHashRecord = (value: unknown) => isRecord(value) && Object.values(value as object).every(isHash);

/** The most hashes one missingModules or putModules call names: more modules than any map needs. */
const MAX_MODULES_PER_CALL = 1024;

/** `missingModules`' argument: an array of hashes. */
export function checkModuleHashes(value: unknown): string[] {
  if (!Array.isArray(value) || value.length > MAX_MODULES_PER_CALL || !value.every(isHash))
    throw invalidRequest(formatModuleHashesInvalid(describeValue(value), MAX_MODULES_PER_CALL));
  return value as string[];
}

/** `putModules`' argument: hash to module source, as the execute's `modules` take them. */
export function checkModulePuts(value: unknown): Record<string, ModuleSource> {
  if (
    !isRecord(value) ||
    Object.keys(value as object).length > MAX_MODULES_PER_CALL ||
    !Object.keys(value as object).every(isHash) ||
    !Object.values(value as object).every(isModuleSource)
  )
    throw invalidRequest(formatModulePutsInvalid(describeValue(value), MAX_MODULES_PER_CALL));
  return value as Record<string, ModuleSource>;
}

/** Source text, or exactly one of `{js}`, `{cjs}`, `{text}` (text), `{json}` (any value). */
function isModuleSource(value: unknown): boolean {
  if (typeof value === 'string') return true;
  if (!isRecord(value) || Object.keys(value as object).length !== 1) return false;
  const [kind] = Object.keys(value as object) as [string];
  const inner = (value as Record<string, unknown>)[kind];
  return kind === 'json' || (['js', 'cjs', 'text'].includes(kind) && typeof inner === 'string');
}

/** The timeout rule, refused in the words the executor refuses it with, so a remote caller reads the same. */
function checkTimeout(fields: Fields): void {
  const timeout = fields.timeout;
  if (timeout !== undefined && !meetsField('timeout', timeout))
    throw invalidRequest(formatTimeoutInvalid('request.timeout', describeValue(timeout)));
}

function checkCancelToken(fields: Fields): void {
  const token = fields.cancelToken;
  if (token !== undefined && (typeof token !== 'string' || token === '')) {
    throw invalidRequest(formatInvalidCancelToken(token));
  }
}

/** The fields both call kinds share. */
function checkCallFields(method: WireMethod, fields: Fields): void {
  field(method, fields, 'dispatch', 'a function or null', isFunctionOrNull);
  checkTimeout(fields);
  field(method, fields, 'cpuTimeout', 'a number or absent', optional(isNumber));
  field(method, fields, 'countHostWaits', 'a boolean or absent', optional(ruled('countHostWaits')));
  field(method, fields, 'heartbeatLease', 'a positive number of milliseconds or absent', optional(isLease));
  field(method, fields, 'callId', 'a non-empty string or absent', optional(isNonEmptyString));
  field(method, fields, 'parent', 'a non-empty string or absent', optional(isNonEmptyString));
  field(method, fields, 'events', 'a function or absent', optional(isFunction));
  field(method, fields, 'traceparent', 'a W3C traceparent or absent', optional(isTraceparent));
  field(method, fields, 'maxQueuedEvents', EVENT_ROWS.maxQueuedEvents.rule, optional(isQueueBound));
  checkCancelToken(fields);
}

export function checkWireExecuteRequest(value: unknown): WireExecuteRequest {
  const fields = record('execute', value, EXECUTE_FIELDS);
  field('execute', fields, 'code', 'a string', isString);
  checkCallFields('execute', fields);
  field('execute', fields, 'providers', 'an array or absent', optional(Array.isArray));
  field('execute', fields, 'modules', 'a record of module sources or absent', optional(isRecord));
  field('execute', fields, 'moduleRefs', 'a record of module hashes or absent', optional(isHashRecord));
  field('execute', fields, 'retainHandles', 'a boolean or absent', optional(ruled('retainHandles')));
  const mode = fields.outboundMode;
  if (!OUTBOUND_MODES.includes(mode as OutboundMode)) throw invalidRequest(formatInvalidOutboundMode(mode));
  if (mode === 'stub' && typeof fields.outbound !== 'function') throw invalidRequest(OUTBOUND_STUB_MISSING);
  if (mode !== 'stub')
    field('execute', fields, 'outbound', `absent when outboundMode is "${mode}"`, (v) => v === undefined);
  return fields as unknown as WireExecuteRequest;
}

/** The request, with `args` decoded (a malformed encoding is `INVALID_REQUEST` too). */
export function checkInvokeHandleRequest(value: unknown): {
  wire: WireInvokeHandleRequest;
  args: unknown[] | undefined;
} {
  const fields = record('invokeHandle', value, INVOKE_FIELDS);
  field('invokeHandle', fields, 'executionId', 'a string', isString);
  field('invokeHandle', fields, 'handle', 'a string', isString);
  checkCallFields('invokeHandle', fields);
  let args: unknown[] | undefined;
  if (fields.args !== undefined) {
    let decoded: unknown;
    try {
      decoded = decodeValue(fields.args);
    } catch {
      decoded = undefined;
    }
    if (!Array.isArray(decoded)) {
      throw invalidRequest(
        formatFieldInvalid('invokeHandle', 'args', 'an encoded array or absent', describeValue(fields.args)),
      );
    }
    args = decoded;
  }
  return { wire: fields as unknown as WireInvokeHandleRequest, args };
}

/** The one argument of `closeHandles`. */
export function checkExecutionId(value: unknown): string {
  if (typeof value !== 'string')
    throw invalidRequest(formatArgumentInvalid('closeHandles', 'executionId', 'a string', describeValue(value)));
  return value;
}

/** The arguments of `rejectOversizedMessage`, which the transport fills with two byte counts. */
export function checkOversizeArguments(size: unknown, limit: unknown): [number, number] {
  for (const [name, value] of [
    ['size', size],
    ['limit', limit],
  ] as const) {
    if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
      throw invalidRequest(formatArgumentInvalid('rejectOversizedMessage', name, 'a byte count', describeValue(value)));
    }
  }
  return [size as number, limit as number];
}

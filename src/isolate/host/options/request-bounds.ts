/**
 * The bound of each request: its wall-clock `timeout` and its `cpuTimeout`, by the call's one rule
 * of each (src/protocol/request-schema.ts), resolved against the construction settings.
 */
import { describeValue } from '../../../protocol/describe-value.js';
import { invalidRequest } from '../../../protocol/errors.js';
import { meetsField } from '../../../protocol/request-schema.js';
import { isolateText } from '../../host/texts.js';
import type { IsolateSettings } from './types.js';

/**
 * The bound of one request: `undefined` is the construction default, `null` the maximum, and a
 * number (the timeout rule: finite, from 0) no larger than the maximum.
 */
export function resolveTimeout(
  field: string,
  value: unknown,
  settings: Pick<IsolateSettings, 'timeout' | 'maxTimeout'>,
): number {
  if (value === undefined) return settings.timeout;
  if (!meetsField('timeout', value)) throw invalidRequest(isolateText.timeoutInvalid(field, describeValue(value)));
  if (value === null) return settings.maxTimeout;
  if (value > settings.maxTimeout) throw invalidRequest(isolateText.timeoutAboveMax(field, value, settings.maxTimeout));
  return value;
}

/**
 * The CPU-time bound of one request: `undefined` is the construction default (`null`: none), and a
 * number must be a positive finite number of milliseconds.
 */
export function resolveCpuTimeout(
  field: string,
  value: unknown,
  settings: Pick<IsolateSettings, 'cpuTimeout'>,
): number | null {
  if (value === undefined) return settings.cpuTimeout;
  if (!meetsField('cpuTimeout', value))
    throw invalidRequest(isolateText.cpuTimeoutInvalid(field, describeValue(value)));
  return value;
}

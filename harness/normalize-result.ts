/**
 * `normalizeResult`: a JSON round trip applied to every side's outcome, so a `Map` or a `Set`
 * collapses the same way everywhere and `undefined` members drop out alike. Values JSON cannot
 * carry are made visible instead of failing the round trip. Runtime-neutral: the reference
 * worker bundles this file too.
 */

import { messageOf } from '../src/protocol/index.js';
import type { Outcome } from './case-model.js';

function replacer(_key: string, value: unknown): unknown {
  if (typeof value === 'bigint') return `${value}n`;
  return value;
}

/** Normalizes whatever `execute` resolved to, or the message of what it threw. */
export function normalizeResult(raw: unknown): Outcome {
  try {
    return JSON.parse(JSON.stringify(raw, replacer) ?? '{}') as Outcome;
  } catch (error) {
    return { error: `[normalizeResult] the outcome could not be serialized: ${messageOf(error)}` };
  }
}

/** The outcome of an `execute` that rejected. */
export function normalizeThrow(error: unknown): Outcome {
  return { threw: messageOf(error) };
}

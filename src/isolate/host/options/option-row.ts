/**
 * What IsolateExecutor's option schema is made of: its row (option-schema.ts's, with what the
 * daemon and the docs add) and the number option, whose rule text is its bounds' in the
 * constructor's words.
 */
import * as v from 'valibot';
import type { NumberBounds, OptionRow, OptionUnit } from '../../../protocol/option-schema.js';
import { option } from '../../../protocol/parse-options.js';
import { optionRuleText } from '../../contract/texts.js';

/** What a number option takes (option-schema.ts's bounds), and the daemon's flag that sets it, where one does. */
export interface NumberRule extends NumberBounds {
  readonly flag?: string;
}

/**
 * An option of IsolateExecutor. `flagHelp`: what its daemon flag does, in --help and docs/remote.md's
 * flag table; `hostDefault`: the default this host computes, which --help shows beside `defaultText`;
 * `role` (pool numbers): `limit` bounds what a program can use up (passing it fails the run or the
 * call, with a text that names it; docs/isolate.md's Limits table lists it, beside the timeouts and
 * every `limits.*` cap), `sizing` shapes the pool (passing it makes programs wait, or replaces a
 * process between runs, and fails nothing).
 */
export interface IsolateOptionRow extends OptionRow {
  readonly flagHelp?: string;
  readonly hostDefault?: () => number;
  readonly role?: 'limit' | 'sizing';
}

interface NumberRowParts {
  unit: OptionUnit;
  kind?: 'integer' | 'positive';
  min: number;
  max?: number;
  default?: number;
  defaultText?: string;
  flag?: string;
  flagHelp?: string;
  hostDefault?: () => number;
  role?: 'limit' | 'sizing';
  unitExempt?: string;
  description: string;
}

type NumberRow<Parts extends NumberRowParts> = Omit<Parts, 'kind' | 'min' | 'max'> &
  IsolateOptionRow & { bounds: NumberBounds };

/** A number option: a number within its row's bounds, whose rule text says them. */
export function numberOption<const Parts extends NumberRowParts>(parts: Parts) {
  const { kind = 'integer', min, max, ...rest } = parts;
  const bounds: NumberBounds = max === undefined ? { kind, min } : { kind, min, max };
  const row = { type: kind === 'integer' ? 'integer' : 'number', bounds, rule: optionRuleText.number(bounds), ...rest };
  return option(v.number(), row as NumberRow<Parts>);
}

/** A size cap: an integer from 1 to its maximum. */
export function capOption<const Flag extends string>(
  unit: OptionUnit,
  max: number,
  fallback: number,
  flag: Flag,
  flagHelp: string,
  description: string,
) {
  return numberOption({ unit, min: 1, max, default: fallback, flag, flagHelp, description });
}

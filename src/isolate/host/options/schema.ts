/**
 * The option schema of `IsolateExecutor`: one valibot schema (src/protocol/parse-options.ts) whose
 * options each carry their row (default, bounds, rule text, the daemon's flag, description). One
 * parse checks every option (resolve.ts), the option types are inferred from it (types.ts), and the
 * daemon's `--help` and command line (src/server/command/, through the `/isolate` entry) and the
 * docs tables (scripts/option-tables.ts) read its rows (table.ts).
 */
import * as v from 'valibot';
import { option, optionGroup, optionsSchema } from '../../../protocol/parse-options.js';
import { REQUEST_FIELDS, TIMEOUT_BOUNDS, TIMEOUT_RULE } from '../../../protocol/request-schema.js';
import { optionRuleText } from '../../contract/texts.js';
import { CONFINEMENT_OPTIONS, type ConfinementOption } from '../confinement/detect.js';
import { LIMIT_SCHEMA } from './limit-options.js';
import { MAX_TIMER_MS } from './max-timer.js';
import { numberOption } from './option-row.js';
import { POOL_SCHEMA } from './pool-options.js';

export const DEFAULT_TIMEOUT_MS = 60_000;
export const DEFAULT_MAX_TIMEOUT_MS = 300_000;
/**
 * A few seconds of CPU: a computation upstream still returns (its timer cannot fire mid-turn)
 * takes a second or so past its bound; an endless loop is killed once it spends this.
 */
export const DEFAULT_TURN_GRACE_MS = 3_000;
/** Confine where the host allows it (docs/security.md). */
export const DEFAULT_CONFINEMENT: ConfinementOption = 'auto';

const REQUEST_FIELD = 'the field of ExecuteRequest whose default it sets, named as upstream names it';

/** The top-level options, in the order a refusal lists them (the daemon's Sandbox flags among them). */
export const ISOLATE_SCHEMA = optionsSchema(
  {
    /**
     * The bound of a request that leaves `timeout` undefined, in ms, by the request's own timeout
     * rule (`null`: `maxTimeout`). Default 60000, as upstream 0.4.2+.
     */
    timeout: option(REQUEST_FIELDS.timeout, {
      type: 'number',
      unit: 'ms',
      unitExempt: REQUEST_FIELD,
      bounds: TIMEOUT_BOUNDS,
      default: DEFAULT_TIMEOUT_MS,
      rule: TIMEOUT_RULE,
      flag: 'timeout',
      flagHelp: 'bound of a request that sets no timeout',
      description:
        "the bound, in ms, of a request that leaves `timeout` undefined (upstream 0.4.2+), by the rule of a request's own (`null`: `maxTimeout`; see [Timeouts](#timeouts-and-the-run-clock))",
    }),
    /** The bound a `null` timeout asks for, and the largest one a request may ask for. Default max(300000, timeout). */
    maxTimeout: numberOption({
      unit: 'ms',
      unitExempt: REQUEST_FIELD,
      kind: 'positive',
      min: 0,
      defaultText: `\`max(${DEFAULT_MAX_TIMEOUT_MS}, timeout)\``,
      flag: 'max-timeout',
      flagHelp: 'bound a `null` timeout asks for, and the largest allowed',
      description: 'the bound of a `null` timeout, and the largest bound a request may ask for',
    }),
    /**
     * The CPU time, in ms, a request that leaves `cpuTimeout` undefined may spend: its process's own
     * CPU time, beside the wall-clock `timeout`. Default: none (only the wall clock bounds a run).
     */
    cpuTimeout: numberOption({
      unit: 'ms',
      unitExempt: REQUEST_FIELD,
      kind: 'positive',
      min: 0,
      defaultText: 'none',
      flag: 'cpu-timeout',
      flagHelp: 'CPU time a request that sets no `cpuTimeout` may spend',
      description:
        'the CPU time, in ms, a request that leaves `cpuTimeout` undefined may spend (see [The CPU-time bound](#the-cpu-time-bound))',
    }),
    /**
     * The CPU time, in ms, a turn of the program still running when its `timeout` passes may spend
     * to finish (upstream's timer cannot fire mid-turn, so what the turn settles is the result); past
     * it, the process is killed and the run times out. Default 3000.
     */
    turnGraceMs: numberOption({
      unit: 'ms',
      min: 0,
      max: MAX_TIMER_MS,
      default: DEFAULT_TURN_GRACE_MS,
      flag: 'turn-grace-ms',
      flagHelp: 'CPU time a turn still running at the bound may spend to finish, before its process is killed',
      description:
        "the CPU time, in ms, a turn of the program still running when its `timeout` passes may spend to finish: what it settles then is the result, as upstream's timer cannot fire mid-turn; past it the process is killed and the run times out (at least 200 ms; see [A turn runs to its end](#a-turn-runs-to-its-end))",
    }),
    /** The outbound of a request that leaves it undefined. Default `null`: blocked. */
    outbound: option(REQUEST_FIELDS.outbound, {
      type: 'function',
      default: null,
      defaultText: '`null` (blocked)',
      rule: optionRuleText.outbound,
      description: 'the outbound of a request that leaves it undefined',
    }),
    pool: optionGroup(POOL_SCHEMA, {
      type: 'object',
      rule: optionRuleText.group,
      description: 'the pool options below (`pool.*`)',
    }),
    limits: optionGroup(LIMIT_SCHEMA, {
      type: 'object',
      rule: optionRuleText.group,
      description: 'the size caps below (`limits.*`)',
    }),
    /**
     * Whether each workerd runs confined by the OS (namespaces, a filesystem view, an unprivileged
     * uid, rlimits, a seccomp filter; see docs/security.md). 'auto' (the default) confines where this
     * host allows it; 'required' refuses to construct where it does not; 'off' never confines.
     */
    confinement: option(v.picklist(CONFINEMENT_OPTIONS), {
      type: 'choice',
      default: DEFAULT_CONFINEMENT,
      rule: optionRuleText.oneOf(CONFINEMENT_OPTIONS.map((mode) => `'${mode}'`)),
      flag: 'confinement',
      flagHelp: 'confine each workerd by the OS where the host allows it, refuse to start where it does not, or never',
      description:
        "each workerd confined by the OS: `'auto'` where the host allows it, `'required'` or refuse to construct, `'off'` never ([Confinement](#confinement))",
    }),
  },
  { arrays: false },
);

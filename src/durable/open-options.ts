/**
 * The options of `openDurableState`: one row each (src/protocol/option-schema.ts), whose rule texts
 * the checks below refuse with, and whose descriptions are docs/durable-state.md's options table
 * (scripts/option-tables.ts). An unknown option gets the nearest name.
 */
import { resolve } from 'node:path';
import * as v from 'valibot';
import {
  type OptionTexts,
  option,
  optionsSchema,
  parseOptions,
  requiredOption,
  rowsOf,
} from '../protocol/parse-options.js';
import type { Durability } from './durability.js';
import { formatOpenOptionInvalid, formatOpenOptionUnknown, formatOptionsNotObject } from './texts.js';

const DURABILITIES = ['power-loss', 'process-crash'] as const satisfies readonly Durability[];

/** The smallest maxStateBytes: a few pages, enough for a schema. */
const MIN_MAX_STATE_BYTES = 64 * 1024;

const OPEN_SCHEMA = optionsSchema({
  /** The directory that holds the state; created if missing. One process holds it at a time. */
  path: requiredOption(v.pipe(v.string(), v.minLength(1)), {
    type: 'string',
    rule: 'a directory path (a non-empty string)',
    description: 'The directory that holds the state, created if missing. One process holds it at a time.',
  }),
  /** The classes a facet may be built from, as a Worker entry exports them: `{ CodemodeRuntime }`. */
  exports: requiredOption(
    v.custom<Record<string, unknown>>((value) => typeof value === 'object' && value !== null),
    {
      type: 'object',
      rule: 'an object of classes, such as { CodemodeRuntime }',
      description:
        "The classes a facet may be built from, as a Worker entry exports them: `{ CodemodeRuntime }` for upstream's runtime.",
    },
  ),
  /** What a facet's class receives as `env`, as facets share their Worker's; `{}` by default. */
  env: option(v.unknown(), {
    type: 'object',
    defaultText: '`{}`',
    rule: 'any value',
    description: "What a facet's class receives as `env` (facets share their Worker's). `{}` by default.",
  }),
  /**
   * What a commit that has returned survives. `'power-loss'` (the default): also a machine crash or
   * a power loss, as each commit waits for the disk (SQLite's `synchronous = FULL`). `'process-crash'`:
   * a close, an exit and a SIGKILL of this process, as the operating system holds what was written,
   * but not a crash of the machine (`synchronous = NORMAL`); commits then skip the wait for the disk.
   */
  durability: option(v.picklist(DURABILITIES), {
    type: 'choice',
    default: 'power-loss',
    rule: `one of ${DURABILITIES.map((d) => `'${d}'`).join(', ')}`,
    description:
      "What a commit that has returned survives: `'power-loss'` (the default) or `'process-crash'`. See [Durability](#durability).",
  }),
  /**
   * The most bytes each database of the state may hold: the host's own, and each facet's (a facet
   * is a Durable Object of its own, and Cloudflare bounds each). A write past it fails with
   * `STATE_SIZE_LIMIT`, and nothing stored before is harmed. 1 GiB by default.
   */
  maxStateBytes: option(v.number(), {
    type: 'integer',
    unit: 'bytes',
    // 1 GiB (Cloudflare allows a SQLite-backed Durable Object 10 GB).
    default: 1024 ** 3,
    bounds: { kind: 'integer', min: MIN_MAX_STATE_BYTES },
    rule: `a whole number of bytes, ${MIN_MAX_STATE_BYTES} or more`,
    description: `The most bytes each database of the state may hold: the host's own and each facet's. 1 GiB (1073741824) by default, ${MIN_MAX_STATE_BYTES} at least. Cloudflare allows a SQLite-backed Durable Object 10 GB. See [Size and pruning](#size-and-pruning).`,
  }),
});

export type OpenDurableStateOptions = v.InferInput<typeof OPEN_SCHEMA>;

export const DURABLE_ROWS = rowsOf(OPEN_SCHEMA);

const OPEN_TEXTS: OptionTexts = {
  notObject: () => formatOptionsNotObject(Object.keys(DURABLE_ROWS)),
  unknown: formatOpenOptionUnknown,
  invalid: formatOpenOptionInvalid,
};

/** The options, parsed by their schema, with their defaults. */
export function resolveOpenOptions(options: OpenDurableStateOptions): {
  path: string;
  exports: Record<string, unknown>;
  env: unknown;
  durability: Durability;
  maxStateBytes: number;
} {
  const parsed = parseOptions(OPEN_SCHEMA, options, OPEN_TEXTS, (text) => new TypeError(text));
  return { ...parsed, path: resolve(parsed.path), env: parsed.env ?? {} };
}

/**
 * The options of `openDurableState`: one row each (src/protocol/option-schema.ts), whose rule texts
 * the checks below refuse with, and whose descriptions are docs/durable-state.md's options table
 * (scripts/option-tables.ts). An unknown option gets the nearest name.
 */
import { resolve } from 'node:path';
import { meetsBounds, nearestOption, type OptionRow } from '../protocol/option-schema.js';
import type { Durability } from './durability.js';
import { formatInvalidOption, formatOptionsNotObject, formatUnknownOption } from './texts.js';

export interface OpenDurableStateOptions {
  /** The directory that holds the state; created if missing. One process holds it at a time. */
  path: string;
  /** The classes a facet may be built from, as a Worker entry exports them: `{ CodemodeRuntime }`. */
  exports: Record<string, unknown>;
  /** What a facet's class receives as `env`, as facets share their Worker's; `{}` by default. */
  env?: unknown;
  /**
   * What a commit that has returned survives. `'power-loss'` (the default): also a machine crash or
   * a power loss, as each commit waits for the disk (SQLite's `synchronous = FULL`). `'process-crash'`:
   * a close, an exit and a SIGKILL of this process, as the operating system holds what was written,
   * but not a crash of the machine (`synchronous = NORMAL`); commits then skip the wait for the disk.
   */
  durability?: Durability;
  /**
   * The most bytes each database of the state may hold: the host's own, and each facet's (a facet
   * is a Durable Object of its own, and Cloudflare bounds each). A write past it fails with
   * `STATE_SIZE_LIMIT`, and nothing stored before is harmed. 1 GiB by default.
   */
  maxStateBytes?: number;
}

const DURABILITIES: readonly Durability[] = ['power-loss', 'process-crash'];

/** The smallest maxStateBytes: a few pages, enough for a schema. */
const MIN_MAX_STATE_BYTES = 64 * 1024;

export const DURABLE_ROWS = {
  path: {
    type: 'string',
    rule: 'a directory path (a non-empty string)',
    description: 'The directory that holds the state, created if missing. One process holds it at a time.',
  },
  exports: {
    type: 'object',
    rule: 'an object of classes, such as { CodemodeRuntime }',
    description:
      "The classes a facet may be built from, as a Worker entry exports them: `{ CodemodeRuntime }` for upstream's runtime.",
  },
  env: {
    type: 'object',
    defaultText: '`{}`',
    rule: 'any value',
    description: "What a facet's class receives as `env` (facets share their Worker's). `{}` by default.",
  },
  durability: {
    type: 'choice',
    default: 'power-loss',
    rule: `one of ${DURABILITIES.map((d) => `'${d}'`).join(', ')}`,
    description:
      "What a commit that has returned survives: `'power-loss'` (the default) or `'process-crash'`. See [Durability](#durability).",
  },
  maxStateBytes: {
    type: 'integer',
    unit: 'bytes',
    // 1 GiB (Cloudflare allows a SQLite-backed Durable Object 10 GB).
    default: 1024 ** 3,
    bounds: { kind: 'integer', min: MIN_MAX_STATE_BYTES },
    rule: `a whole number of bytes, ${MIN_MAX_STATE_BYTES} or more`,
    description: `The most bytes each database of the state may hold: the host's own and each facet's. 1 GiB (1073741824) by default, ${MIN_MAX_STATE_BYTES} at least. Cloudflare allows a SQLite-backed Durable Object 10 GB. See [Size and pruning](#size-and-pruning).`,
  },
} as const satisfies Record<keyof OpenDurableStateOptions, OptionRow>;

const OPTION_NAMES = Object.keys(DURABLE_ROWS);

/** The options, checked against their rows, with their defaults. */
export function resolveOpenOptions(options: OpenDurableStateOptions): {
  path: string;
  exports: Record<string, unknown>;
  env: unknown;
  durability: Durability;
  maxStateBytes: number;
} {
  if (typeof options !== 'object' || options === null) throw new TypeError(formatOptionsNotObject(OPTION_NAMES));
  for (const name of Object.keys(options)) {
    if (!OPTION_NAMES.includes(name))
      throw new TypeError(formatUnknownOption(name, OPTION_NAMES, nearestOption(name, OPTION_NAMES)));
  }
  if (typeof options.path !== 'string' || options.path.length === 0) {
    throw new TypeError(formatInvalidOption('path', DURABLE_ROWS.path.rule, options.path));
  }
  if (typeof options.exports !== 'object' || options.exports === null) {
    throw new TypeError(formatInvalidOption('exports', DURABLE_ROWS.exports.rule, options.exports));
  }
  const durability = options.durability ?? DURABLE_ROWS.durability.default;
  if (!DURABILITIES.includes(durability)) {
    throw new TypeError(formatInvalidOption('durability', DURABLE_ROWS.durability.rule, options.durability));
  }
  const maxStateBytes = options.maxStateBytes ?? DURABLE_ROWS.maxStateBytes.default;
  if (!meetsBounds(DURABLE_ROWS.maxStateBytes.bounds, maxStateBytes)) {
    throw new TypeError(formatInvalidOption('maxStateBytes', DURABLE_ROWS.maxStateBytes.rule, options.maxStateBytes));
  }
  return { path: resolve(options.path), exports: options.exports, env: options.env ?? {}, durability, maxStateBytes };
}

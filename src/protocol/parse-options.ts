/**
 * One option schema per entry point, in valibot (chosen by what it adds to the Worker-safe root
 * bundle: docs/benchmarks.md, "The option schema library"). Each option is a valibot schema that
 * carries its row (option-schema.ts: rule text, default, unit, description, flag), so one parse
 * checks every option, the option types are inferred from the schema, and the docs tables and
 * `--help` read the rows back from it (rowsOf).
 *
 * The texts stay ours: parseOptions is the one place a valibot issue becomes a refusal, in the
 * entry point's own words (OptionTexts). Runtime-neutral: the root entry reads it.
 */
import * as v from 'valibot';
import { meetsBounds, nearestOption, type OptionRow } from './option-schema.js';

/** An option's schema, with its row beside it. */
export type OptionSchema<Schema extends v.GenericSchema, Row extends OptionRow> = Schema & { readonly row: Row };

type Value<Schema extends v.GenericSchema> = v.InferOutput<Schema>;

/**
 * The value schema, with the row's bounds (meetsBounds, the rule its text says) where it has them.
 * A null the schema takes (a nullable option) is not a number for the bounds to judge.
 */
function bounded<Schema extends v.GenericSchema>(schema: Schema, row: OptionRow) {
  const { bounds } = row;
  if (bounds === undefined) return schema;
  return v.pipe(
    schema,
    v.check((value) => value === null || meetsBounds(bounds, value)),
  );
}

/**
 * The default a row states, as the schema's output type has it; undefined where it states none, or
 * states `null` (none: the entry point says what none means).
 */
type RowDefault<Row extends OptionRow, Schema extends v.GenericSchema> = Row extends {
  default: infer D extends Value<Schema>;
}
  ? D extends null
    ? undefined
    : D
  : undefined;

/** An option a caller may leave out: undefined takes the row's default, where the row has a plain one. */
export function option<const Schema extends v.GenericSchema, const Row extends OptionRow>(
  schema: Schema,
  row: Row,
): OptionSchema<v.OptionalSchema<Schema, RowDefault<Row, Schema>>, Row> {
  const byDefault = (row.default === null ? undefined : row.default) as RowDefault<Row, Schema>;
  return Object.assign(v.optional(bounded(schema, row) as Schema, byDefault), { row });
}

/** An option a caller must give. */
export function requiredOption<const Schema extends v.GenericSchema, const Row extends OptionRow>(
  schema: Schema,
  row: Row,
): OptionSchema<Schema, Row> {
  return Object.assign({ ...(bounded(schema, row) as Schema) }, { row });
}

/** A value that is a function (a constructor included), as an option's schema takes it. */
export function functionValue<Fn>() {
  return v.custom<Fn>((value) => typeof value === 'function');
}

type Entries = Record<string, OptionSchema<v.GenericSchema, OptionRow> & { readonly options?: Entries }>;

/**
 * An entry point's options: an object with these options and no other (`arrays: false` refuses an
 * array as not an object, where the entry point always has). `others: 'ignored'`: a slice of a
 * larger options object (a call's), whose other keys are another parse's to judge.
 */
export function optionsSchema<const E extends Entries>(
  entries: E,
  shape: { arrays?: boolean; others?: 'refused' | 'ignored' } = {},
) {
  const object = shape.others === 'ignored' ? v.object(entries) : v.strictObject(entries);
  const schema =
    shape.arrays === false
      ? v.pipe(
          v.custom<v.InferInput<typeof object>>((value) => !Array.isArray(value)),
          object,
        )
      : object;
  return Object.assign(schema, { options: entries }) as v.StrictObjectSchema<E, undefined> & { readonly options: E };
}

/**
 * A group of options under one option's name (IsolateExecutor's `pool.*`): an options schema of its
 * own, parsed as `{}` (each option with its default) when left out. A refusal names an option in
 * it by its path (`pool.maxWorkers`), and lists the group's options so.
 */
export function optionGroup<
  const Group extends v.GenericSchema<object, object> & { readonly options: Entries },
  const Row extends OptionRow,
>(group: Group, row: Row) {
  const none = {} as v.InferInput<Group>;
  return Object.assign(v.optional(group, none), { row, options: group.options as Group['options'] });
}

/**
 * A group of options that stands for something only where it is given (the daemon's admin
 * listener): undefined when left out, its options named by path as `optionGroup`'s are.
 */
export function optionalGroup<
  const Group extends v.GenericSchema<object, object> & { readonly options: Entries },
  const Row extends OptionRow,
>(group: Group, row: Row) {
  return Object.assign(v.optional(group), { row, options: group.options as Group['options'] });
}

/** An entry point's rows, read back from its schema: what the docs tables and `--help` list. */
export function rowsOf<const E extends Entries>(schema: { readonly options: E }): { [K in keyof E]: E[K]['row'] } {
  return Object.fromEntries(Object.entries(schema.options).map(([name, entry]) => [name, entry.row])) as {
    [K in keyof E]: E[K]['row'];
  };
}

/** How an entry point words a refusal. */
export interface OptionTexts {
  /** The options are not an object. */
  notObject(value: unknown): string;
  /** `known`: every option of the entry point, in its rows' order; `nearest`: the one most likely meant. */
  unknown(name: string, known: readonly string[], nearest: string | undefined): string;
  /** `rule`: the option's row's rule text. */
  invalid(name: string, rule: string, value: unknown): string;
}

/**
 * The options, parsed by their schema: each option with its default. A refusal says the first
 * problem in the entry point's words (an unknown option before a wrong value, as the checks always
 * have), thrown as `refuse` makes it.
 */
export function parseOptions<const E extends Entries>(
  schema: v.GenericSchema<unknown, unknown> & { readonly options: E },
  value: unknown,
  texts: OptionTexts,
  refuse: (text: string) => Error,
): v.InferOutput<v.StrictObjectSchema<E, undefined>> {
  const result = v.safeParse(schema, value);
  if (result.success) return result.output as v.InferOutput<v.StrictObjectSchema<E, undefined>>;
  throw refuse(refusalOf(schema.options, value, result.issues, texts));
}

/** The one place a valibot issue becomes our text. */
function refusalOf(
  options: Entries,
  value: unknown,
  issues: readonly v.BaseIssue<unknown>[],
  texts: OptionTexts,
): string {
  // A key strictObject does not know expects none ('never'); a missing required key expects its name.
  // One at the top is said before one in a group, as the top is read first.
  const unknownKey = issues
    .filter((issue) => issue.type === 'strict_object' && issue.expected === 'never')
    .sort((a, b) => a.path!.length - b.path!.length)[0];
  if (unknownKey !== undefined) {
    const path = unknownKey.path!;
    let group = options;
    let prefix = '';
    for (const step of path.slice(0, -1)) {
      group = group[String(step.key)]!.options!;
      prefix += `${String(step.key)}.`;
    }
    const known = Object.keys(group).map((name) => `${prefix}${name}`);
    const name = `${prefix}${String(path.at(-1)!.key)}`;
    return texts.unknown(name, known, nearestOption(name, known));
  }
  const path = issues[0]!.path;
  if (path === undefined) return texts.notObject(value);
  // The option the path ends in; a group whose own value is wrong (not an object) is that option.
  let group = options;
  let prefix = '';
  for (const [depth, step] of path.entries()) {
    const name = String(step.key);
    const entry = group[name]!;
    if (entry.options === undefined || depth === path.length - 1)
      return texts.invalid(`${prefix}${name}`, entry.row.rule, step.value);
    group = entry.options;
    prefix += `${name}.`;
  }
  return texts.notObject(value);
}

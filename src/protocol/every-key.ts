/**
 * Every key of a type, listed once as an object literal: a key added to the type and not to the
 * list is a type error, so a list of known options or fields cannot fall behind its type.
 */
export function everyKey<T>(keys: { [K in keyof Required<T>]: true }): readonly (keyof T & string)[] {
  return Object.keys(keys) as (keyof T & string)[];
}

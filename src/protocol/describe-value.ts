/** A short, safe description of an unexpected value for an error text. */
export function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  switch (typeof value) {
    case 'undefined':
      return 'undefined';
    case 'string':
      return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
    case 'number':
    case 'boolean':
    case 'bigint':
      return String(value);
    case 'function':
      return 'a function';
    case 'symbol':
      return 'a symbol';
    default:
      return 'an object';
  }
}

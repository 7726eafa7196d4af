/** Differences between two surfaces, as lines a test failure can show. */
import type { Surface, SurfaceEntry } from './probe.js';

const FIELDS: readonly (keyof SurfaceEntry)[] = ['owner', 'access', 'kind', 'arity', 'prototype', 'brand'];

/** How `after` differs from `before`, field by field; one line per key. Empty when they agree. */
export function diffSurfaces(before: Surface, after: Surface, labels: { before: string; after: string }): string[] {
  const lines: string[] = [];
  const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
  for (const key of keys) {
    const a = before[key];
    const b = after[key];
    if (a === undefined) lines.push(`${key}: only on ${labels.after} ${JSON.stringify(b)}`);
    else if (b === undefined) lines.push(`${key}: only on ${labels.before} ${JSON.stringify(a)}`);
    else {
      const changed = FIELDS.filter((field) => a[field] !== b[field]).map(
        (field) =>
          `${field} ${JSON.stringify(a[field])} on ${labels.before}, ${JSON.stringify(b[field])} on ${labels.after}`,
      );
      if (changed.length > 0) lines.push(`${key}: ${changed.join('; ')}`);
    }
  }
  return lines;
}

/** The keys on which two surfaces differ in any way. */
export function differingKeys(a: Surface, b: Surface): string[] {
  const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
  return keys.filter((key) => {
    const x = a[key];
    const y = b[key];
    return x === undefined || y === undefined || FIELDS.some((field) => x[field] !== y[field]);
  });
}

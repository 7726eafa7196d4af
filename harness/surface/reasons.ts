/**
 * Why our surface differs from the reference's, per group of inventory keys. Every difference the
 * recorded table holds must match one pattern here; `docs/runtime-deviations.md` lists them.
 * The first pattern that matches a key gives its reason.
 */
interface DeviationReason {
  keys: RegExp;
  reason: string;
}

const DEVIATION_REASONS: readonly DeviationReason[] = [
  {
    keys: /^member console\.createTask$/,
    reason:
      'An artefact of wrangler dev, not of upstream: V8 defines console.createTask only while an inspector is attached, and wrangler dev always starts workerd with --inspector-addr (checked on plain workerd 1.20260426.1: `typeof console.createTask` is "undefined" without that flag, "function" with it). Our pool runs workerd without an inspector.',
  },
];

export function reasonFor(key: string): string | undefined {
  return DEVIATION_REASONS.find((entry) => entry.keys.test(key))?.reason;
}

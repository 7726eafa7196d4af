/**
 * Every text the reference harness composes: refusals, start-up failures, transport failures.
 * Runtime-neutral, because the reference worker bundles it too.
 */

/** Why `describeRequest` refuses a case, stated once per unrepresentable option. */
export const UNREPRESENTABLE = {
  countHostWaitsFalse:
    'options.countHostWaits: false: the reference clock is always wall-clock time (DynamicWorkerExecutor has no such option)',
  proxySource: (provider: string) =>
    `providers[${JSON.stringify(provider)}].proxySource: upstream ResolvedProvider has no field for a provider's own proxy source`,
  bareRecordShape:
    'options.bareRecord with more than one provider, or with a provider carrying name, positionalArgs, prelude or proxySource: a bare record carries functions only',
  unknownField: (where: string, key: string) => `${where}.${key}: the reference wire does not know this field`,
  timeoutNotNumber: (value: unknown) =>
    `options.timeout ${JSON.stringify(value)}: upstream splices the timeout into module source, so it must be a finite number`,
} as const;

export function refusal(caseId: string, why: string): string {
  return `Case "${caseId}" cannot be sent to a reference column: ${why}`;
}

export function badReferenceBody(detail: string): string {
  return `Bad reference request body: ${detail}`;
}

export function unknownColumn(name: string, known: readonly string[]): string {
  return `Unknown reference column "${name}"; the columns are ${known.map((k) => `"${k}"`).join(', ')}`;
}

export function aliasVersionMismatch(column: string, packageName: string, expected: string, found: string): string {
  return `Reference column ${column} expects ${packageName} to be @cloudflare/codemode ${expected}, but ${found} is installed; fix the npm alias in package.json`;
}

export function wranglerNotReady(column: string, timeoutMs: number, output: string): string {
  return `wrangler dev for reference column ${column} printed no "Ready on http://..." line within ${timeoutMs} ms. Its output:\n${output}`;
}

export function wranglerExitedEarly(
  column: string,
  code: number | null,
  signal: string | null,
  output: string,
): string {
  return `wrangler dev for reference column ${column} exited before it was ready (code ${code}, signal ${signal}). Its output:\n${output}`;
}

export function columnRequestFailed(column: string, caseId: string, status: number, body: string): string {
  return `Reference column ${column} failed case "${caseId}" with HTTP ${status}: ${body}`;
}

export function columnUnreachable(column: string, caseId: string, cause: string): string {
  return `Reference column ${column} could not be reached for case "${caseId}": ${cause}`;
}

export function columnRequestTimedOut(column: string, caseId: string, ms: number): string {
  return `Reference column ${column} did not answer case "${caseId}" within ${ms} ms`;
}

export function columnStopped(column: string): string {
  return `Reference column ${column} has been stopped`;
}

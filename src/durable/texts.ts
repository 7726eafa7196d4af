/**
 * Every text the durable state composes: its refusals at open, the SQL surface's errors, the RPC
 * boundary's and the missing members'. See docs/durable-state.md.
 */
import { describeValue } from '../protocol/describe-value.js';

const OPTIONS = ['path', 'exports', 'env'] as const;

export function formatInvalidOption(name: string, expected: string, value: unknown): string {
  return `openDurableState(): options.${name} must be ${expected}, got ${describeValue(value)}`;
}

export function formatUnknownOption(name: string): string {
  return `openDurableState(): unknown option "${name}"; the options are ${OPTIONS.join(', ')}`;
}

export const OPTIONS_NOT_OBJECT = `openDurableState(): options must be an object with ${OPTIONS.join(', ')}`;

export function formatPathUnusable(path: string, reason: string): string {
  return `Durable state at ${path} cannot be opened: ${reason}`;
}

export function formatDatabaseUnusable(file: string, reason: string): string {
  return `Durable state database ${file} cannot be opened: ${reason}`;
}

/** The single-writer rule: a second open of a path while another holder has it. */
export function formatAlreadyOpen(path: string, holder: string | undefined): string {
  const by = holder ? `by ${holder}` : 'by another process (its holder record is unreadable)';
  return (
    `Durable state at ${path} is already open ${by}. One path has one writer at a time: ` +
    'close the other holder first, or give this host its own path.'
  );
}

/** How a holder is named in formatAlreadyOpen: enough to find the process. */
export function formatHolder(record: { pid: number; host: string; since: string }): string {
  return `process ${record.pid} on host ${record.host} (open since ${record.since})`;
}

export function formatLockToolMissing(path: string, reason: string): string {
  return formatPathUnusable(path, `the lock helper \`flock\` (util-linux) could not run: ${reason}`);
}

export function formatClosed(what: string): string {
  return `Durable state is closed: ${what} is no longer usable`;
}

/** A member of Cloudflare's DurableObjectState or storage that this state does not provide. */
export function formatMissingMember(owner: string, member: string): string {
  return (
    `${owner}.${member} is not provided by openDurableState(): this Node state implements ` +
    'storage.sql.exec, facets.get and exports only (see docs/durable-state.md)'
  );
}

// --- SQL surface ----------------------------------------------------------------------------

export function formatUnsupportedBinding(index: number, value: unknown): string {
  return (
    `sql.exec(): binding ${index + 1} is ${describeValue(value)}; ` +
    'a binding must be a string, a number, null, an ArrayBuffer or an ArrayBufferView'
  );
}

/** Cloudflare's own text for bindings on a multi-statement query. */
export const BINDINGS_ON_MULTIPLE_STATEMENTS =
  'When executing multiple SQL statements in a single call, only the last statement can have parameters.';

export function formatWrongBindingCount(expected: number, given: number): string {
  return `Wrong number of parameter bindings for SQL query. Expected ${expected}, got ${given}.`;
}

/** Cloudflare's cursor.one() texts. */
export const ONE_NO_ROWS = 'Expected exactly one result from SQL query, but got no results.';
export const ONE_MANY_ROWS = 'Expected exactly one result from SQL query, but got multiple results.';

export function formatUnsafeInteger(column: string, value: bigint): string {
  return `sql.exec(): column "${column}" holds the integer ${value}, beyond Number.MAX_SAFE_INTEGER; read it as TEXT (CAST(... AS TEXT))`;
}

export const SQL_QUERY_NOT_STRING = 'sql.exec(): the query must be a string';

// --- Facets and the RPC boundary ------------------------------------------------------------

export function formatFacetNameInvalid(value: unknown): string {
  return `facets.get(): the name must be a non-empty string, got ${describeValue(value)}`;
}

export function formatFacetNameTooLong(name: string, cap: number): string {
  return `facets.get(): the name ${JSON.stringify(name.slice(0, 40))}… is too long: ${cap} characters at most once percent-encoded (it names a directory)`;
}

export function formatFacetStartupInvalid(name: string, value: unknown): string {
  return `facets.get("${name}"): the startup callback must return { class }, a class from options.exports; got ${describeValue(value)}`;
}

export function formatFacetClassNotExported(name: string): string {
  return `facets.get("${name}"): the startup class is not one of options.exports; pass it in exports, as a Worker entry must export it`;
}

export function formatNotAMethod(target: string, member: string): string {
  return `RPC: ${target} has no method "${member}"`;
}

export function formatCannotCross(what: string): string {
  return `Could not serialize ${what} for RPC: it is neither structured-cloneable, a function nor an RpcTarget`;
}

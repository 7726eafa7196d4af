/**
 * Every text the durable state composes: its refusals at open, the SQL surface's errors, the RPC
 * boundary's and the missing members'. See docs/durable-state.md.
 */
import { describeValue } from '../protocol/describe-value.js';
import { formatDidYouMean } from '../protocol/texts.js';

export function formatOpenOptionInvalid(name: string, expected: string, value: unknown): string {
  return `openDurableState(): options.${name} must be ${expected}, got ${describeValue(value)}`;
}

/** `known`: every option, from the rows (open-options.ts); `nearest`: the one most likely meant. */
export function formatOpenOptionUnknown(name: string, known: readonly string[], nearest?: string): string {
  return `openDurableState(): unknown option "${name}"${formatDidYouMean(nearest)}; the options are ${known.join(', ')}`;
}

export function formatOptionsNotObject(known: readonly string[]): string {
  return `openDurableState(): options must be an object with ${known.join(', ')}`;
}

/** A member read from openDurableState()'s Promise: the caller forgot to await it. */
export function formatNotAwaited(member: string): string {
  return (
    `openDurableState() returns a Promise, and .${member} was read from the Promise, not from the state: ` +
    'await it first (`const ctx = await openDurableState({ path, exports })`), then pass ctx.'
  );
}

/** A class read from ctx.exports that options.exports does not hold (a warning). */
export function formatExportMissing(name: string, present: readonly string[]): string {
  const has = present.length === 0 ? 'it is empty' : `it has ${present.join(', ')}`;
  return (
    `ctx.exports has no "${name}", which was just asked for (${has}). A facet's class must be among ` +
    `openDurableState()'s exports, as a Worker entry exports it: openDurableState({ path, exports: { ${name} } }).`
  );
}

export function formatPathUnusable(path: string, reason: string): string {
  return `Durable state at ${path} cannot be opened: ${reason}`;
}

export function formatDatabaseUnusable(file: string, reason: string): string {
  return `Durable state database ${file} cannot be opened: ${reason}`;
}

/** Why a database in a newer file format is refused (formatDatabaseUnusable's reason). */
export function formatNewerFormat(writeVersion: number, readVersion: number): string {
  return (
    `it was written by a newer SQLite (file format: write version ${writeVersion}, read version ${readVersion}; ` +
    'this SQLite writes versions 1 and 2), which this one could read but never write. Open it with a ' +
    'version of this package whose SQLite wrote it, or restore a backup made by this one'
  );
}

/** A write the file system refused for want of space: nothing is lost, this write is not stored. */
export function formatDiskFull(file: string, code: string): string {
  return (
    `Durable state database ${file} could not be written: the disk is full (${code}). This write was not ` +
    'stored; what was stored before is intact. Free space on the file system that holds it (or raise ' +
    'its quota), or move the state to a larger one with the host stopped, then try again.'
  );
}

/** A write past `maxStateBytes`: SQLite refused it, nothing stored before is harmed. */
export function formatStateFull(file: string, maxStateBytes: number): string {
  return (
    `Durable state database ${file} is full: it may hold ${maxStateBytes} bytes (openDurableState's ` +
    'maxStateBytes), and this write would take it past that. The write was not stored; what was stored ' +
    "before is intact. Keep fewer executions (upstream's runtime option maxExecutions, or " +
    'pruneExecutions()), or open the state with a larger maxStateBytes.'
  );
}

/**
 * An open refused for want of a file descriptor: EMFILE is this process's limit, ENFILE the
 * system's table. `limit` is this process's, as /proc/self/limits gives it.
 */
export function formatOutOfDescriptors(
  file: string,
  code: string,
  limit: { soft: string; hard: string } | undefined,
): string {
  const has = limit
    ? `this process may hold ${limit.soft} open files (its soft limit; the hard limit is ${limit.hard})`
    : 'the limit of this process could not be read';
  const why =
    code === 'ENFILE'
      ? `the system has no file descriptor left (ENFILE: its file table is full; ${has})`
      : `this process has no file descriptor left (EMFILE: ${has}, and all are in use)`;
  const raise =
    code === 'ENFILE'
      ? "Raise the system's limit (sysctl fs.file-max) or end what holds files"
      : 'Raise the limit where the host starts (`ulimit -n` in its shell, LimitNOFILE= in its systemd unit), or let it hold fewer files';
  return (
    `Durable state: ${file} could not be opened: ${why}. Nothing in the state is damaged; ` +
    `this open only was refused. ${raise}, then open it again.`
  );
}

/** The path was swapped for another directory each time an open had locked it. */
export function formatPathReplaced(path: string, attempts: number): string {
  return formatPathUnusable(
    path,
    `it was replaced by another directory while it was being opened, ${attempts} times in a row; whatever renames or ` +
      'recreates it must stop first',
  );
}

/** The single-writer rule: a second open of a path while another holder has it. */
export function formatAlreadyOpen(path: string, holder: string | undefined): string {
  const by = holder ? `by ${holder}` : 'by another process (its holder record, LOCK, is missing or unreadable)';
  return (
    `Durable state at ${path} is already open ${by}. One path has one writer at a time: ` +
    'close the other holder first, or give this host its own path.'
  );
}

/** How a holder is named in formatAlreadyOpen: enough to find the process. */
export function formatHolder(record: { pid: number; host: string; since: string }): string {
  return `process ${record.pid} on host ${record.host} (open since ${record.since})`;
}

/** A path under the state (or the state's own) that is a symbolic link. */
export function formatSymlink(statePath: string, link: string): string {
  const what = link === statePath ? 'it is a symbolic link' : `${link} is a symbolic link`;
  const fix =
    link === statePath
      ? 'pass the directory it points to as the path, if you trust it'
      : 'remove the link; the state creates what it needs itself';
  return `Durable state at ${statePath} is refused: ${what}. The state never opens, creates or deletes anything through a link, as one someone else planted could point anywhere: ${fix}.`;
}

export function formatNotADirectory(statePath: string, path: string): string {
  const what = path === statePath ? 'it exists and is not a directory' : `${path} exists and is not a directory`;
  return `Durable state at ${statePath} cannot be opened: ${what}. Give the state a directory: an existing one, or a path that does not exist yet.`;
}

/** A directory or file of the state that another user owns, or that others can write. */
export function formatUnsafe(statePath: string, path: string, owner: number, mode: number, ownUid: number): string {
  const reason =
    owner !== ownUid
      ? `it is owned by uid ${owner}, not by this process's uid ${ownUid}`
      : 'users other than its owner can write it';
  const where = path === statePath ? '' : ` (${path})`;
  return (
    `Durable state at ${statePath} is refused${where}: ${reason} (owner uid ${owner}, mode ${formatMode(mode)}). ` +
    "Whoever else can write there could plant links or swap the state's files. Give it to this user alone " +
    `(\`chown ${ownUid} ${path}\` and \`chmod go-w ${path}\`), or give the state a path that does not exist yet, ` +
    'which it creates with mode 0700.'
  );
}

function formatMode(mode: number): string {
  return `0${(mode & 0o7777).toString(8).padStart(3, '0')}`;
}

export function formatLockToolMissing(path: string, reason: string): string {
  return formatPathUnusable(path, `the lock helper \`flock\` (util-linux) could not run: ${reason}`);
}

export function formatBackupTarget(target: string, reason: string): string {
  return `backup(): cannot write a copy to ${target}: ${reason}`;
}

export const BACKUP_TARGET_EXISTS = 'it already exists; name a path that does not';
export const BACKUP_TARGET_INSIDE = 'it is inside the state directory; name a path outside it';

export function formatClosed(what: string): string {
  return `Durable state is closed: ${what} is no longer usable`;
}

/** A transaction held for the output gate could not commit: its writes are gone, and the storage with them. */
export function formatCommitFailed(reason: string): string {
  return `Durable state could not commit its writes (${reason}); they are lost, and storage.sql is no longer usable`;
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
    'a binding must be a string, a number, null (or undefined), an ArrayBuffer or an ArrayBufferView'
  );
}

/**
 * Cloudflare's own texts (workerd's SqlStorage), kept word for word so a host's error handling
 * sees what it sees on Cloudflare. A statement before the last of a multi-statement query that
 * has parameters gets the binding-count text too: only the last statement is bound.
 */
export const WRONG_BINDING_COUNT = 'Wrong number of parameter bindings for SQL query.';
export const NO_STATEMENT = 'SQL code did not contain a statement';
export const TRANSACTION_STATEMENT =
  'To execute a transaction, please use the state.storage.transaction() or state.storage.transactionSync() APIs ' +
  'instead of the SQL BEGIN TRANSACTION or SAVEPOINT statements. The JavaScript API is safer because it will ' +
  "automatically roll back on exceptions, and because it interacts correctly with Durable Objects' automatic " +
  'atomic write coalescing.';

/** Cloudflare's cursor.one() texts. */
export const ONE_NO_ROWS = 'Expected exactly one result from SQL query, but got no results.';
export const ONE_MANY_ROWS = 'Expected exactly one result from SQL query, but got multiple results.';

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

/** workerd's text (a TypeError) for a call of a member the far side lacks. */
export function formatNotAMethod(member: string): string {
  return `The RPC receiver does not implement the method "${member}".`;
}

/** workerd's text (a DataCloneError) for an instance of a class that is not an RpcTarget. */
export function formatNotSerializable(typeName: string): string {
  return `Could not serialize object of type "${typeName}". This type does not support serialization.`;
}

/** V8's text (a DataCloneError), as workerd passes it on, for a symbol or an uncloneable built-in. */
export function formatCouldNotClone(description: string): string {
  return `${description} could not be cloned.`;
}

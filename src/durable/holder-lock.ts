/**
 * The single-writer lock on a state directory: an exclusive flock(2) on `<path>/LOCK`, held by a
 * util-linux `flock` child for as long as this process keeps the child's stdin open.
 *
 * Why a child: Node has no flock or fcntl API, and the WebAssembly SQLite's own lock is a
 * directory that a SIGKILLed holder leaves behind. A kernel lock is released when its holder dies,
 * whatever kills it: when this process dies its end of the pipe closes, the child's `cat` reads
 * EOF and exits, and the kernel drops the lock. On NFS, Linux maps flock to a byte-range lock the
 * server releases with the client's lease, so two hosts on one volume exclude each other too.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { formatAlreadyOpen, formatHolder, formatLockToolMissing } from './texts.js';

/** `flock`'s exit status when the lock is held elsewhere (its --conflict-exit-code). */
const CONFLICT_EXIT = 75;

/** What the child prints once it holds the lock. */
const ACQUIRED = 'locked\n';

const LOCK_FILE = 'LOCK';

export interface HolderLock {
  /** Ends the child and waits until the kernel has dropped the lock. */
  release(): Promise<void>;
}

interface HolderRecord {
  pid: number;
  host: string;
  since: string;
}

/** Takes the lock on `dir` or throws a text naming the path and, if it can be read, the holder. */
export async function acquireHolderLock(dir: string): Promise<HolderLock> {
  const lockPath = join(dir, LOCK_FILE);
  const child = spawn(
    'flock',
    [
      '--exclusive',
      '--nonblock',
      '--conflict-exit-code',
      String(CONFLICT_EXIT),
      lockPath,
      'sh',
      '-c',
      'echo locked; exec cat >/dev/null',
    ],
    { stdio: ['pipe', 'pipe', 'pipe'] },
  );
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const outcome = await new Promise<'acquired' | 'conflict' | Error>((resolve) => {
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      if (stdout === ACQUIRED) resolve('acquired');
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.once('error', (error) => resolve(error));
    child.once('exit', (code) => {
      if (code === CONFLICT_EXIT) resolve('conflict');
      else resolve(new Error(stderr.trim() || `exited with status ${code}`));
    });
  });
  if (outcome === 'conflict') throw new Error(formatAlreadyOpen(dir, readHolder(lockPath)));
  if (outcome instanceof Error) {
    child.kill('SIGKILL');
    throw new Error(formatLockToolMissing(dir, outcome.message));
  }
  writeFileSync(
    lockPath,
    `${JSON.stringify({ pid: process.pid, host: hostname(), since: new Date().toISOString() })}\n`,
  );
  // The lock must not keep the host's event loop alive: a host that exits without close() drops
  // the lock the same way a killed one does.
  unrefAll(child);
  let released: Promise<void> | undefined;
  return {
    release() {
      released ??= (async () => {
        // Waiting for the child's exit must hold the event loop, which the unref above let go.
        child.ref();
        child.stdin?.end();
        await exited;
      })();
      return released;
    },
  };
}

function unrefAll(child: ChildProcess): void {
  child.unref();
  for (const stream of [child.stdin, child.stdout, child.stderr]) {
    (stream as unknown as { unref?: () => void } | null)?.unref?.();
  }
}

function readHolder(lockPath: string): string | undefined {
  try {
    const record = JSON.parse(readFileSync(lockPath, 'utf8')) as HolderRecord;
    if (typeof record.pid !== 'number' || typeof record.host !== 'string') return undefined;
    return formatHolder(record);
  } catch {
    return undefined;
  }
}

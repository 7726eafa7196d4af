/**
 * Starts one `workerd serve` process that cannot outlive its host.
 *
 * workerd does not exit when its parent dies, so it runs under a tiny `sh` wrapper in a process
 * group of its own. The wrapper's background watcher blocks reading the wrapper's stdin, a pipe
 * whose only writer is this (host) process. When the host exits for any reason, SIGKILL included,
 * the kernel closes that pipe, the read returns end-of-file, and the watcher kills the whole group
 * (`kill -9 0`). The host ends a member the same way: one SIGKILL to the group.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import type { Readable } from 'node:stream';
import { ExecutorError } from '../../../protocol/errors.js';
import { isolateText } from '../../host/texts.js';
import type { MemberCommand } from '../confinement/command-line.js';
import type { MemberDirectory } from '../confinement/member-directory.js';
import { confinementText } from '../confinement/texts.js';
import { parseControlEvent } from './control-events.js';
import type { MemberCgroup } from './member-cgroup.js';
import { CONTROL_SOCKET } from './supervisor-config.js';

/**
 * $1 is the member's private directory (its config and sockets), the rest is the command that
 * runs workerd (workerd's own command line, or the chain that confines it). The watcher starts
 * first, so there is no moment in which workerd runs unwatched: it blocks reading the host's pipe
 * (through fd 4, because an asynchronous list's stdin is /dev/null) and does not hold the control
 * fd 3, which must reach end-of-file with workerd. workerd's stdin is /dev/null and its stdout
 * goes to stderr, so the wrapper's stdout carries one line: the command's pid (workerd's, or
 * bwrap's when confined). SIGPIPE is ignored from then on, so a host that dies before reading
 * that line cannot kill the wrapper mid-way. The watcher removes the directory before the kill
 * (nothing runs after it), and again if a starting workerd bound its socket in the meantime.
 * $2, when not empty, is the member's cgroup (member-cgroup.ts): the wrapper moves itself into it
 * before the command starts, so workerd is born there (the watcher stays outside).
 */
const WRAPPER = `dir=$1; cg=$2; shift 2
exec 4<&0
{ while read -r _; do :; done; rm -rf "$dir" || rm -rf "$dir"; kill -9 0; } <&4 3>&- >/dev/null 2>&1 &
exec 4<&-
if [ -n "$cg" ]; then echo $$ > "$cg/cgroup.procs" || exit 125; fi
"$@" </dev/null >&2 &
w=$!
exec 3>&-
trap '' PIPE
echo "$w"
wait "$w"
s=$?
rm -rf "$dir"
exit "$s"`;

const STDERR_TAIL_BYTES = 4096;

export interface ExitInfo {
  /** The wrapper's exit code: workerd's status, or 128 + signal when workerd died of a signal. */
  code: number | null;
  /** Set when the wrapper itself was killed (our group SIGKILL): a signal's name, such as 'SIGKILL'. */
  signal: string | null;
  /** The end of workerd's stderr. */
  stderr: string;
  /** The kernel ended it for passing its cgroup's `memory.max`. */
  oomKilled: boolean;
  /** V8 aborted it: an isolate's heap was exhausted. */
  heapExhausted: boolean;
}

/**
 * V8's own fatal text, which workerd writes as it aborts: the only sign the process gives of a
 * heap it exhausted. Read here, where its end is made data, and nowhere else.
 */
const V8_HEAP_EXHAUSTED = /heap out of memory|Reached heap limit/i;

export interface SpawnedWorkerd {
  /** workerd's own pid (for RSS), also when it runs confined under bwrap. */
  pid: number;
  /** Resolves once workerd and its wrapper are gone and stderr is drained. */
  exited: Promise<ExitInfo>;
  /** SIGKILLs the whole group. Idempotent. */
  kill(): void;
  /** Calls `listener` with every later line of workerd's output (its stdout and stderr). */
  onOutputLine(listener: (line: string) => void): void;
  /**
   * Counts workerd's output (UTF-8 bytes) from now on, and past `maxBytes` stops reading it, kills
   * the group and calls `onOver` once. A later call starts a new count.
   */
  capOutput(maxBytes: number, onOver: () => void): void;
}

export interface SpawnOptions {
  /** The config is written into it; the wrapper removes it all should the host die first. */
  directory: MemberDirectory;
  config: string;
  command: MemberCommand;
  startupTimeoutMs: number;
  /** The member's cgroup, when the executor has one delegated. */
  cgroup?: MemberCgroup | undefined;
}

/** A line longer than this is dropped: the host keeps no more of whatever reaches workerd's output. */
const MAX_LINE_CHARS = 65_536;

function lines(stream: Readable, onLine: (line: string) => void): void {
  let buffered = '';
  stream.setEncoding('utf8');
  stream.on('data', (chunk: string) => {
    buffered += chunk;
    let newline: number;
    while ((newline = buffered.indexOf('\n')) >= 0) {
      onLine(buffered.slice(0, newline));
      buffered = buffered.slice(newline + 1);
    }
    if (buffered.length > MAX_LINE_CHARS) buffered = '';
  });
}

function describeExit(info: ExitInfo): string {
  return isolateText.exitStatus(info.code, info.signal);
}

export function spawnWorkerd({
  directory,
  config,
  command,
  startupTimeoutMs,
  cgroup,
}: SpawnOptions): Promise<SpawnedWorkerd> {
  const removeConfig = () => rmSync(directory.configPath, { force: true });

  let child: ChildProcess;
  try {
    directory.writeConfig(config);
    child = spawn('/bin/sh', ['-c', WRAPPER, 'codemode-workerd', directory.path, cgroup?.path ?? '', ...command.argv], {
      stdio: ['pipe', 'pipe', 'pipe', 'pipe', ...command.extraFds],
      detached: true,
      // workerd needs nothing from the host's environment, and gets none of its secrets.
      env: command.env,
    });
  } catch (error) {
    removeConfig();
    cgroup?.remove();
    return Promise.reject(
      new ExecutorError('SANDBOX_UNAVAILABLE', isolateText.sandboxUnavailable(String(error)), { cause: error }),
    );
  } finally {
    command.release();
  }
  // A spawn that fails for want of descriptors (EMFILE, ENFILE) does not throw: Node gives back a
  // child without pid or pipes and emits 'error' on it a tick later, which unheard ends the host.
  const spawnFailed = new Promise<Error>((resolve) => child.once('error', resolve));
  if (child.pid === undefined) {
    removeConfig();
    cgroup?.remove();
    return spawnFailed.then((error) => {
      throw new ExecutorError('SANDBOX_UNAVAILABLE', isolateText.sandboxUnavailable(String(error)), { cause: error });
    });
  }

  let stderr = '';
  let outputListener: ((line: string) => void) | undefined;
  // The sandbox drops its console before it reaches workerd's output, and the host does not rely
  // on it: each run may write so much (capOutput), and past it nothing more is read.
  const output = { bytes: 0, cap: Number.POSITIVE_INFINITY, onOver: () => {} };
  child.stderr!.on('data', (chunk: string) => {
    output.bytes += Buffer.byteLength(chunk, 'utf8');
    if (output.bytes <= output.cap) return;
    child.stderr!.destroy();
    kill();
    output.onOver();
  });
  lines(child.stderr!, (line) => outputListener?.(line));
  child.stderr!.on('data', (chunk: string) => {
    stderr = (stderr + chunk).slice(-STDERR_TAIL_BYTES);
  });

  let killed = false;
  const kill = () => {
    if (killed) return;
    killed = true;
    try {
      if (child.pid !== undefined && child.exitCode === null && child.signalCode === null)
        process.kill(-child.pid, 'SIGKILL');
    } catch {
      // Already gone.
    }
    child.stdin?.destroy();
    // The watcher that would remove the directory dies with the group: it goes now, so a host
    // that dies before it sees the exit leaves none behind.
    directory.remove();
  };

  const exited = new Promise<ExitInfo>((resolve) => {
    child.once('close', (code, signal) => {
      removeConfig();
      // The watcher may still hold the group; end it with the rest.
      kill();
      const oomKilled = cgroup?.oomKilled() ?? false;
      cgroup?.remove();
      resolve({ code, signal, stderr: stderr.trim(), oomKilled, heapExhausted: V8_HEAP_EXHAUSTED.test(stderr) });
    });
  });
  child.once('error', () => kill());

  return new Promise<SpawnedWorkerd>((resolve, reject) => {
    let commandPid: number | undefined;
    let listening = false;
    let settled = false;
    const fail = (error: ExecutorError) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      kill();
      reject(error);
    };
    const timer = setTimeout(
      () =>
        fail(
          new ExecutorError(
            'SANDBOX_UNAVAILABLE',
            isolateText.sandboxUnavailable(isolateText.spawnTimedOut(startupTimeoutMs)),
          ),
        ),
      startupTimeoutMs,
    );
    const maybeReady = () => {
      if (settled || commandPid === undefined || !listening) return;
      // Confined, the wrapper started bwrap; workerd is its child, running by now.
      const pid = command.workerdPid(commandPid);
      if (pid === undefined) {
        fail(
          new ExecutorError(
            'SANDBOX_UNAVAILABLE',
            isolateText.sandboxUnavailable(confinementText.workerdPidUnknown(commandPid)),
          ),
        );
        return;
      }
      settled = true;
      clearTimeout(timer);
      // workerd has read its config; the wrapper deletes it too, should we die first.
      removeConfig();
      // An idle pool must not keep the host's event loop alive (see loop-hold.ts).
      child.unref();
      for (const stream of [child.stdin, child.stdout, child.stderr, child.stdio[3]]) {
        (stream as unknown as { unref?: () => void } | null)?.unref?.();
      }
      const capOutput = (maxBytes: number, onOver: () => void) => {
        output.bytes = 0;
        output.cap = maxBytes;
        output.onOver = () => {
          output.onOver = () => {};
          onOver();
        };
      };
      resolve({ pid, exited, kill, onOutputLine: (listener) => (outputListener = listener), capOutput });
    };
    lines(child.stdout!, (line) => {
      if (commandPid === undefined && /^\d+$/.test(line.trim())) {
        commandPid = Number(line.trim());
        maybeReady();
      }
    });
    lines(child.stdio[3] as Readable, (line) => {
      const event = parseControlEvent(line);
      if (event?.event === 'listen' && event.socket === CONTROL_SOCKET) {
        listening = true;
        maybeReady();
      }
    });
    void exited.then((info) =>
      fail(
        new ExecutorError(
          'SANDBOX_UNAVAILABLE',
          isolateText.sandboxUnavailable(isolateText.spawnExited(describeExit(info), info.stderr.slice(-600))),
        ),
      ),
    );
  });
}

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
import { randomUUID } from 'node:crypto';
import { rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { ExecutorError } from '../protocol/errors.js';
import { parseControlEvent } from './control-events.js';
import type { MemberCgroup } from './member-cgroup.js';
import { CONTROL_SOCKET } from './supervisor-config.js';
import { isolateText } from './texts.js';

/**
 * $1 is the config path, the rest is workerd's command line. The watcher starts first, so there is
 * no moment in which workerd runs unwatched: it blocks reading the host's pipe (through fd 4,
 * because an asynchronous list's stdin is /dev/null) and does not hold the control fd 3, which
 * must reach end-of-file with workerd. workerd's stdin is /dev/null and its stdout goes to
 * stderr, so the wrapper's stdout carries one line: workerd's pid. SIGPIPE is ignored from then
 * on, so a host that dies before reading that line cannot kill the wrapper mid-way. Where
 * coreutils' stdbuf exists, workerd's stdout is line-buffered through it (it execs workerd, so the
 * pid stays), so V8's GC trace reaches the host as it happens (heap-trace.ts). $2, when not
 * empty, is the member's cgroup (member-cgroup.ts): the wrapper moves itself into it before
 * workerd starts, so workerd is born there (the watcher stays outside).
 */
const WRAPPER = `cfg=$1; cg=$2; shift 2
exec 4<&0
{ while read -r _; do :; done; rm -f "$cfg"; kill -9 0; } <&4 3>&- >/dev/null 2>&1 &
exec 4<&-
if [ -n "$cg" ]; then echo $$ > "$cg/cgroup.procs" || exit 125; fi
if command -v stdbuf >/dev/null 2>&1; then stdbuf -oL "$@" </dev/null >&2 & else "$@" </dev/null >&2 & fi
w=$!
exec 3>&-
trap '' PIPE
echo "$w"
wait "$w"
s=$?
rm -f "$cfg"
exit "$s"`;

const STDERR_TAIL_BYTES = 4096;

export interface ExitInfo {
  /** The wrapper's exit code: workerd's status, or 128 + signal when workerd died of a signal. */
  code: number | null;
  /** Set when the wrapper itself was killed (our group SIGKILL). */
  signal: NodeJS.Signals | null;
  /** The end of workerd's stderr. */
  stderr: string;
  /** The kernel ended it for passing its cgroup's `memory.max`. */
  oomKilled: boolean;
}

export interface SpawnedWorkerd {
  /** workerd's own pid (for RSS). */
  pid: number;
  /** Calls `listener` with every later line of workerd's output (its stdout and stderr). */
  onOutputLine(listener: (line: string) => void): void;
  /** The port of the supervisor's socket on 127.0.0.1. */
  port: number;
  /** Resolves once workerd and its wrapper are gone and stderr is drained. */
  exited: Promise<ExitInfo>;
  /** SIGKILLs the whole group. Idempotent. */
  kill(): void;
}

export interface SpawnOptions {
  binary: string;
  config: string;
  startupTimeoutMs: number;
  /** The member's cgroup, when the executor has one delegated. */
  cgroup?: MemberCgroup | undefined;
}

/** A line longer than this is dropped: a sandbox can print to workerd's output (`console.info`). */
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
  if (info.signal !== null) return `killed by ${info.signal}`;
  if (info.code !== null && info.code > 128) return `signal ${info.code - 128}`;
  return `exit code ${String(info.code)}`;
}

export function spawnWorkerd({ binary, config, startupTimeoutMs, cgroup }: SpawnOptions): Promise<SpawnedWorkerd> {
  const configPath = join(tmpdir(), `codemode-isolate-${randomUUID()}.capnp`);
  writeFileSync(configPath, config, { mode: 0o600 });
  const removeConfig = () => rmSync(configPath, { force: true });

  let child: ChildProcess;
  try {
    child = spawn(
      '/bin/sh',
      [
        '-c',
        WRAPPER,
        'codemode-workerd',
        configPath,
        cgroup?.path ?? '',
        binary,
        'serve',
        '--experimental',
        configPath,
        '--control-fd=3',
      ],
      {
        stdio: ['pipe', 'pipe', 'pipe', 'pipe'],
        detached: true,
        // workerd needs nothing from the host's environment, and gets none of its secrets.
        env: {},
      },
    );
  } catch (error) {
    removeConfig();
    cgroup?.remove();
    return Promise.reject(
      new ExecutorError('SANDBOX_UNAVAILABLE', isolateText.sandboxUnavailable(String(error)), { cause: error }),
    );
  }

  let stderr = '';
  let outputListener: ((line: string) => void) | undefined;
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
  };

  const exited = new Promise<ExitInfo>((resolve) => {
    child.once('close', (code, signal) => {
      removeConfig();
      // The watcher may still hold the group; end it with the rest.
      kill();
      const oomKilled = cgroup?.oomKilled() ?? false;
      cgroup?.remove();
      resolve({ code, signal, stderr: stderr.trim(), oomKilled });
    });
  });
  child.once('error', () => kill());

  return new Promise<SpawnedWorkerd>((resolve, reject) => {
    let pid: number | undefined;
    let port: number | undefined;
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
      if (settled || pid === undefined || port === undefined) return;
      settled = true;
      clearTimeout(timer);
      // workerd has read its config; the wrapper deletes it too, should we die first.
      removeConfig();
      // An idle pool must not keep the host's event loop alive (see loop-hold.ts).
      child.unref();
      for (const stream of [child.stdin, child.stdout, child.stderr, child.stdio[3]]) {
        (stream as unknown as { unref?: () => void } | null)?.unref?.();
      }
      resolve({ pid, port, exited, kill, onOutputLine: (listener) => (outputListener = listener) });
    };
    lines(child.stdout!, (line) => {
      if (pid === undefined && /^\d+$/.test(line.trim())) {
        pid = Number(line.trim());
        maybeReady();
      }
    });
    lines(child.stdio[3] as Readable, (line) => {
      const event = parseControlEvent(line);
      if (event?.event === 'listen' && event.socket === CONTROL_SOCKET) {
        port = event.port;
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

export { describeExit };

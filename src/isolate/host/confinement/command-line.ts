/**
 * The command line that starts one member, confined or not. Confined, it is a chain of small
 * programs from the OS, each exec'ing the next, so the wrapper's pid stays the chain's:
 *
 *   prlimit (rlimits) → setpriv (an unprivileged uid, when the host is root) → bwrap → workerd
 *
 * bwrap gives the namespaces and the filesystem view, sets no_new_privs, drops every capability,
 * loads the seccomp filter and executes workerd as the namespace's pid 1 (`--as-pid-1`), so
 * workerd is bwrap's only child and dies with it (`--die-with-parent`). It stays in the wrapper's
 * process group, so the wrapper's watcher and the host's group SIGKILL reach it as before.
 */
import { closeSync, openSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { findLineBuffering, type LineBuffering } from './line-buffering.js';
import type { MemberOwner } from './member-owner.js';
import { buildSeccompProgram } from './seccomp-filter.js';
import type { SeccompArch } from './syscalls.js';

/**
 * Rlimits of a confined member. workerd holds about 20 descriptors idle and one more per relayed
 * fetch in flight (measured: 100 concurrent fetches, 116 descriptors), so 1024 lets a run hold
 * about 1000 fetches open at once, where the host's own limit would allow a flood. No core dumps,
 * and no file may grow past 0 bytes (workerd writes none; its sockets and pipes are not files).
 */
const MEMBER_RLIMITS = { nofile: 1024, core: 0, fsize: 0 } as const;

/** `nobody` on Debian and most distributions: the uid a member runs as when the host is root. */
export const UNPRIVILEGED_ID = 65534;

/** Where the binary appears in the view: the project tree it lives in stays out. */
const BINARY_IN_VIEW = '/workerd';

/** Where a confined member sees the library that line-buffers its stdout (line-buffering.ts). */
export const LINE_BUFFERING_IN_VIEW = '/libstdbuf.so';

/** The device workerd opens (Cap'n Proto seeds its config parser from it). */
const URANDOM = '/dev/urandom';

/** The descriptor bwrap reads the seccomp program from. 3 is workerd's control fd, 4 the wrapper's. */
export const SECCOMP_FD = 5;

/** Everything a confined member's command line is built from; found once by detection. */
export interface ConfinementPlan {
  bwrap: string;
  bwrapVersion: string;
  /** bwrap ≥ 0.8 can forbid user namespaces inside the sandbox too. */
  disableUserns: boolean;
  prlimit: string;
  /** Present when the host runs as root: members drop to `owner` through it. */
  setpriv: string | undefined;
  owner: MemberOwner | undefined;
  binary: string;
  /** The loader and the libraries it opens for the binary, by the paths it opens them at. */
  linkedFiles: string[];
  /** The host's CA bundle (ca-bundle.ts), bound at its own path; absent where the host has none. */
  caBundle?: string | undefined;
  /**
   * Where the view binds a file from when the member's uid cannot read it where it is, by the
   * file's real path (reachable-files.ts): a link or a copy the host made.
   */
  staged: Record<string, string>;
  arch: SeccompArch;
}

/** workerd's own command line for a member. */
export function workerdServeArgs(configPath: string): string[] {
  return ['serve', '--experimental', configPath, '--control-fd=3'];
}

/**
 * The confined chain around `command` (workerd's arguments, binary excluded). `directory`, when
 * given, is bound read-write at its own path: the member's config and sockets. `lineBuffering`,
 * when given, is bound into the view and set in workerd's environment.
 */
export function confinedArgv(
  plan: ConfinementPlan,
  command: string[],
  directory: string | undefined,
  lineBuffering?: LineBuffering,
): string[] {
  const { nofile, core, fsize } = MEMBER_RLIMITS;
  const argv = [plan.prlimit, `--nofile=${nofile}:${nofile}`, `--core=${core}:${core}`, `--fsize=${fsize}:${fsize}`];
  if (plan.setpriv !== undefined && plan.owner !== undefined) {
    const { uid, gid } = plan.owner;
    argv.push('--', plan.setpriv, `--reuid=${uid}`, `--regid=${gid}`, '--clear-groups', '--inh-caps=-all');
  }
  argv.push('--', plan.bwrap);
  argv.push('--unshare-user', '--unshare-pid', '--unshare-ipc', '--unshare-net', '--unshare-uts', '--unshare-cgroup');
  if (plan.disableUserns) argv.push('--disable-userns');
  argv.push('--die-with-parent', '--as-pid-1', '--clearenv');
  const source = (file: string) => {
    const real = realpathSync(file);
    return plan.staged[real] ?? real;
  };
  argv.push('--ro-bind', source(plan.binary), BINARY_IN_VIEW);
  for (const file of plan.linkedFiles) argv.push('--ro-bind', source(file), file);
  if (plan.caBundle !== undefined) argv.push('--ro-bind', source(plan.caBundle), plan.caBundle);
  argv.push('--dev-bind', URANDOM, URANDOM);
  if (directory !== undefined) argv.push('--bind', directory, directory);
  if (lineBuffering !== undefined) {
    argv.push('--ro-bind', source(lineBuffering.library), LINE_BUFFERING_IN_VIEW);
    for (const [name, value] of Object.entries(lineBuffering.environment(LINE_BUFFERING_IN_VIEW))) {
      argv.push('--setenv', name, value);
    }
  }
  argv.push('--chdir', '/', '--seccomp', String(SECCOMP_FD), '--', BINARY_IN_VIEW, ...command);
  return argv;
}

/** The compiled seccomp program by architecture: the same for every member, so built once per process. */
const seccompPrograms = new Map<SeccompArch, Buffer>();

function seccompProgram(arch: SeccompArch): Buffer {
  let program = seccompPrograms.get(arch);
  if (program === undefined) {
    program = buildSeccompProgram(arch);
    seccompPrograms.set(arch, program);
  }
  return program;
}

/**
 * The seccomp program, open for reading at a descriptor to hand the child as its fd 5. The file
 * is unlinked at once, so only the descriptor holds it; `close` releases it once spawned.
 */
export function openSeccompProgram(plan: ConfinementPlan, directory: string): { fd: number; close(): void } {
  const path = join(directory, 'seccomp.bpf');
  writeFileSync(path, seccompProgram(plan.arch), { mode: 0o600 });
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } finally {
    rmSync(path, { force: true });
  }
  let open = true;
  return {
    fd,
    close() {
      if (open) closeSync(fd);
      open = false;
    },
  };
}

/**
 * workerd's host pid, given bwrap's (the pid the wrapper started): its only child, since workerd
 * runs as the namespace's pid 1 with no reaper between. Read once workerd is listening.
 */
function onlyChildOf(parent: number): number | undefined {
  try {
    const children = readFileSync(`/proc/${parent}/task/${parent}/children`, 'utf8').trim().split(/\s+/);
    if (children.length === 1 && /^\d+$/.test(children[0]!)) return Number(children[0]);
    if (children.length > 1) return undefined;
  } catch {
    // A kernel without CONFIG_PROC_CHILDREN: look for it.
  }
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // The parent pid is the second field after the parenthesized name.
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === parent) found.push(Number(entry));
    } catch {
      // Gone meanwhile.
    }
  }
  return found.length === 1 ? found[0] : undefined;
}

/** How the wrapper starts one member: the command it runs, and what the host hands it. */
export interface MemberCommand {
  /** The command the wrapper runs: workerd itself, or the chain that confines it. */
  argv: string[];
  /** The wrapper's environment, which the command inherits: nothing of the host's. */
  env: Record<string, string>;
  /** The child's descriptors from 4 on (the seccomp program at SECCOMP_FD). */
  extraFds: ('ignore' | number)[];
  /** workerd's own pid, given the pid of the command the wrapper started. */
  workerdPid(commandPid: number): number | undefined;
  /** Closes what the host held for the child; call once it is spawned (or failed to be). */
  release(): void;
}

/** A member's command: confined by `plan`, or (no plan) workerd as it is. */
export function memberCommand(
  plan: ConfinementPlan | undefined,
  binary: string,
  directory: string,
  configPath: string,
  lineBuffering: LineBuffering | undefined = findLineBuffering(),
): MemberCommand {
  if (plan === undefined) {
    return {
      argv: [binary, ...workerdServeArgs(configPath)],
      env: lineBuffering?.environment(lineBuffering.library) ?? {},
      extraFds: [],
      workerdPid: (pid) => pid,
      release() {},
    };
  }
  const program = openSeccompProgram(plan, directory);
  let argv: string[];
  try {
    argv = confinedArgv(plan, workerdServeArgs(configPath), directory, lineBuffering);
  } catch (error) {
    // A bound file gone since detection: no command, and nothing left open for it.
    program.close();
    throw error;
  }
  const extraFds: ('ignore' | number)[] = [];
  for (let fd = 4; fd < SECCOMP_FD; fd += 1) extraFds.push('ignore');
  extraFds.push(program.fd);
  return {
    argv,
    env: {},
    extraFds,
    workerdPid: onlyChildOf,
    release: () => program.close(),
  };
}

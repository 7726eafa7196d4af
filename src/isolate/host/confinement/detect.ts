/**
 * Whether this host can confine workerd, found once at run time and remembered: the tools on PATH
 * (bwrap, prlimit, and setpriv when the host runs as root), the kernel's switches for user
 * namespaces, and finally a trial: workerd itself, run through the very command line a member
 * gets (namespaces, view, uid, rlimits, seccomp filter), must print its version. What the checks
 * cannot see (a container's own seccomp policy, an AppArmor rule) the trial catches.
 */
import { spawnSync } from 'node:child_process';
import { accessSync, constants, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { ExecutorError } from '../../../protocol/errors.js';
import { messageOf } from '../../../protocol/message-of.js';
import { isolateText } from '../../host/texts.js';
import { systemCaBundle } from './ca-bundle.js';
import { type ConfinementPlan, confinedArgv, openSeccompProgram, SECCOMP_FD, UNPRIVILEGED_ID } from './command-line.js';
import { findLineBuffering } from './line-buffering.js';
import { linkedFiles } from './linked-libraries.js';
import { memberBase, stageUnreachable } from './reachable-files.js';
import type { SeccompArch } from './syscalls.js';
import { confinementText } from './texts.js';

export const CONFINEMENT_OPTIONS = ['auto', 'required', 'off'] as const;
export type ConfinementOption = (typeof CONFINEMENT_OPTIONS)[number];

/** The mode in force for an executor, and why. */
export type Confinement =
  | { requested: ConfinementOption; confined: true; reason: string; plan: ConfinementPlan }
  | { requested: ConfinementOption; confined: false; reason: string };

type Detection = { confined: true; reason: string; plan: ConfinementPlan } | { confined: false; reason: string };

/** What detection looks at; the defaults are this process's. Tests point it elsewhere. */
export interface DetectionHost {
  /** The directories searched for the tools (PATH). */
  searchPath: string;
  /** `process.platform`'s value; a plain string so the published declarations need no Node types. */
  platform: string;
  arch: string;
  /** The host's uid (undefined where there are none). */
  uid: number | undefined;
  /** Reads a kernel switch under /proc/sys, or undefined when this kernel has none. */
  sysctl(name: string): string | undefined;
}

function thisHost(): DetectionHost {
  return {
    searchPath: process.env.PATH ?? '',
    platform: process.platform,
    arch: process.arch,
    uid: process.getuid?.(),
    sysctl(name) {
      try {
        return readFileSync(`/proc/sys/${name.replaceAll('.', '/')}`, 'utf8').trim();
      } catch {
        return undefined;
      }
    },
  };
}

function findOnPath(tool: string, searchPath: string): string | undefined {
  for (const directory of searchPath.split(delimiter)) {
    if (directory === '') continue;
    const candidate = join(directory, tool);
    try {
      accessSync(candidate, constants.X_OK);
      if (statSync(candidate).isFile()) return candidate;
    } catch {
      // Not here.
    }
  }
  return undefined;
}

/** Kernel switches that turn unprivileged user namespaces off outright, and the value that does. */
const DISABLING_SYSCTLS: readonly (readonly [string, (value: string) => boolean])[] = [
  ['user.max_user_namespaces', (value) => value === '0'],
  // Debian's and Ubuntu's own switch, on the kernels that carry it.
  ['kernel.unprivileged_userns_clone', (value) => value === '0'],
];

/** Ubuntu's AppArmor switch: it may or may not stop bwrap (a profile can allow it), so only the trial can tell. */
const APPARMOR_SYSCTL = 'kernel.apparmor_restrict_unprivileged_userns';

function firstLine(text: string): string {
  return text.trim().split('\n')[0] ?? '';
}

/** Runs workerd --version through a member's command line; null when it worked, else what went wrong. */
function trial(plan: ConfinementPlan): string | null {
  const scratch = mkdtempSync(join(tmpdir(), 'codemode-confinement-trial-'));
  try {
    const program = openSeccompProgram(plan, scratch);
    try {
      const [command, ...args] = confinedArgv(plan, ['--version'], undefined);
      const stdio: ('ignore' | 'pipe' | number)[] = ['ignore', 'pipe', 'pipe'];
      while (stdio.length < SECCOMP_FD) stdio.push('ignore');
      stdio[SECCOMP_FD] = program.fd;
      const result = spawnSync(command!, args, { stdio, env: {}, encoding: 'utf8', timeout: 20_000 });
      if (result.error !== undefined) return messageOf(result.error);
      if (result.status === 0 && /workerd/i.test(result.stdout)) return null;
      const status = isolateText.exitStatus(result.status, result.signal);
      const said = firstLine(result.stderr) || firstLine(result.stdout);
      return said === '' ? status : `${status}: ${said}`;
    } finally {
      program.close();
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

function detect(host: DetectionHost, resolveBinary: () => string): Detection {
  if (host.platform !== 'linux') return { confined: false, reason: confinementText.notLinux(host.platform) };
  if (host.arch !== 'x64' && host.arch !== 'arm64')
    return { confined: false, reason: confinementText.archUnsupported(host.arch) };
  const arch: SeccompArch = host.arch;
  const asRoot = host.uid === 0;
  const tools: [tool: string, debianPackage: string][] = [
    ['bwrap', 'bubblewrap'],
    ['prlimit', 'util-linux'],
  ];
  if (asRoot) tools.push(['setpriv', 'util-linux']);
  const found = new Map<string, string>();
  for (const [tool, debianPackage] of tools) {
    const path = findOnPath(tool, host.searchPath);
    if (path === undefined)
      return { confined: false, reason: confinementText.toolMissing(tool, debianPackage, host.searchPath) };
    found.set(tool, path);
  }
  for (const [sysctl, disables] of DISABLING_SYSCTLS) {
    const value = host.sysctl(sysctl);
    if (value !== undefined && disables(value))
      return { confined: false, reason: confinementText.sysctlDisables(sysctl, value) };
  }
  let binary: string;
  try {
    binary = resolveBinary();
  } catch (error) {
    return { confined: false, reason: confinementText.binaryUnresolved(messageOf(error)) };
  }
  let libraries: string[];
  try {
    libraries = linkedFiles(binary);
  } catch (error) {
    return { confined: false, reason: confinementText.librariesUnresolved(messageOf(error)) };
  }
  const owner = asRoot ? { uid: UNPRIVILEGED_ID, gid: UNPRIVILEGED_ID } : undefined;
  const caBundle = systemCaBundle();
  let staged: Record<string, string>;
  try {
    memberBase(owner);
    const lineBuffering = findLineBuffering();
    const viewFiles = [
      binary,
      ...libraries,
      ...(caBundle === undefined ? [] : [caBundle]),
      ...(lineBuffering === undefined ? [] : [lineBuffering.library]),
    ];
    staged = stageUnreachable(viewFiles, owner);
  } catch (error) {
    return { confined: false, reason: confinementText.viewUnreachable(messageOf(error)) };
  }
  const bwrap = found.get('bwrap')!;
  const help = spawnSync(bwrap, ['--help'], { encoding: 'utf8', env: {}, timeout: 10_000 });
  const version = spawnSync(bwrap, ['--version'], { encoding: 'utf8', env: {}, timeout: 10_000 });
  const plan: ConfinementPlan = {
    bwrap,
    bwrapVersion: firstLine(version.stdout ?? '').replace(/^bubblewrap\s+/, '') || 'of unknown version',
    disableUserns: (help.stdout ?? '').includes('--disable-userns'),
    prlimit: found.get('prlimit')!,
    setpriv: found.get('setpriv'),
    owner,
    binary,
    linkedFiles: libraries,
    caBundle,
    staged,
    arch,
  };
  const failure = trial(plan);
  if (failure !== null) {
    const apparmor = host.sysctl(APPARMOR_SYSCTL);
    const hint = apparmor === '1' ? `; ${confinementText.sysctlDisables(APPARMOR_SYSCTL, apparmor)}` : '';
    return { confined: false, reason: confinementText.trialFailed(`${failure}${hint}`) };
  }
  return {
    confined: true,
    reason: confinementText.confinedBy(bwrap, plan.bwrapVersion, plan.owner?.uid),
    plan,
  };
}

/** The code of the process warning an unconfined 'auto' emits, once per process. */
export const UNCONFINED_WARNING_CODE = 'CODEMODE_UNCONFINED';
let warned = false;

/** A security layer that switches itself off says so: once, as a process warning naming the reason. */
function warnUnconfined(reason: string): void {
  if (warned) return;
  warned = true;
  process.emitWarning(confinementText.unconfinedWarning(reason), { code: UNCONFINED_WARNING_CODE });
}

/**
 * One detection per host setting, for the life of the process. The binary is not part of the key:
 * every executor of a process runs the one its workerd package resolves.
 */
const detections = new Map<string, Detection>();

/**
 * The mode for an executor: 'off' asks nothing; 'auto' and 'required' detect (once). 'required'
 * throws `SANDBOX_UNAVAILABLE`, naming what is missing, when the host cannot confine.
 */
export function resolveConfinement(
  requested: ConfinementOption,
  resolveBinary: () => string,
  host: DetectionHost = thisHost(),
): Confinement {
  if (requested === 'off') return { requested, confined: false, reason: confinementText.off };
  const key = JSON.stringify([host.searchPath, host.platform, host.arch, host.uid]);
  let detection = detections.get(key);
  if (detection === undefined) {
    detection = detect(host, resolveBinary);
    detections.set(key, detection);
  }
  if (!detection.confined && requested === 'required')
    throw new ExecutorError('SANDBOX_UNAVAILABLE', confinementText.required(detection.reason));
  if (!detection.confined) warnUnconfined(detection.reason);
  return { requested, ...detection };
}

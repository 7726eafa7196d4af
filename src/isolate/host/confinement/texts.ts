/**
 * Every text about confinement: why members are or are not confined (stats, the daemon's start-up
 * line), what a host is missing, and the refusal of `confinement: 'required'`.
 */

export const confinementText = {
  // --- what is missing (the reason of an unconfined 'auto', or of a refused 'required') ----------
  notLinux: (platform: string) => `confining workerd needs Linux namespaces, and this host runs ${platform}`,
  archUnsupported: (arch: string) => `the seccomp filter is built for x64 and arm64 only, and this host is ${arch}`,
  toolMissing: (tool: string, debianPackage: string, searchPath: string) =>
    `${tool} was not found on PATH (${searchPath || 'empty'}); install it (Debian: apt-get install ${debianPackage})`,
  sysctlDisables: (sysctl: string, value: string) =>
    `unprivileged user namespaces are disabled on this host (${sysctl} is ${value})`,
  binaryUnresolved: (detail: string) => `the workerd binary could not be resolved: ${detail}`,
  librariesUnresolved: (detail: string) => `the libraries workerd links could not be listed: ${detail}`,
  // The details of librariesUnresolved (linked-libraries.ts).
  notElf: (binary: string) => `${binary} is not an ELF file`,
  notElf64LittleEndian: (binary: string) => `${binary} is not a 64-bit little-endian ELF file`,
  noInterpreter: (binary: string) => `${binary} names no ELF interpreter (PT_INTERP)`,
  libraryMissing: (loaderLine: string) => `a library workerd links is missing: ${loaderLine}`,
  trialFailed: (detail: string) => `a trial run of workerd under bwrap failed: ${detail}`,
  viewUnreachable: (detail: string) => `the files of a member's view cannot be made reachable by its uid: ${detail}`,
  noSearchableTemporary: (candidates: readonly string[], uid: number) =>
    `none of the temporary directories ${candidates.join(', ')} can be searched by uid ${uid}; set TMPDIR to one it can`,
  stagedUnreadable: (file: string, staged: string, uid: number) =>
    `${file} was linked or copied to ${staged}, and uid ${uid} still cannot read it there`,

  /** The process warning of an 'auto' executor that runs unconfined (emitted once per process). */
  unconfinedWarning: (reason: string) =>
    `IsolateExecutor runs workerd unconfined (option confinement is 'auto'): ${reason}. Fix that to confine every member, set confinement to 'required' to refuse to run unconfined, or to 'off' to choose it.`,

  // --- why members are or are not confined ---------------------------------------------------------
  off: "confinement is 'off'",
  confinedBy: (bwrap: string, version: string, uid: number | undefined) =>
    `bwrap ${version} (${bwrap}) gives every member its own user, PID, IPC, mount, network, UTS and cgroup namespaces, a filesystem view of the workerd binary, its libraries and its private directory, a seccomp filter and rlimits; ${uid === undefined ? "it runs as the host's own uid" : `it runs as uid ${uid}, since the host runs as root`}`,

  /** The daemon's start-up line and the docs' wording: which mode is in force, and why. */
  summary: (requested: string, confined: boolean, reason: string) =>
    `workerd confinement ${confined ? 'on' : 'off'} (option '${requested}'): ${reason}`,

  /** The constructor's refusal under 'required' (SANDBOX_UNAVAILABLE). */
  required: (reason: string) =>
    `IsolateExecutor option confinement is 'required', but this host cannot confine workerd: ${reason}. Fix that, or set confinement to 'auto' to run unconfined where confinement is not possible.`,

  /** A confined member whose workerd could not be found under the bwrap the wrapper started. */
  workerdPidUnknown: (bwrapPid: number) =>
    `workerd's process could not be found under bwrap (pid ${bwrapPid}); it should be bwrap's only child.`,

  // --- a member's private directory ----------------------------------------------------------------
  socketPathTooLong: (path: string, max: number) =>
    `the Unix socket path ${path} is longer than the kernel's ${max} bytes; set TMPDIR to a shorter directory`,
} as const;

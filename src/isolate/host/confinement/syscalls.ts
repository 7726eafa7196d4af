/**
 * The Linux system call numbers the seccomp filter names, for the two architectures workerd ships
 * Linux binaries for. Numbers are kernel ABI and never change once assigned; these are from the
 * kernel's own tables (`asm/unistd_64.h` for x86-64, `asm-generic/unistd.h` for arm64). A call
 * an architecture does not have (x86's port I/O, `modify_ldt`, ...) is absent from its table.
 */

export type SeccompArch = 'x64' | 'arm64';

/** Calls workerd never makes, and that an escaped sandbox would want: the filter denies them. */
export const DENIED_SYSCALLS = [
  // Reading or steering other processes.
  'ptrace',
  'process_vm_readv',
  'process_vm_writev',
  'kcmp',
  'pidfd_getfd',
  // Mounts, the filesystem view, namespaces.
  'mount',
  'umount2',
  'pivot_root',
  'chroot',
  'open_tree',
  'move_mount',
  'fsopen',
  'fsconfig',
  'fsmount',
  'fspick',
  'mount_setattr',
  'unshare',
  'setns',
  'open_by_handle_at',
  'name_to_handle_at',
  // The kernel itself: modules, kexec, BPF, perf, keyrings, userfaultfd, io_uring.
  'kexec_load',
  'kexec_file_load',
  'reboot',
  'init_module',
  'finit_module',
  'delete_module',
  'bpf',
  'perf_event_open',
  'userfaultfd',
  'keyctl',
  'add_key',
  'request_key',
  'io_uring_setup',
  'io_uring_enter',
  'io_uring_register',
  'syslog',
  // Host-wide state.
  'swapon',
  'swapoff',
  'acct',
  'quotactl',
  'quotactl_fd',
  'settimeofday',
  'clock_settime',
  'clock_adjtime',
  'adjtimex',
  'vhangup',
  // x86 only: port I/O, the LDT, legacy calls.
  'iopl',
  'ioperm',
  'modify_ldt',
  'uselib',
  'sysfs',
] as const;

type DeniedSyscall = (typeof DENIED_SYSCALLS)[number];

/** Calls the filter inspects an argument of, rather than denying outright. */
type InspectedSyscall = 'clone' | 'clone3' | 'socket' | 'ioctl';

type SyscallTable = Readonly<Record<DeniedSyscall | InspectedSyscall, number | undefined>>;

const X64: SyscallTable = {
  ptrace: 101,
  process_vm_readv: 310,
  process_vm_writev: 311,
  kcmp: 312,
  pidfd_getfd: 438,
  mount: 165,
  umount2: 166,
  pivot_root: 155,
  chroot: 161,
  open_tree: 428,
  move_mount: 429,
  fsopen: 430,
  fsconfig: 431,
  fsmount: 432,
  fspick: 433,
  mount_setattr: 442,
  unshare: 272,
  setns: 308,
  open_by_handle_at: 304,
  name_to_handle_at: 303,
  kexec_load: 246,
  kexec_file_load: 320,
  reboot: 169,
  init_module: 175,
  finit_module: 313,
  delete_module: 176,
  bpf: 321,
  perf_event_open: 298,
  userfaultfd: 323,
  keyctl: 250,
  add_key: 248,
  request_key: 249,
  io_uring_setup: 425,
  io_uring_enter: 426,
  io_uring_register: 427,
  syslog: 103,
  swapon: 167,
  swapoff: 168,
  acct: 163,
  quotactl: 179,
  quotactl_fd: 443,
  settimeofday: 164,
  clock_settime: 227,
  clock_adjtime: 305,
  adjtimex: 159,
  vhangup: 153,
  iopl: 172,
  ioperm: 173,
  modify_ldt: 154,
  uselib: 134,
  sysfs: 139,
  clone: 56,
  clone3: 435,
  socket: 41,
  ioctl: 16,
};

const ARM64: SyscallTable = {
  ptrace: 117,
  process_vm_readv: 270,
  process_vm_writev: 271,
  kcmp: 272,
  pidfd_getfd: 438,
  mount: 40,
  umount2: 39,
  pivot_root: 41,
  chroot: 51,
  open_tree: 428,
  move_mount: 429,
  fsopen: 430,
  fsconfig: 431,
  fsmount: 432,
  fspick: 433,
  mount_setattr: 442,
  unshare: 97,
  setns: 268,
  open_by_handle_at: 265,
  name_to_handle_at: 264,
  kexec_load: 104,
  kexec_file_load: 294,
  reboot: 142,
  init_module: 105,
  finit_module: 273,
  delete_module: 106,
  bpf: 280,
  perf_event_open: 241,
  userfaultfd: 282,
  keyctl: 219,
  add_key: 217,
  request_key: 218,
  io_uring_setup: 425,
  io_uring_enter: 426,
  io_uring_register: 427,
  syslog: 116,
  swapon: 224,
  swapoff: 225,
  acct: 89,
  quotactl: 60,
  quotactl_fd: 443,
  settimeofday: 170,
  clock_settime: 112,
  clock_adjtime: 266,
  adjtimex: 171,
  vhangup: 58,
  iopl: undefined,
  ioperm: undefined,
  modify_ldt: undefined,
  uselib: undefined,
  sysfs: undefined,
  clone: 220,
  clone3: 435,
  socket: 198,
  ioctl: 29,
};

export interface ArchSyscalls {
  /** `AUDIT_ARCH_*`: the value of `seccomp_data.arch` for a call made in this architecture's ABI. */
  auditArch: number;
  /** x86-64 also accepts x32 ABI calls, numbered from this bit up under the same audit arch. */
  x32Bit: number | undefined;
  table: SyscallTable;
}

export const ARCH_SYSCALLS: Readonly<Record<SeccompArch, ArchSyscalls>> = {
  x64: { auditArch: 0xc000003e, x32Bit: 0x40000000, table: X64 },
  arm64: { auditArch: 0xc00000b7, x32Bit: undefined, table: ARM64 },
};

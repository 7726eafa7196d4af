/**
 * The seccomp filter of a confined member, assembled here as a classic BPF program: bubblewrap
 * loads it (`--seccomp FD`) after setting `no_new_privs`, just before it executes workerd. No
 * native addon and no libseccomp: the program is an array of 8-byte `sock_filter` instructions
 * the kernel checks on every system call against `struct seccomp_data`.
 *
 * The policy is a deny list, because workerd's own set of calls is not ours to freeze:
 * - a call made under another ABI than the binary's (its audit arch, or x32 on x86-64) kills
 *   the process, so no number below can be reached through a second table;
 * - the calls of DENIED_SYSCALLS fail with EPERM;
 * - `clone` creating any namespace fails with EPERM; `clone3`, whose flags sit in memory the
 *   filter cannot read, fails with ENOSYS, so the C library falls back to `clone`;
 * - `socket` is limited to AF_UNIX, AF_INET and AF_INET6 (EAFNOSUPPORT otherwise: no netlink,
 *   packet or other families);
 * - `ioctl` TIOCSTI and TIOCLINUX (pushing input into a terminal) fail with EPERM;
 * - everything else is allowed.
 */
import { ARCH_SYSCALLS, DENIED_SYSCALLS, type SeccompArch } from './syscalls.js';

// Classic BPF opcodes (linux/bpf_common.h) and seccomp return values (linux/seccomp.h).
const BPF_LD_W_ABS = 0x20;
const BPF_JMP_JEQ_K = 0x15;
const BPF_JMP_JGE_K = 0x35;
const BPF_JMP_JSET_K = 0x45;
const BPF_RET_K = 0x06;
const SECCOMP_RET_KILL_PROCESS = 0x80000000;
const SECCOMP_RET_ERRNO = 0x00050000;
const SECCOMP_RET_ALLOW = 0x7fff0000;

const EPERM = 1;
const ENOSYS = 38;
const EAFNOSUPPORT = 97;

// Offsets in struct seccomp_data: nr, arch, then the instruction pointer and six 64-bit arguments.
// Both architectures are little-endian, so an argument's low 32 bits come first.
const DATA_NR = 0;
const DATA_ARCH = 4;
const dataArgLow = (index: number) => 16 + 8 * index;

/** Every CLONE_NEW* flag clone() takes: NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET. */
const CLONE_NEW_NAMESPACES = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000;
const AF_UNIX = 1;
const AF_INET = 2;
const AF_INET6 = 10;
const TIOCSTI = 0x5412;
const TIOCLINUX = 0x541c;

type Label = 'allow' | 'deny' | 'nosys' | 'kill' | 'clone' | 'socket' | 'ioctl';

/**
 * One instruction. A jump names its targets by label (an absent target is the next instruction);
 * they become relative offsets once the program is laid out. BPF jumps only go forward.
 */
type Instruction =
  | { op: 'load'; offset: number }
  | { op: 'jeq' | 'jge' | 'jset'; k: number; jt?: Label; jf?: Label }
  | { op: 'ret'; k: number }
  | { op: 'label'; name: Label };

const JUMP_CODES = { jeq: BPF_JMP_JEQ_K, jge: BPF_JMP_JGE_K, jset: BPF_JMP_JSET_K } as const;

function policy(arch: SeccompArch): Instruction[] {
  const { auditArch, x32Bit, table } = ARCH_SYSCALLS[arch];
  const allow: Instruction = { op: 'ret', k: SECCOMP_RET_ALLOW };
  const denied = DENIED_SYSCALLS.map((name) => table[name]).filter((nr) => nr !== undefined);
  const inspect = (nr: number | undefined, target: Label): Instruction[] =>
    nr === undefined ? [] : [{ op: 'jeq', k: nr, jt: target }];
  return [
    { op: 'load', offset: DATA_ARCH },
    { op: 'jeq', k: auditArch, jf: 'kill' },
    { op: 'load', offset: DATA_NR },
    ...(x32Bit === undefined ? [] : [{ op: 'jge', k: x32Bit, jt: 'kill' } as const]),
    ...denied.map((nr): Instruction => ({ op: 'jeq', k: nr, jt: 'deny' })),
    ...inspect(table.clone, 'clone'),
    ...inspect(table.clone3, 'nosys'),
    ...inspect(table.socket, 'socket'),
    ...inspect(table.ioctl, 'ioctl'),
    allow,
    { op: 'label', name: 'clone' },
    { op: 'load', offset: dataArgLow(0) },
    { op: 'jset', k: CLONE_NEW_NAMESPACES, jt: 'deny' },
    allow,
    { op: 'label', name: 'socket' },
    { op: 'load', offset: dataArgLow(0) },
    { op: 'jeq', k: AF_UNIX, jt: 'allow' },
    { op: 'jeq', k: AF_INET, jt: 'allow' },
    { op: 'jeq', k: AF_INET6, jt: 'allow' },
    { op: 'ret', k: SECCOMP_RET_ERRNO | EAFNOSUPPORT },
    { op: 'label', name: 'ioctl' },
    { op: 'load', offset: dataArgLow(1) },
    { op: 'jeq', k: TIOCSTI, jt: 'deny' },
    { op: 'jeq', k: TIOCLINUX, jt: 'deny' },
    { op: 'label', name: 'allow' },
    allow,
    { op: 'label', name: 'nosys' },
    { op: 'ret', k: SECCOMP_RET_ERRNO | ENOSYS },
    { op: 'label', name: 'deny' },
    { op: 'ret', k: SECCOMP_RET_ERRNO | EPERM },
    { op: 'label', name: 'kill' },
    { op: 'ret', k: SECCOMP_RET_KILL_PROCESS },
  ];
}

const SOCK_FILTER_BYTES = 8;

/** The compiled program: `struct sock_filter[]` in the machine's (little-endian) byte order. */
export function buildSeccompProgram(arch: SeccompArch): Buffer {
  const source = policy(arch);
  const at = new Map<Label, number>();
  const code: Exclude<Instruction, { op: 'label' }>[] = [];
  for (const instruction of source) {
    if (instruction.op === 'label') at.set(instruction.name, code.length);
    else code.push(instruction);
  }
  const program = Buffer.alloc(code.length * SOCK_FILTER_BYTES);
  const offsetTo = (from: number, label: Label | undefined): number => {
    if (label === undefined) return 0;
    const target = at.get(label);
    const offset = target === undefined ? -1 : target - from - 1;
    // Forward only, within a byte: the kernel's verifier would refuse anything else.
    if (offset < 0 || offset > 255) throw new Error(`seccomp jump to ${label} out of range (${offset})`);
    return offset;
  };
  code.forEach((instruction, index) => {
    const base = index * SOCK_FILTER_BYTES;
    let opcode: number;
    let jt = 0;
    let jf = 0;
    let k: number;
    if (instruction.op === 'load') {
      opcode = BPF_LD_W_ABS;
      k = instruction.offset;
    } else if (instruction.op === 'ret') {
      opcode = BPF_RET_K;
      k = instruction.k;
    } else {
      opcode = JUMP_CODES[instruction.op];
      jt = offsetTo(index, instruction.jt);
      jf = offsetTo(index, instruction.jf);
      k = instruction.k;
    }
    program.writeUInt16LE(opcode, base);
    program.writeUInt8(jt, base + 2);
    program.writeUInt8(jf, base + 3);
    program.writeUInt32LE(k >>> 0, base + 4);
  });
  return program;
}

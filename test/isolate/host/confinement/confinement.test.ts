/**
 * Confinement observed on real workerd, from outside the member (its /proc entries) and from
 * inside its namespaces (a connection attempt made in its network namespace, as code that escaped
 * V8 would make it). The expectations come from the OS (ldd, the host's own /proc), not from the
 * executor's own plan.
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import {
  chmodSync,
  closeSync,
  copyFileSync,
  existsSync,
  linkSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemCaBundle } from '../../../../src/isolate/host/confinement/ca-bundle.js';
import { LINE_BUFFERING_IN_VIEW } from '../../../../src/isolate/host/confinement/command-line.js';
import { resolveConfinement, UNCONFINED_WARNING_CODE } from '../../../../src/isolate/host/confinement/detect.js';
import { findLineBuffering } from '../../../../src/isolate/host/confinement/line-buffering.js';
import { buildSeccompProgram } from '../../../../src/isolate/host/confinement/seccomp-filter.js';
import { confinementText } from '../../../../src/isolate/host/confinement/texts.js';
import { MemberProcess } from '../../../../src/isolate/host/member/member-process.js';
import { resolveWorkerdBinary } from '../../../../src/isolate/host/member/workerd-binary.js';
import { DEFAULT_LIMITS } from '../../../../src/isolate/host/options.js';
import { OutboundServer } from '../../../../src/isolate/host/relay/outbound-server.js';
import { isolateText } from '../../../../src/isolate/host/texts.js';
import { IsolateExecutor } from '../../../../src/isolate/index.js';
import { isAlive, waitFor } from '../../../support/processes.js';

const asRoot = process.getuid?.() === 0;

function status(pid: number): Map<string, string> {
  const fields = new Map<string, string>();
  for (const line of readFileSync(`/proc/${pid}/status`, 'utf8').split('\n')) {
    const colon = line.indexOf(':');
    if (colon > 0) fields.set(line.slice(0, colon), line.slice(colon + 1).trim());
  }
  return fields;
}

function namespaceOf(pid: number | 'self', kind: string): string {
  return readlinkSync(`/proc/${pid}/ns/${kind}`);
}

/** A member's private directory, from its command line (its config lives there). */
function directoryOf(pid: number): string {
  const config = readFileSync(`/proc/${pid}/cmdline`, 'utf8')
    .split('\0')
    .find((arg) => arg.endsWith('.capnp'));
  return dirname(config!);
}

/** Every path under a root, as seen from it ("/x/y"), directories included. */
function walk(root: string, under = ''): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(join(root, under), { withFileTypes: true })) {
    const path = `${under}/${entry.name}`;
    found.push(path);
    if (entry.isDirectory()) found.push(...walk(root, path));
  }
  return found;
}

/** The files `ldd` says the binary loads, by the paths the loader opens (the vDSO has none). */
function lddFiles(binary: string): string[] {
  const files: string[] = [];
  for (const line of execFileSync('ldd', [binary], { encoding: 'utf8' }).split('\n')) {
    const match = /(?:=>\s*)?(\/\S+)\s+\(0x/.exec(line);
    if (match) files.push(match[1]!);
  }
  return files;
}

/** A path and every directory above it, "/" excluded. */
function withParents(path: string): string[] {
  const all: string[] = [];
  for (let at = path; at !== '/'; at = dirname(at)) all.push(at);
  return all;
}

/** The socket inodes a process holds open. */
function socketInodes(pid: number): Set<string> {
  const inodes = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const match = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (match) inodes.add(match[1]!);
    } catch {
      // Closed meanwhile.
    }
  }
  return inodes;
}

/** The inodes of a socket table under /proc/net (tcp, tcp6: the inode is the tenth column; unix: the seventh). */
function tableInodes(table: string, column: number, pid: number | 'self' = 'self'): Set<string> {
  const lines = readFileSync(`/proc/${pid}/net/${table}`, 'utf8').trim().split('\n').slice(1);
  return new Set(lines.map((line) => line.trim().split(/\s+/)[column]!));
}

/** Runs a command in a process's network namespace (as root: the host owns every namespace). */
function inNetworkOf(pid: number, command: string[]): { status: number | null; stdout: string; stderr: string } {
  const enter = asRoot
    ? [`--net=/proc/${pid}/ns/net`]
    : ['--preserve-credentials', `--user=/proc/${pid}/ns/user`, `--net=/proc/${pid}/ns/net`];
  const result = spawnSync('nsenter', [...enter, '--', ...command], { encoding: 'utf8', timeout: 20_000 });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** A Node one-liner that tries a TCP connection and prints how it went. */
function connectProbe(port: number): string[] {
  return [
    process.execPath,
    '-e',
    `const s = require('node:net').connect(${port}, '127.0.0.1');
     s.on('connect', () => { console.log('connected'); s.destroy(); });
     s.on('error', (e) => console.log(e.code));`,
  ];
}

describe('a confined member', () => {
  let executor: IsolateExecutor;
  let pid: number;

  beforeAll(async () => {
    executor = new IsolateExecutor({ confinement: 'required', pool: { maxWorkers: 1, spare: 0 } });
    expect(await executor.execute({ code: 'async () => "up"' })).toEqual({ result: 'up', logs: [] });
    pid = executor.stats().members[0]!.pid;
  });
  afterAll(() => executor.dispose());

  it('says in stats that it is confined, and why', () => {
    const { confinement } = executor.stats();
    expect(confinement).toMatchObject({ requested: 'required', confined: true });
    expect(confinement.reason).toMatch(/^bwrap \S+ \(\/.+bwrap\)/);
    expect(confinement.summary).toBe(confinementText.summary('required', true, confinement.reason));
  });

  it('runs in its own user, PID, IPC, mount and network namespaces', () => {
    for (const kind of ['user', 'pid', 'ipc', 'mnt', 'net', 'uts']) {
      expect(namespaceOf(pid, kind), kind).not.toBe(namespaceOf('self', kind));
    }
  });

  it('runs as an unprivileged uid under a root host, with no_new_privs, no capabilities and a seccomp filter', () => {
    const fields = status(pid);
    const uids = fields.get('Uid')!.split(/\s+/).map(Number);
    expect(uids).toHaveLength(4);
    if (asRoot) for (const uid of uids) expect(uid).not.toBe(0);
    else for (const uid of uids) expect(uid).toBe(process.getuid!());
    expect(fields.get('NoNewPrivs')).toBe('1');
    expect(fields.get('CapEff')).toBe('0000000000000000');
    expect(fields.get('CapPrm')).toBe('0000000000000000');
    // 2: filter mode.
    expect(fields.get('Seccomp')).toBe('2');
  });

  it('has tight rlimits: open files, no core dumps, no file growth', () => {
    const limits = readFileSync(`/proc/${pid}/limits`, 'utf8');
    const limit = (name: string) => new RegExp(`^${name}\\s+(\\S+)\\s+(\\S+)`, 'm').exec(limits)?.slice(1);
    expect(limit('Max open files')).toEqual(['1024', '1024']);
    expect(limit('Max core file size')).toEqual(['0', '0']);
    expect(limit('Max file size')).toEqual(['0', '0']);
  });

  it("sees only the binary, the libraries it links, the host's CA bundle, /dev/urandom and its private directory", () => {
    const view = walk(`/proc/${pid}/root`);
    const directory = directoryOf(pid);
    const files = ['/workerd', ...lddFiles(resolveWorkerdBinary()), '/dev/urandom'];
    // And the library that line-buffers its stdout for the heap trace, where coreutils has one.
    if (findLineBuffering() !== undefined) files.push(LINE_BUFFERING_IN_VIEW);
    // And the CA bundle, which newer workerd releases load as they start (ca-bundle.ts).
    const caBundle = systemCaBundle();
    if (caBundle !== undefined) files.push(caBundle);
    // The config is deleted once workerd listens: only the two sockets remain in the directory.
    const inDirectory = [join(directory, 'control.sock'), join(directory, 'relay.sock')];
    const expected = new Set([...files, ...inDirectory].flatMap(withParents));
    expect(new Set(view)).toEqual(expected);
    for (const absent of ['/etc/passwd', '/etc/shadow', '/home', '/proc', '/usr', '/root', process.cwd()]) {
      expect(view, absent).not.toContain(absent);
    }
  });

  it('has no network but its own loopback, and opens no TCP socket', () => {
    const interfaces = inNetworkOf(pid, ['cat', '/proc/net/dev']);
    expect(interfaces.status).toBe(0);
    const names = interfaces.stdout
      .split('\n')
      .slice(2)
      .map((line) => line.split(':')[0]!.trim())
      .filter((name) => name !== '');
    expect(names).toEqual(['lo']);
    // Every socket it holds is a Unix socket: its own, or a pipe to the host (the host's namespace).
    const sockets = socketInodes(pid);
    expect(sockets.size).toBeGreaterThan(0);
    const tables = (table: string, column: number) => [
      ...tableInodes(table, column, pid),
      ...tableInodes(table, column),
    ];
    const tcp = new Set([...tables('tcp', 9), ...tables('tcp6', 9)]);
    const unix = new Set(tables('unix', 6));
    for (const inode of sockets) {
      expect(tcp.has(inode), `socket ${inode} is TCP`).toBe(false);
      expect(unix.has(inode), `socket ${inode} is a Unix socket`).toBe(true);
    }
  });
});

describe('from inside a confined member, a listener on the host loopback', () => {
  let listener: Server;
  let port: number;
  const seen: { path: string; viaHost: boolean }[] = [];
  let executor: IsolateExecutor;

  beforeAll(async () => {
    listener = createServer((request, response) => {
      seen.push({ path: request.url ?? '', viaHost: request.headers['x-via-host-function'] === 'yes' });
      response.end(`listener answered ${request.url}`);
    });
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
    port = (listener.address() as AddressInfo).port;
    // The outbound function forwards every sandbox fetch to the listener, marking it.
    executor = new IsolateExecutor({
      confinement: 'required',
      pool: { maxWorkers: 1, spare: 0 },
      outbound: (request) =>
        fetch(`http://127.0.0.1:${port}${new URL(request.url).pathname}`, {
          headers: { 'x-via-host-function': 'yes' },
        }),
    });
  });
  afterAll(async () => {
    await executor.dispose();
    await new Promise<void>((resolve) => listener.close(() => resolve()));
  });

  it('is reached only through the host function, and refused to a direct connection', async () => {
    const outcome = await executor.execute({
      code: `async () => (await fetch("http://127.0.0.1:${port}/from-sandbox")).text()`,
    });
    expect(outcome).toEqual({ result: 'listener answered /from-sandbox', logs: [] });
    expect(seen).toEqual([{ path: '/from-sandbox', viaHost: true }]);

    const pid = executor.stats().members[0]!.pid;
    // The probe connects from the host's namespace (so it can fail), then from the member's.
    expect(spawnSync(connectProbe(port)[0]!, connectProbe(port).slice(1), { encoding: 'utf8' }).stdout.trim()).toBe(
      'connected',
    );
    const inside = inNetworkOf(pid, connectProbe(port));
    expect(inside.stderr).toBe('');
    expect(inside.stdout.trim()).toBe('ECONNREFUSED');
    // Only the host probe reached the listener beyond the relayed fetch, and it sent no request.
    expect(seen).toHaveLength(1);
  });
});

describe("confinement 'off'", () => {
  it('runs workerd in the host namespaces, still on Unix sockets only', async () => {
    const executor = new IsolateExecutor({ confinement: 'off', pool: { maxWorkers: 1, spare: 0 } });
    try {
      expect(await executor.execute({ code: 'async () => 1 + 1' })).toEqual({ result: 2, logs: [] });
      expect(executor.stats().confinement).toEqual({
        requested: 'off',
        confined: false,
        reason: confinementText.off,
        summary: confinementText.summary('off', false, confinementText.off),
      });
      const pid = executor.stats().members[0]!.pid;
      for (const kind of ['user', 'net', 'mnt']) expect(namespaceOf(pid, kind)).toBe(namespaceOf('self', kind));
      const tcp = new Set([...tableInodes('tcp', 9), ...tableInodes('tcp6', 9)]);
      const unix = tableInodes('unix', 6);
      const sockets = socketInodes(pid);
      expect(sockets.size).toBeGreaterThan(0);
      for (const inode of sockets) {
        expect(tcp.has(inode), `socket ${inode} is TCP`).toBe(false);
        expect(unix.has(inode), `socket ${inode} is a Unix socket`).toBe(true);
      }
    } finally {
      await executor.dispose();
    }
  });
});

describe('detection', () => {
  /** Constructs with PATH pointing at a directory without the tools: detection finds none. */
  function withoutTools<T>(construct: () => T): T {
    const saved = process.env.PATH;
    process.env.PATH = join(tmpdir(), 'codemode-no-tools-here');
    try {
      return construct();
    } finally {
      process.env.PATH = saved;
    }
  }

  it("refuses to construct under 'required' when bwrap is missing, naming it", () => {
    const missing = join(tmpdir(), 'codemode-no-tools-here');
    let thrown: unknown;
    try {
      withoutTools(() => new IsolateExecutor({ confinement: 'required' }));
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toMatchObject({
      code: 'SANDBOX_UNAVAILABLE',
      message: confinementText.required(confinementText.toolMissing('bwrap', 'bubblewrap', missing)),
    });
    expect((thrown as Error).message).toContain('bwrap was not found on PATH');
  });

  it("runs unconfined under 'auto' when bwrap is missing, and says why", async () => {
    const executor = withoutTools(() => new IsolateExecutor({ pool: { maxWorkers: 1, spare: 0 } }));
    try {
      const reason = confinementText.toolMissing('bwrap', 'bubblewrap', join(tmpdir(), 'codemode-no-tools-here'));
      expect(executor.stats().confinement).toEqual({
        requested: 'auto',
        confined: false,
        reason,
        summary: confinementText.summary('auto', false, reason),
      });
      expect(await executor.execute({ code: 'async () => "unconfined"' })).toEqual({ result: 'unconfined', logs: [] });
      const pid = executor.stats().members[0]!.pid;
      expect(namespaceOf(pid, 'net')).toBe(namespaceOf('self', 'net'));
    } finally {
      await executor.dispose();
    }
  });

  it('refuses an unknown mode, naming the valid ones', () => {
    expect(() => new IsolateExecutor({ confinement: 'yes' as never })).toThrow(
      expect.objectContaining({
        code: 'INVALID_REQUEST',
        message: isolateText.optionInvalid('confinement', "one of 'auto', 'required', 'off'", '"yes"'),
      }),
    );
  });
});

/**
 * A classic BPF interpreter for the instructions a seccomp filter may use (loads of the
 * seccomp_data words, jumps, returns): enough to run the arm64 program on an x64 machine.
 */
function runFilter(program: Buffer, data: { nr: number; arch: number; args?: number[] }): number {
  const word = (offset: number): number => {
    if (offset === 0) return data.nr >>> 0;
    if (offset === 4) return data.arch >>> 0;
    const arg = (offset - 16) / 8;
    return Number.isInteger(arg) ? (data.args?.[arg] ?? 0) >>> 0 : 0;
  };
  let accumulator = 0;
  for (let pc = 0; pc * 8 < program.length; pc++) {
    const code = program.readUInt16LE(pc * 8);
    const jt = program.readUInt8(pc * 8 + 2);
    const jf = program.readUInt8(pc * 8 + 3);
    const k = program.readUInt32LE(pc * 8 + 4);
    if (code === 0x20) accumulator = word(k);
    else if (code === 0x06) return k;
    else if (code === 0x15) pc += accumulator === k ? jt : jf;
    else if (code === 0x35) pc += accumulator >= k ? jt : jf;
    else if (code === 0x45) pc += (accumulator & k) !== 0 ? jt : jf;
    else throw new Error(`unexpected BPF opcode 0x${code.toString(16)}`);
  }
  throw new Error('the program fell off its end');
}

describe('the seccomp program, run by an interpreter', () => {
  // From the kernel's uapi headers (audit.h, seccomp.h, errno.h) and the two syscall tables.
  const ALLOW = 0x7fff0000;
  const KILL_PROCESS = 0x80000000;
  const EPERM = 0x00050000 | 1;
  const ENOSYS = 0x00050000 | 38;
  const EAFNOSUPPORT = 0x00050000 | 97;
  const CLONE_NEWUSER = 0x10000000;
  const SIGCHLD = 17;
  const AF_NETLINK = 16;
  const AF_UNIX = 1;
  const arches = {
    x64: {
      arch: 0xc000003e,
      foreign: 0x40000003, // i386
      nr: { read: 0, write: 1, ptrace: 101, mount: 165, unshare: 272, bpf: 321, clone: 56, clone3: 435, socket: 41 },
    },
    arm64: {
      arch: 0xc00000b7,
      foreign: 0x40000028, // 32-bit ARM
      nr: { read: 63, write: 64, ptrace: 117, mount: 40, unshare: 97, bpf: 280, clone: 220, clone3: 435, socket: 198 },
    },
  } as const;

  for (const [name, { arch, foreign, nr }] of Object.entries(arches)) {
    it(`${name}: denies what it lists, allows the rest, and kills a foreign ABI`, () => {
      const program = buildSeccompProgram(name as keyof typeof arches);
      const run = (call: number, args?: number[], callArch: number = arch) =>
        runFilter(program, { nr: call, arch: callArch, ...(args ? { args } : {}) });
      expect(run(nr.read)).toBe(ALLOW);
      expect(run(nr.write)).toBe(ALLOW);
      for (const denied of [nr.ptrace, nr.mount, nr.unshare, nr.bpf]) expect(run(denied)).toBe(EPERM);
      expect(run(nr.clone, [SIGCHLD])).toBe(ALLOW);
      expect(run(nr.clone, [CLONE_NEWUSER | SIGCHLD])).toBe(EPERM);
      expect(run(nr.clone3)).toBe(ENOSYS);
      expect(run(nr.socket, [AF_UNIX])).toBe(ALLOW);
      expect(run(nr.socket, [AF_NETLINK])).toBe(EAFNOSUPPORT);
      expect(run(nr.read, [], foreign)).toBe(KILL_PROCESS);
      if (name === 'x64') expect(run(0x40000000 | nr.read)).toBe(KILL_PROCESS); // x32
    });
  }
});

describe('the seccomp filter, loaded by the kernel', () => {
  const scratch = join(tmpdir(), `codemode-seccomp-test-${process.pid}`);
  beforeAll(() => writeFileSync(scratch, buildSeccompProgram(process.arch === 'arm64' ? 'arm64' : 'x64')));
  afterAll(() => rmSync(scratch, { force: true }));

  /** Runs a command under bwrap with the whole host read-only, with or without the filter. */
  function sandboxed(filtered: boolean, command: string[]) {
    const args = ['--ro-bind', '/', '/', '--dev', '/dev', '--unshare-user', '--unshare-pid'];
    if (filtered) args.push('--seccomp', '5');
    const fd = openSync(scratch, 'r');
    try {
      return spawnSync('bwrap', [...args, '--', ...command], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe', 'ignore', 'ignore', fd],
        timeout: 20_000,
      });
    } finally {
      closeSync(fd);
    }
  }

  it('denies creating a namespace, which works without it', () => {
    expect(sandboxed(false, ['unshare', '--user', 'true']).status).toBe(0);
    const denied = sandboxed(true, ['unshare', '--user', 'true']);
    expect(denied.status).not.toBe(0);
    expect(denied.stderr).toContain('Operation not permitted');
  });

  it('allows an ordinary program: threads, files, sockets', () => {
    const probe = `const { Worker } = require('node:worker_threads');
      new Worker('require("node:fs").readFileSync("/etc/hostname")', { eval: true }).on('exit', (code) => {
        const server = require('node:net').createServer().listen(0, '127.0.0.1', () => { console.log('ok', code); server.close(); });
      });`;
    const result = sandboxed(true, [process.execPath, '-e', probe]);
    expect(result.stderr).toBe('');
    expect(result.stdout.trim()).toBe('ok 0');
  });
});

describe('a workerd binary under a directory only the host can search (mode 700)', () => {
  it('runs confined, bound into the view from where the member can reach it', async () => {
    const hidden = mkdtempSync(join(tmpdir(), 'codemode-test-private-'));
    expect(statSync(hidden).mode & 0o777).toBe(0o700);
    const binary = join(hidden, 'workerd');
    try {
      linkSync(resolveWorkerdBinary(), binary);
    } catch {
      copyFileSync(resolveWorkerdBinary(), binary);
      chmodSync(binary, 0o755);
    }
    const relay = new OutboundServer(DEFAULT_LIMITS.maxRequestBodyBytes);
    try {
      // A PATH of its own: a detection of its own, for this binary.
      const host = {
        searchPath: `${process.env.PATH ?? ''}:${hidden}`,
        platform: process.platform,
        arch: process.arch,
        uid: process.getuid?.(),
        sysctl: (name: string) => {
          try {
            return readFileSync(`/proc/sys/${name.replaceAll('.', '/')}`, 'utf8').trim();
          } catch {
            return undefined;
          }
        },
      };
      const confinement = resolveConfinement('required', () => binary, host);
      if (!confinement.confined) throw new Error(confinement.reason);
      const member = await MemberProcess.start({
        binary,
        relay,
        heapLimitMb: 64,
        limits: DEFAULT_LIMITS,
        startupTimeoutMs: 20_000,
        confinement: confinement.plan,
        cgroup: null,
      });
      try {
        const fields = status(member.pid);
        if (asRoot) expect(fields.get('Uid')!.split(/\s+/).map(Number)).toEqual([65534, 65534, 65534, 65534]);
        expect(fields.get('Seccomp')).toBe('2');
        expect(namespaceOf(member.pid, 'mnt')).not.toBe(namespaceOf('self', 'mnt'));
        // The file in its view is the binary from the private directory.
        const inView = statSync(`/proc/${member.pid}/root/workerd`);
        expect([inView.size, inView.mode & 0o777]).toEqual([statSync(binary).size, statSync(binary).mode & 0o777]);
      } finally {
        member.kill();
        await member.ended;
      }
    } finally {
      await relay.close();
      rmSync(hidden, { recursive: true, force: true });
    }
  });
});

describe("'auto' where confinement is impossible", () => {
  /** Runs the warning fixture with a PATH that has no bwrap; resolves with the warnings it printed. */
  function warningsOf(confinement: 'auto' | 'off'): { name: string; code: string; message: string }[] {
    const fixture = fileURLToPath(new URL('./fixtures/unconfined-warning.ts', import.meta.url));
    const result = spawnSync(process.execPath, ['--import', 'tsx', fixture, confinement], {
      cwd: ROOT,
      env: { ...process.env, PATH: join(tmpdir(), 'codemode-no-tools-here') },
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(result.status, result.stderr).toBe(0);
    return JSON.parse(result.stdout.trim().split('\n').at(-1)!) as { name: string; code: string; message: string }[];
  }

  it('runs, and says so once per process as a warning with a code, naming the reason', () => {
    const reason = confinementText.toolMissing('bwrap', 'bubblewrap', join(tmpdir(), 'codemode-no-tools-here'));
    expect(warningsOf('auto')).toEqual([
      { name: 'Warning', code: UNCONFINED_WARNING_CODE, message: confinementText.unconfinedWarning(reason) },
    ]);
  });

  it("does not warn under 'off', which chose it", () => {
    expect(warningsOf('off')).toEqual([]);
  });
});

describe("a member's private directory", () => {
  it('goes as soon as the member is killed, before its exit is seen', async () => {
    const relay = new OutboundServer(DEFAULT_LIMITS.maxRequestBodyBytes);
    const confinement = resolveConfinement('required', resolveWorkerdBinary);
    const member = await MemberProcess.start({
      binary: resolveWorkerdBinary(),
      relay,
      heapLimitMb: 64,
      limits: DEFAULT_LIMITS,
      startupTimeoutMs: 20_000,
      confinement: confinement.confined ? confinement.plan : undefined,
      cgroup: null,
    });
    const directory = directoryOf(member.pid);
    expect(readdirSync(directory).sort()).toEqual(['control.sock', 'relay.sock']);
    member.kill();
    // Synchronously: a host SIGKILLed right now would leave nothing (the watcher died with the group).
    expect(existsSync(directory)).toBe(false);
    await member.ended;
    await relay.close();
  });
});

interface HostMember {
  pid: number;
  directory: string;
}

const ROOT = fileURLToPath(new URL('../../../..', import.meta.url));

/**
 * Starts the confined host fixture (as `uid` when given); resolves with its members once it prints
 * them. An unprivileged host can read the package it runs: when this checkout sits where `uid`
 * cannot search (a mode-700 folder), the host gets it bound at a path it can, in a mount
 * namespace of its own (its members' pids and directories stay the test's to observe).
 */
function startHost(mode: 'hang' | 'exit', uid?: number) {
  const root = uid === undefined ? ROOT : mkdtempSync(join(tmpdir(), 'codemode-test-checkout-'));
  const fixture = join(root, 'test/isolate/host/confinement/fixtures/confined-host.ts');
  const node = [process.execPath, '--import', 'tsx', fixture, mode];
  let command = node;
  if (uid !== undefined) {
    chmodSync(root, 0o755);
    const drop = ['setpriv', `--reuid=${uid}`, `--regid=${uid}`, '--clear-groups', '--', ...node];
    const bindThenDrop = 'from=$0 to=$1 && shift && mount --bind "$from" "$to" && cd "$to" && exec "$@"';
    command = ['unshare', '--mount', '--propagation', 'private', '--', 'sh', '-c', bindThenDrop, ROOT, root, ...drop];
  }
  const child = spawn(command[0]!, command.slice(1), {
    cwd: root,
    stdio: ['ignore', 'pipe', 'inherit'],
    // An unprivileged host has no home of its own here; tsx keeps its cache under the temp dir.
    env: uid === undefined ? process.env : { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: tmpdir() },
  });
  const exited = new Promise<void>((resolve) =>
    child.once('exit', () => {
      if (root !== ROOT) rmSync(root, { recursive: true, force: true });
      resolve();
    }),
  );
  const members = new Promise<HostMember[]>((resolve, reject) => {
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += String(chunk);
      if (stdout.includes('\n')) resolve(JSON.parse(stdout.slice(0, stdout.indexOf('\n'))) as HostMember[]);
    });
    void exited.then(() => reject(new Error('the host exited before reporting its members')));
  });
  return { child, exited, members };
}

describe('an unprivileged host', () => {
  it('confines its members under its own uid', async () => {
    // As root, the fixture host drops to nobody first; otherwise it already is unprivileged.
    const hostUid = asRoot ? 65534 : process.getuid!();
    const host = startHost('hang', asRoot ? hostUid : undefined);
    try {
      const members = await host.members;
      for (const { pid } of members) {
        expect(status(pid).get('Uid')!.split(/\s+/).map(Number)).toEqual([hostUid, hostUid, hostUid, hostUid]);
        expect(status(pid).get('Seccomp')).toBe('2');
        for (const kind of ['user', 'net', 'mnt', 'pid'])
          expect(namespaceOf(pid, kind)).not.toBe(namespaceOf('self', kind));
      }
      host.child.kill('SIGKILL');
      await waitFor(() => members.every(({ pid }) => !isAlive(pid)), 'the members of the killed host to end');
    } finally {
      host.child.kill('SIGKILL');
    }
  });
});

describe('a host that ends without dispose', () => {
  it('SIGKILLed: leaves no member running and no private directory behind', async () => {
    const host = startHost('hang');
    try {
      const members = await host.members;
      expect(members).toHaveLength(2);
      for (const { pid, directory } of members) {
        expect(existsSync(directory)).toBe(true);
        expect(namespaceOf(pid, 'net')).not.toBe(namespaceOf('self', 'net'));
      }
      host.child.kill('SIGKILL');
      await waitFor(() => members.every(({ pid }) => !isAlive(pid)), 'the members of a SIGKILLed host to end');
      await waitFor(() => members.every(({ directory }) => !existsSync(directory)), 'their directories to go');
    } finally {
      host.child.kill('SIGKILL');
    }
  });

  it('exiting: leaves no private directory behind', async () => {
    const host = startHost('exit');
    const members = await host.members;
    await host.exited;
    await waitFor(() => members.every(({ pid }) => !isAlive(pid)), 'the members of an exited host to end');
    for (const { directory } of members) expect(existsSync(directory), directory).toBe(false);
  });
});

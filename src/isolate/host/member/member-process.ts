/**
 * One pool member: a workerd process running the supervisor, and the host's WebSocket to it.
 * It carries messages and reports its end; what a message means is the run's business (run.ts),
 * and when to start or end a member is the pool's (pool.ts).
 */

import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import WebSocket from 'ws';
import { ExecutorError } from '../../../protocol/errors.js';
import { channelGrammar, type FramedAsText } from '../../contract/channel.js';
import type { SupervisorMessage } from '../../contract/messages.js';
import { relayCodec } from '../../contract/relay-frame.js';
import { isolateText } from '../../host/texts.js';
import { type ConfinementPlan, memberCommand } from '../confinement/command-line.js';
import { createMemberDirectory } from '../confinement/member-directory.js';
import { type IsolateLimits, maxSupervisorFrameBytes } from '../options.js';
import type { OutboundServer } from '../relay/outbound-server.js';
import { sandboxSources } from '../sandbox/sandbox-sources.js';
import { heapIsFull } from './heap-trace.js';
import { createMemberCgroup, type MemberCgroup } from './member-cgroup.js';
import { guardProcessMemory, type ProcessMemoryGuard } from './memory-guard.js';
import { ProcFiles } from './proc-files.js';
import { type ExitInfo, type SpawnedWorkerd, spawnWorkerd } from './spawn-workerd.js';
import type { StartTimes } from './start-times.js';
import { buildSupervisorConfig } from './supervisor-config.js';

export interface ProcessEnd {
  /** We ended it (recycling, a wedged run, dispose). */
  intended: boolean;
  exit: ExitInfo;
}

/** Every live member of every executor in this host, ended synchronously if the host exits. */
const LIVE = new Set<MemberProcess>();
let exitHookInstalled = false;

function trackUntilEnd(member: MemberProcess): void {
  LIVE.add(member);
  void member.ended.then(() => LIVE.delete(member));
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  // The wrapper's watcher would kill them anyway once our pipe closes; this is immediate.
  process.once('exit', () => {
    for (const live of LIVE) live.kill();
  });
}

/** How long a member whose socket closed may take to exit on its own before we kill it. */
const EXIT_AFTER_CLOSE_MS = 300;

export interface MemberProcessOptions {
  binary: string;
  /** The executor's outbound relay; it listens on a socket in the member's private directory. */
  relay: Pick<OutboundServer, 'token' | 'listen'>;
  heapLimitMb: number;
  limits: IsolateLimits;
  startupTimeoutMs: number;
  /** How members are confined (detection's plan), or undefined to run workerd as it is. */
  confinement: ConfinementPlan | undefined;
  /** A delegated cgroup v2 directory (`pool.cgroup`), checked already, and the cap for its children. */
  cgroup: { root: string; memoryLimitMb: number } | null;
  /** Where the executor sums its starts' steps (start-times.ts). */
  startTimes?: StartTimes | undefined;
}

/**
 * What one run in a member listens to. A member runs one run at a time, or at the tenant level
 * several of one tenant's (pool/member-sharing.ts): its messages go to their run by its id, and
 * what concerns the whole process (its end, a full heap, its output, its memory) to every run in it.
 */
export class MemberProcess {
  readonly pid: number;
  /** A message of no run in the member now (one that settled): answered so the sandbox does not wait. */
  onStale: (message: SupervisorMessage) => void = () => {};
  readonly ended: Promise<ProcessEnd>;
  /** Each run's message handler, by its id. */
  readonly #routes = new Map<string, (message: SupervisorMessage) => void>();
  readonly #endWatchers = new Set<(end: ProcessEnd) => void>();
  readonly #heapWatchers = new Set<() => void>();
  readonly #outputWatchers = new Set<() => void>();
  /** The runs' memory caps, while any is armed, and the guard's disarm. */
  readonly #memoryWatchers = new Set<(rssMb: number) => void>();
  #disarmMemory: (() => void) | undefined;
  #end: ProcessEnd | undefined;

  readonly #workerd: SpawnedWorkerd;
  readonly #socket: WebSocket;
  /** Its /proc files, open for its whole life (Linux). */
  readonly #proc: ProcFiles | undefined;
  /** Handed to the guard's thread once; each run arms it (`armMemoryGuard`). */
  readonly #memoryGuard: ProcessMemoryGuard;
  #intended = false;
  #alive = true;

  private constructor(workerd: SpawnedWorkerd, socket: WebSocket, heapLimitMb: number) {
    this.pid = workerd.pid;
    this.#workerd = workerd;
    this.#socket = socket;
    this.#proc = process.platform === 'linux' ? new ProcFiles(workerd.pid) : undefined;
    this.#memoryGuard = guardProcessMemory(workerd.pid);
    workerd.onOutputLine((line) => {
      // The heap's line does not say which isolate: every run in the process is told.
      if (heapIsFull(line, heapLimitMb, () => this.rssMb())) for (const watcher of [...this.#heapWatchers]) watcher();
    });
    socket.on('message', (data, isBinary) => {
      const message = isBinary ? null : channelGrammar.parseSupervisorMessage(String(data));
      // A frame outside the grammar comes from a supervisor that is broken or no longer ours:
      // nothing it says can be trusted, so the process ends and its run reports that.
      if (message === null) {
        this.kill();
        return;
      }
      try {
        (this.#routes.get(message.run) ?? this.onStale)(message);
      } catch {
        // A throw out of a socket handler would be the host's to die of; the member ends instead,
        // and its run reports the process's end.
        this.kill();
      }
    });
    // A closed socket means a dead or dying process: give it a moment to exit with its own
    // status (an OOM abort explains itself on stderr), then make sure.
    socket.on('close', () => {
      this.#alive = false;
      setTimeout(() => workerd.kill(), EXIT_AFTER_CLOSE_MS).unref();
    });
    socket.on('error', () => socket.terminate());
    this.ended = workerd.exited.then((exit) => {
      this.#alive = false;
      socket.terminate();
      this.#memoryGuard.close();
      this.#proc?.close();
      const end: ProcessEnd = { intended: this.#intended, exit };
      this.#end = end;
      for (const watcher of [...this.#endWatchers]) watcher(end);
      return end;
    });
  }

  static async start(options: MemberProcessOptions): Promise<MemberProcess> {
    const timer = options.startTimes?.begin();
    const token = randomBytes(24).toString('hex');
    // Its config and both sockets. The wrapper is spawned with no await before it, so its watcher
    // guards the directory from the start (spawn-workerd.ts); the relay listens meanwhile, since
    // workerd reaches it only once a run fetches.
    const directory = createMemberDirectory(options.confinement?.owner);
    timer?.mark('directory');
    let spawning: Promise<SpawnedWorkerd>;
    let cgroup: MemberCgroup | undefined;
    try {
      const config = buildSupervisorConfig({
        sources: sandboxSources(),
        token,
        heapLimitMb: options.heapLimitMb,
        limits: options.limits,
        relay: { socket: directory.relaySocket, token: options.relay.token },
        controlSocket: directory.controlSocket,
      });
      timer?.mark('config');
      cgroup =
        options.cgroup === null ? undefined : createMemberCgroup(options.cgroup.root, options.cgroup.memoryLimitMb);
      const command = memberCommand(options.confinement, options.binary, directory.path, directory.configPath);
      timer?.mark('command');
      spawning = spawnWorkerd({ directory, config, command, startupTimeoutMs: options.startupTimeoutMs, cgroup });
      timer?.mark('spawn');
    } catch (error) {
      cgroup?.remove();
      directory.remove();
      throw error;
    }
    const [spawned, listening] = await Promise.allSettled([
      spawning,
      options.relay.listen(directory.relaySocket, directory.handOver),
    ]);
    const cleanUp = () => {
      if (listening.status === 'fulfilled') void listening.value();
      directory.remove();
    };
    if (spawned.status === 'rejected' || listening.status === 'rejected') {
      if (spawned.status === 'fulfilled') spawned.value.kill();
      cleanUp();
      throw spawned.status === 'rejected' ? spawned.reason : (listening as PromiseRejectedResult).reason;
    }
    const workerd = spawned.value;
    timer?.mark('ready');
    void workerd.exited.then(cleanUp);
    try {
      // The supervisor sends no frame over this; it bounds what a broken one can make us read.
      const maxPayload = maxSupervisorFrameBytes(options.limits);
      const socket = await connect(directory.controlSocket, token, options.startupTimeoutMs, maxPayload);
      timer?.mark('connect');
      timer?.done();
      const member = new MemberProcess(workerd, socket, options.heapLimitMb);
      // Between runs too: nothing of a member may write more than a run may.
      member.#capOutput(options.limits.maxProcessOutputBytes);
      trackUntilEnd(member);
      return member;
    } catch (error) {
      workerd.kill();
      throw error;
    }
  }

  /** Sends that run's messages to `handler` until the returned function is called. */
  route(run: string, handler: (message: SupervisorMessage) => void): () => void {
    this.#routes.set(run, handler);
    return () => {
      if (this.#routes.get(run) === handler) this.#routes.delete(run);
    };
  }

  /** Tells `watcher` when the process ends, until the returned function is called. */
  watchEnd(watcher: (end: ProcessEnd) => void): () => void {
    this.#endWatchers.add(watcher);
    const end = this.#end;
    if (end !== undefined) queueMicrotask(() => watcher(end));
    return () => this.#endWatchers.delete(watcher);
  }

  /**
   * Tells `watcher` when the process wrote more than `maxBytes` to its output
   * (`limits.maxProcessOutputBytes`), until the returned function is called: by then it is being
   * killed, and its output is no longer read. The count starts again when no other run watches
   * (the output does not say which run wrote it, so every run in the process is told).
   */
  watchOutput(maxBytes: number, watcher: () => void): () => void {
    if (this.#outputWatchers.size === 0) this.#capOutput(maxBytes);
    this.#outputWatchers.add(watcher);
    return () => this.#outputWatchers.delete(watcher);
  }

  /** Starts a new count of the process's output against `maxBytes`; past it, every run watching is told. */
  #capOutput(maxBytes: number): void {
    this.#workerd.capOutput(maxBytes, () => {
      for (const watcher of [...this.#outputWatchers]) watcher();
    });
  }

  /** Tells `watcher` when an isolate's heap is full (heap-trace.ts), until the returned function is called. */
  watchHeap(watcher: () => void): () => void {
    this.#heapWatchers.add(watcher);
    return () => this.#heapWatchers.delete(watcher);
  }

  /**
   * Caps the process's resident memory at `limitMb` (`pool.memoryLimitMb`) while a run is armed,
   * until the returned function is called: past it the process is SIGKILLed and every armed run
   * is told. The cap is the process's, whichever run in it holds the memory.
   */
  armMemoryGuard(limitMb: number, exceeded: (rssMb: number) => void): () => void {
    if (this.#memoryWatchers.size === 0)
      this.#disarmMemory = this.#memoryGuard.arm(limitMb, (rssMb) => {
        for (const watcher of [...this.#memoryWatchers]) watcher(rssMb);
      });
    this.#memoryWatchers.add(exceeded);
    return () => {
      if (!this.#memoryWatchers.delete(exceeded) || this.#memoryWatchers.size > 0) return;
      this.#disarmMemory?.();
      this.#disarmMemory = undefined;
    };
  }

  get alive(): boolean {
    return this.#alive;
  }

  send(message: FramedAsText): void {
    this.sendFrame(channelGrammar.encodeHostMessage(message));
  }

  /** A message already encoded (by the caller, who measured it): its text, or that text's UTF-8 bytes. */
  sendFrame(frame: string | Uint8Array): void {
    // Bytes go as a text frame as they are: the supervisor reads every frame as text.
    if (this.#alive) this.#socket.send(frame, { binary: false });
  }

  /** Ends the process at once (SIGKILL to its group). */
  kill(): void {
    if (this.#alive) this.#intended = true;
    this.#alive = false;
    this.#workerd.kill();
  }

  /** CPU time the process has used, in ms (Linux; undefined elsewhere, or once it is gone). */
  cpuMs(): number | undefined {
    return this.#proc?.cpuMs();
  }

  /** Resident set size in MB, or undefined when it cannot be read. */
  rssMb(): number | undefined {
    if (this.#proc !== undefined) return this.#proc.rssMb();
    try {
      const kb = Number(execFileSync('ps', ['-o', 'rss=', '-p', String(this.pid)], { encoding: 'utf8' }).trim());
      return Number.isFinite(kb) ? kb / 1024 : undefined;
    } catch {
      return undefined;
    }
  }
}

function connect(controlSocket: string, token: string, timeoutMs: number, maxPayload: number): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(`ws+unix://${controlSocket}:/`, {
      headers: { [relayCodec.tokenHeader]: token },
      perMessageDeflate: false,
      // An all-zero masking key (RFC 6455 allows any): ws then skips masking every byte in JavaScript,
      // most of what a run carrying a large module map cost the host. Masking guards proxies on a
      // network path, and this socket is a unix socket to the member, with none.
      generateMask: (mask: Buffer) => mask.fill(0),
      handshakeTimeout: timeoutMs,
      maxPayload,
    });
    socket.once('open', () => {
      // An idle pool must not keep the host's event loop alive (see loop-hold.ts).
      (
        socket as unknown as { _socket?: { unref?: () => void; setNoDelay?: (on: boolean) => void } }
      )._socket?.unref?.();
      resolve(socket);
    });
    socket.once('error', (error) =>
      reject(new ExecutorError('SANDBOX_UNAVAILABLE', isolateText.sandboxUnavailable(error.message), { cause: error })),
    );
  });
}

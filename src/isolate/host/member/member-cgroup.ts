/**
 * The kernel's memory cap for a pool member, where the operator delegated a cgroup v2 directory
 * to the executor (`pool.cgroup`, for example one a systemd unit with `Delegate=yes` owns). Each
 * member runs in a child cgroup of it, `member-<uuid>`, whose `memory.max` is `pool.memoryLimitMb`
 * and `memory.swap.max` 0; the kernel ends the process when it passes the cap, and the child's
 * `memory.events` tells the run so. Nothing is created or written anywhere but under that
 * directory, and no path is ever guessed.
 *
 * The directory must enable the memory controller for its children (`memory` in its
 * `cgroup.subtree_control`), which cgroup v2 allows only for a cgroup without processes of its
 * own: delegate a directory the host process does not run in.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ExecutorError } from '../../../protocol/errors.js';
import { messageOf } from '../../../protocol/message-of.js';
import { isolateText } from '../../host/texts.js';

export interface MemberCgroup {
  /** The child cgroup's directory; the member's wrapper moves itself into it before workerd starts. */
  readonly path: string;
  /** Whether the kernel ended a process of it for passing `memory.max`. */
  oomKilled(): boolean;
  /** Removes the child cgroup (once its processes are gone). */
  remove(): void;
}

function unavailable(root: string, detail: string): ExecutorError {
  return new ExecutorError('SANDBOX_UNAVAILABLE', isolateText.cgroupUnusable(root, detail));
}

function controllersOf(file: string): string[] {
  return readFileSync(file, 'utf8').trim().split(/\s+/);
}

/** Checks that `root` is a cgroup v2 directory that hands the memory controller to its children. */
export function checkDelegatedCgroup(root: string): void {
  const controllers = join(root, 'cgroup.controllers');
  if (!existsSync(controllers)) throw unavailable(root, isolateText.cgroupNotV2);
  try {
    if (!controllersOf(controllers).includes('memory')) throw unavailable(root, isolateText.cgroupNoMemory);
    const subtree = join(root, 'cgroup.subtree_control');
    if (!controllersOf(subtree).includes('memory')) writeFileSync(subtree, '+memory');
  } catch (error) {
    if (error instanceof ExecutorError) throw error;
    throw unavailable(root, messageOf(error));
  }
}

/** Makes the child cgroup of one member, capped at `memoryLimitMb`. */
export function createMemberCgroup(root: string, memoryLimitMb: number): MemberCgroup {
  const path = join(root, `member-${randomUUID()}`);
  try {
    mkdirSync(path);
    writeFileSync(join(path, 'memory.max'), String(memoryLimitMb * 2 ** 20));
    // No swap: a member over its cap is ended, never paged out to keep running.
    if (existsSync(join(path, 'memory.swap.max'))) writeFileSync(join(path, 'memory.swap.max'), '0');
  } catch (error) {
    throw unavailable(root, messageOf(error));
  }
  return {
    path,
    oomKilled() {
      try {
        const match = /^oom_kill (\d+)$/m.exec(readFileSync(join(path, 'memory.events'), 'utf8'));
        return match !== null && Number(match[1]) > 0;
      } catch {
        return false;
      }
    },
    remove() {
      try {
        rmdirSync(path);
      } catch {
        // Still busy or already gone; an empty child cgroup holds nothing.
      }
    },
  };
}

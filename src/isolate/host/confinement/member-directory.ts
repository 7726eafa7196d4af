/**
 * A pool member's private directory, in every mode: its config and the two Unix sockets it talks
 * to the host on (the supervisor's channel, which workerd listens on, and the outbound relay,
 * which the host listens on). No TCP port is opened for a member, and only the host and the
 * member can enter this directory (mode 0700). A confined member sees it at the same path, bound
 * into its filesystem view.
 *
 * It goes when its member ends, or with the host: the wrapper's watcher removes it when the host
 * dies, and an exit hook removes what is left when the host exits (its kill of the members takes
 * their watchers with them).
 */
import { chownSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { MemberOwner } from './member-owner.js';
import { memberBase } from './reachable-files.js';
import { confinementText } from './texts.js';

/** Every directory not yet removed, removed synchronously if the host exits. */
const LIVE = new Set<string>();
let exitHookInstalled = false;

function removeAtExit(path: string): void {
  LIVE.add(path);
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once('exit', () => {
    for (const live of LIVE) {
      try {
        rmSync(live, { recursive: true, force: true });
      } catch {
        // Nothing more can be done at exit.
      }
    }
  });
}

/** sun_path holds 108 bytes, the terminating NUL included. */
const MAX_SOCKET_PATH_BYTES = 107;

export interface MemberDirectory {
  readonly path: string;
  readonly configPath: string;
  /** workerd listens here for the host's WebSocket. */
  readonly controlSocket: string;
  /** The host's outbound relay listens here for the member's relayed fetches. */
  readonly relaySocket: string;
  /** Who, besides the host, must use the directory: the member's uid when it is not the host's. */
  readonly owner: MemberOwner | undefined;
  /** Writes the config, readable by the member only. */
  writeConfig(text: string): void;
  /** Gives a file the host created in the directory (the relay socket) to the member. */
  handOver(path: string): void;
  /** Removes the directory and all in it. Idempotent. */
  remove(): void;
}

export function createMemberDirectory(owner: MemberOwner | undefined): MemberDirectory {
  // Under a directory the member's uid may search: it binds this one at its own path.
  const path = mkdtempSync(join(memberBase(owner), 'codemode-member-'));
  const controlSocket = join(path, 'control.sock');
  const relaySocket = join(path, 'relay.sock');
  const remove = () => {
    try {
      rmSync(path, { recursive: true, force: true });
      LIVE.delete(path);
    } catch {
      // A workerd being killed as it started bound its socket meanwhile: removed again at the
      // member's end, or at the host's exit.
    }
  };
  removeAtExit(path);
  for (const socket of [controlSocket, relaySocket]) {
    if (Buffer.byteLength(socket) > MAX_SOCKET_PATH_BYTES) {
      remove();
      throw new Error(confinementText.socketPathTooLong(socket, MAX_SOCKET_PATH_BYTES));
    }
  }
  const handOver = (file: string) => {
    if (owner !== undefined) chownSync(file, owner.uid, owner.gid);
  };
  try {
    handOver(path);
  } catch (error) {
    remove();
    throw error;
  }
  const configPath = join(path, 'workerd.capnp');
  return {
    path,
    configPath,
    controlSocket,
    relaySocket,
    owner,
    writeConfig(text) {
      writeFileSync(configPath, text, { mode: 0o600 });
      handOver(configPath);
    },
    handOver,
    remove,
  };
}

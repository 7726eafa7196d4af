/**
 * HAProxy's PROXY protocol v2 (`send-proxy-v2`), on `proxyProtocol`: every connection opens with a
 * binary header naming the client's own address, so the per-peer bounds and the log see the
 * client rather than the balancer. The framing is read here, strictly: the 12-byte signature is
 * checked as its bytes arrive, the header is at most 16 + 65535 bytes (its length field), and it
 * must arrive within the handshake timeout, and at most `--max-connections` connections wait for
 * theirs at once. proxy-protocol-js decodes the header once it is whole. A connection without a
 * valid header is refused.
 */
import type { Server } from 'node:http';
import { createServer as createNetServer, type Server as NetServer, type Socket } from 'node:net';
import { AddressFamilyType, Command, V2ProxyProtocol } from 'proxy-protocol-js';
import { messageOf } from '../../protocol/message-of.js';
import {
  formatProxyHeaderInvalid,
  formatProxyHeaderTimedOut,
  formatTooManyAwaitingProxyHeader,
  PROXY_HEADER_CLOSED,
  PROXY_SIGNATURE_MISSING,
} from '../texts.js';

/** The address a connection is counted and logged under. */
export interface PeerAddress {
  address: string;
  port: number;
}

/** `\r\n\r\n\0\r\nQUIT\n`, the v2 signature. */
const SIGNATURE = Buffer.from([0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a]);
/** Signature, version and command, family and transport, length. */
const FIXED_PART = 16;

/** The client address each proxied socket's header named. */
const proxied = new WeakMap<Socket, PeerAddress>();

/** The client's address: the one its PROXY header named, else the socket's own. */
export function remoteOf(socket: Socket): PeerAddress {
  return proxied.get(socket) ?? { address: socket.remoteAddress ?? '', port: socket.remotePort ?? 0 };
}

function ipv6Text(bytes: readonly number[]): string {
  const groups: string[] = [];
  for (let i = 0; i < 16; i += 2) groups.push((((bytes[i] ?? 0) << 8) | (bytes[i + 1] ?? 0)).toString(16));
  return groups.join(':');
}

/** The client address of a whole header; `undefined` when it names none (LOCAL, UNSPEC, UNIX). */
function decode(header: Buffer): PeerAddress | undefined {
  const parsed = V2ProxyProtocol.parse(header);
  if (parsed.command === Command.LOCAL) return undefined;
  const family = parsed.addressFamilyType;
  if (family === AddressFamilyType.INET || family === AddressFamilyType.INET6) {
    const { sourceAddress, sourcePort } = parsed.proxyAddress as {
      sourceAddress: { address: number[] };
      sourcePort: number;
    };
    const address =
      family === AddressFamilyType.INET ? sourceAddress.address.join('.') : ipv6Text(sourceAddress.address);
    return { address, port: sourcePort };
  }
  return undefined;
}

/**
 * Reads the header off a fresh socket, then hands the socket on with the bytes that followed the
 * header put back. `refuse` is told why a socket without a valid header was destroyed.
 */
function readProxyHeader(
  socket: Socket,
  timeout: number,
  accepted: (socket: Socket) => void,
  refuse: (socket: Socket, reason: string) => void,
): void {
  let received = Buffer.alloc(0);
  let settled = false;
  const finish = (): void => {
    settled = true;
    clearTimeout(timer);
    socket.off('data', onData);
    socket.off('end', onEnd);
  };
  const fail = (reason: string): void => {
    if (settled) return;
    finish();
    refuse(socket, reason);
    socket.destroy();
  };
  const onData = (chunk: Buffer): void => {
    received = Buffer.concat([received, chunk]);
    const signature = received.subarray(0, SIGNATURE.length);
    if (!signature.equals(SIGNATURE.subarray(0, signature.length))) {
      fail(PROXY_SIGNATURE_MISSING);
      return;
    }
    if (received.length < FIXED_PART) return;
    const total = FIXED_PART + received.readUInt16BE(14);
    if (received.length < total) return;
    let peer: PeerAddress | undefined;
    try {
      peer = decode(received.subarray(0, total));
    } catch (error) {
      fail(formatProxyHeaderInvalid(messageOf(error)));
      return;
    }
    finish();
    socket.pause();
    if (peer !== undefined) proxied.set(socket, peer);
    if (received.length > total) socket.unshift(received.subarray(total));
    accepted(socket);
    socket.resume();
  };
  const onEnd = (): void => fail(PROXY_HEADER_CLOSED);
  const timer = setTimeout(() => fail(formatProxyHeaderTimedOut(timeout)), timeout);
  timer.unref();
  socket.on('error', () => {});
  socket.on('data', onData);
  socket.once('end', onEnd);
}

/**
 * A listener that reads each connection's PROXY header, then gives the connection to `http`. At
 * most `maxWaiting` connections wait for their header at once (each for `timeout` ms at most);
 * one more is refused.
 */
export function proxiedListener(
  http: Server,
  limits: { timeout: number; maxWaiting: number },
  refuse: (socket: Socket, reason: string) => void,
): NetServer {
  let waiting = 0;
  return createNetServer((socket) => {
    if (waiting >= limits.maxWaiting) {
      socket.on('error', () => {});
      refuse(socket, formatTooManyAwaitingProxyHeader(waiting));
      socket.destroy();
      return;
    }
    waiting += 1;
    let counted = true;
    const settle = (): void => {
      if (counted) waiting -= 1;
      counted = false;
    };
    socket.once('close', settle);
    readProxyHeader(
      socket,
      limits.timeout,
      (accepted) => {
        settle();
        http.emit('connection', accepted);
      },
      refuse,
    );
  });
}

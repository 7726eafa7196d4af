/**
 * `--proxy-protocol` on a real daemon (issue 22, finding 10): a connection must open with a valid
 * PROXY protocol v2 header, whole within the handshake timeout, and the per-peer bound and the log
 * then use the address the header names. Headers are built with proxy-protocol-js, as HAProxy
 * would send them; test/fleet/fleet.test.ts runs the same through a real HAProxy.
 */
import { once } from 'node:events';
import { type Socket, connect as tcpConnect } from 'node:net';
import {
  Command,
  IPv4Address,
  IPv4ProxyAddress,
  IPv6Address,
  IPv6ProxyAddress,
  TransportProtocol,
  V2ProxyProtocol,
} from 'proxy-protocol-js';
import { afterAll, describe, expect, it } from 'vitest';
import { connect } from '../../../src/remote/index.js';
import { NodeWebSocket } from '../../support/client.js';
import { type AdminDaemon, metricValue, startAdminDaemon, stopAllDaemons } from '../../support/daemon.js';

afterAll(stopAllDaemons);

function ipv4Header(address: [number, number, number, number], port: number): Buffer {
  const proxied = new IPv4ProxyAddress(
    IPv4Address.createFrom(address),
    port,
    IPv4Address.createFrom([127, 0, 0, 1]),
    1,
  );
  return Buffer.from(new V2ProxyProtocol(Command.PROXY, TransportProtocol.STREAM, proxied).build());
}

async function rawSocket(daemon: AdminDaemon): Promise<Socket> {
  const socket = tcpConnect({ host: '127.0.0.1', port: daemon.port });
  socket.on('error', () => {});
  await once(socket, 'connect');
  return socket;
}

/** Resolves when the socket closes, with everything it received. */
function received(socket: Socket): Promise<string> {
  let text = '';
  socket.on('data', (chunk: Buffer) => (text += chunk.toString('latin1')));
  return once(socket, 'close').then(() => text);
}

const PLAIN_GET = 'GET / HTTP/1.1\r\nHost: daemon\r\n\r\n';

describe('--proxy-protocol', () => {
  it('refuses a connection without the header, one with a broken header, and one whose header never ends', async () => {
    const daemon = await startAdminDaemon(['--proxy-protocol', '--handshake-timeout-ms', '1000']);
    // connect() itself sends no header.
    await expect(connect(daemon.url, { websocket: NodeWebSocket })).rejects.toMatchObject({
      code: 'CONNECTION_REJECTED',
    });
    const missing = await daemon.waitForLine(/^connection refused from 127\.0\.0\.1:\d+: the connection did not open/);
    expect(missing).toMatch(
      /: the connection did not open with a PROXY protocol v2 header, which this daemon requires \(--proxy-protocol\)$/,
    );

    const broken = await rawSocket(daemon);
    const brokenClosed = received(broken);
    const header = ipv4Header([10, 0, 0, 1], 4000);
    header[12] = 0x31; // version 3
    broken.write(header);
    expect(await brokenClosed).toBe('');
    await daemon.waitForLine(/: the connection's PROXY protocol v2 header is invalid: .+ \(--proxy-protocol\)$/);

    const unfinished = await rawSocket(daemon);
    const unfinishedClosed = received(unfinished);
    unfinished.write(ipv4Header([10, 0, 0, 2], 4000).subarray(0, 20));
    expect(await unfinishedClosed).toBe('');
    await daemon.waitForLine(
      /: no whole PROXY protocol v2 header within 1000 ms of connecting \(--proxy-protocol, --handshake-timeout-ms\)$/,
    );
    expect(await metricValue(daemon, 'codemode_executor_sessions_refused_total{reason="proxy_header"}')).toBe(3);
  });

  it("counts and logs each connection under the header's address", async () => {
    const daemon = await startAdminDaemon(['--proxy-protocol', '--max-unauthenticated-per-peer', '1']);
    // A socket that never upgrades holds its address's one place.
    const first = await rawSocket(daemon);
    first.write(Buffer.concat([ipv4Header([10, 9, 9, 9], 5001), Buffer.from(PLAIN_GET)]));
    await once(first, 'data');
    const second = await rawSocket(daemon);
    const secondClosed = received(second);
    second.write(ipv4Header([10, 9, 9, 9], 5002));
    await secondClosed;
    expect(await daemon.waitForLine(/^connection refused from 10\.9\.9\.9:5002: /)).toBe(
      'connection refused from 10.9.9.9:5002: 10.9.9.9 already holds 1 socket not yet upgraded to an authenticated session, the per-address limit (--max-unauthenticated-per-peer)',
    );
    // Another address has its own place, header and request in separate writes; IPv6 too.
    const other = await rawSocket(daemon);
    other.write(ipv4Header([10, 8, 8, 8], 5003));
    await new Promise((resolve) => setTimeout(resolve, 50));
    other.write(PLAIN_GET);
    expect((await once(other, 'data'))[0].toString('latin1')).toMatch(/^HTTP\/1\.1 426 /);
    const v6 = await rawSocket(daemon);
    const v6Address = new IPv6ProxyAddress(
      IPv6Address.createFrom([0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]),
      5004,
      IPv6Address.createFrom([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]),
      1,
    );
    v6.write(Buffer.from(new V2ProxyProtocol(Command.PROXY, TransportProtocol.STREAM, v6Address).build()));
    v6.write(PLAIN_GET);
    expect((await once(v6, 'data'))[0].toString('latin1')).toMatch(/^HTTP\/1\.1 426 /);
    for (const socket of [first, other, v6]) socket.destroy();
    expect(daemon.lines.filter((line) => /^connection refused from /.test(line))).toHaveLength(1);
  });
});

describe('connections waiting for their PROXY header', () => {
  it('are at most --max-connections at once; one more is refused naming it', async () => {
    const daemon = await startAdminDaemon(['--proxy-protocol', '--max-connections', '3']);
    const waiting = await Promise.all([1, 2, 3].map(() => rawSocket(daemon)));
    // Half a header each: they wait.
    for (const socket of waiting) socket.write(ipv4Header([10, 1, 1, 1], 6000).subarray(0, 8));
    const extra = await rawSocket(daemon);
    const extraClosed = received(extra);
    expect(await extraClosed).toBe('');
    await daemon.waitForLine(
      /^connection refused from 127\.0\.0\.1:\d+: 3 connections already wait for their PROXY protocol v2 header, the limit \(--max-connections\)$/,
    );
    for (const socket of waiting) socket.destroy();
    // Their places are free again once they close.
    await new Promise((resolve) => setTimeout(resolve, 200));
    const after = await rawSocket(daemon);
    after.write(Buffer.concat([ipv4Header([10, 1, 1, 2], 6001), Buffer.from(PLAIN_GET)]));
    expect((await once(after, 'data'))[0].toString('latin1')).toMatch(/^HTTP\/1\.1 426 /);
    after.destroy();
  });
});

/**
 * The admin listener, apart from the executor port: `/healthz` (the process answers), `/readyz`
 * (it takes new sessions: 503 while it drains or cannot start a sandbox) and `/metrics` (the
 * Prometheus text format). It takes no token, serves nothing else, and binds loopback by default.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ADMIN_NOT_FOUND, ALIVE, formatPortInUse } from '../texts.js';
import type { DaemonMetrics } from './metrics.js';
import type { ReadinessState } from './readiness.js';

export interface AdminServer {
  readonly host: string;
  readonly port: number;
  /** `http://<host>:<port>` */
  readonly url: string;
  close(): Promise<void>;
}

export async function startAdminServer(
  address: { host: string; port: number },
  metrics: DaemonMetrics,
  readiness: () => ReadinessState,
): Promise<AdminServer> {
  const server: Server = createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0];
    const text = (status: number, body: string) =>
      response.writeHead(status, { 'content-type': 'text/plain; charset=utf-8' }).end(`${body}\n`);
    if (request.method !== 'GET' && request.method !== 'HEAD') return text(405, ADMIN_NOT_FOUND);
    if (path === '/healthz') return text(200, ALIVE);
    if (path === '/readyz') {
      const state = readiness();
      return text(state.ready ? 200 : 503, state.text);
    }
    if (path === '/metrics') {
      metrics.exposition().then(
        ({ contentType, body }) => response.writeHead(200, { 'content-type': contentType }).end(body),
        (error: unknown) => text(500, String(error)),
      );
      return;
    }
    text(404, ADMIN_NOT_FOUND);
  });
  // Probes must not keep an idle socket open past the daemon's exit.
  server.keepAliveTimeout = 1_000;
  await new Promise<void>((resolve, reject) => {
    const failed = (error: Error) =>
      reject(
        (error as { code?: unknown }).code === 'EADDRINUSE'
          ? new Error(formatPortInUse(address.host, address.port, '--admin-port', 'admin.port'), { cause: error })
          : error,
      );
    server.once('error', failed);
    server.listen(address.port, address.host, () => {
      server.off('error', failed);
      resolve();
    });
  });
  const bound = server.address() as AddressInfo;
  const host = bound.family === 'IPv6' ? `[${bound.address}]` : bound.address;
  return {
    host: bound.address,
    port: bound.port,
    url: `http://${host}:${bound.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

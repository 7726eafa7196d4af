import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { fetchFailure } from './fetch-failure.js';

describe('fetchFailure', () => {
  it("names the cause of undici's bare fetch failed: a server that closes the socket mid-request", async () => {
    // It reads the request, then closes: as a server whose process died under the request.
    const server = createServer((socket) => socket.once('data', () => socket.destroy()));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    try {
      const error = await fetch(`http://127.0.0.1:${port}/`, { method: 'POST', body: '{}' }).catch(
        (caught: unknown) => caught,
      );
      expect(fetchFailure(error)).toMatch(/^fetch failed: .*other side closed.* \(UND_ERR_SOCKET\)$/);
    } finally {
      server.close();
    }
  });

  it('is the message alone when there is no cause', () => {
    expect(fetchFailure(new Error('plain'))).toBe('plain');
  });
});

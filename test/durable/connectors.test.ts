/**
 * Upstream's connectors behind upstream's runtime on the durable state, on both executors:
 * McpConnector over a real MCP SDK client and server (in-memory transport), and OpenApiConnector
 * derived from a spec and calling a loopback HTTP server. Each has a read and an approval-gated
 * write; the servers count the calls they really served.
 */
import '../../src/register/index.js';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CodemodeRuntime, createCodemodeRuntime, McpConnector, OpenApiConnector } from '@cloudflare/codemode';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { afterAll, afterEach, beforeAll, beforeEach, expect, it } from 'vitest';
import { z } from 'zod';
import { type DurableState, openDurableState } from '../../src/durable/index.js';
import { describeOnBothExecutors } from '../hosts/support/on-both-executors.js';

interface Issues {
  open: Set<number>;
  served: string[];
}

async function mcpClient(issues: Issues): Promise<Client> {
  const server = new McpServer({ name: 'tracker', version: '1.0.0' });
  server.registerTool('list_open', { description: 'Open issue numbers' }, async () => {
    issues.served.push('list_open');
    return { content: [{ type: 'text', text: JSON.stringify([...issues.open].sort()) }] };
  });
  server.registerTool(
    'close_issue',
    { description: 'Close an issue', inputSchema: { number: z.number() } },
    async ({ number }) => {
      issues.served.push(`close_issue ${number}`);
      issues.open.delete(number);
      return { content: [{ type: 'text', text: JSON.stringify({ closed: number }) }] };
    },
  );
  const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
  await server.connect(serverTransport);
  const client = new Client({ name: 'host', version: '1.0.0' });
  await client.connect(clientTransport);
  return client;
}

function trackerConnector(client: Client): McpConnector {
  class Tracker extends McpConnector {
    name() {
      return 'tracker';
    }
    createConnection() {
      return { client: client as never, fetchTools: async () => (await client.listTools()).tools as never };
    }
    protected override tool(name: string, t: Parameters<McpConnector['tool']>[1]) {
      return name === 'close_issue' ? { ...t, requiresApproval: true } : t;
    }
  }
  return new Tracker({} as never, {});
}

const SPEC = {
  openapi: '3.0.0',
  info: { title: 'Pets', version: '1.0.0' },
  paths: {
    '/pets/{id}': {
      get: {
        operationId: 'getPet',
        parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'integer' } }],
      },
      delete: {
        operationId: 'deletePet',
        parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'integer' } }],
      },
    },
  },
};

function petsConnector(baseUrl: string): OpenApiConnector {
  class Pets extends OpenApiConnector {
    name() {
      return 'pets';
    }
    spec() {
      return SPEC;
    }
    async request(options: { path: string; method?: string }) {
      const response = await fetch(new URL(options.path, baseUrl), { method: options.method ?? 'GET' });
      return response.json();
    }
    protected override tool(name: string, t: Parameters<OpenApiConnector['tool']>[1]) {
      return name === 'deletePet' ? { ...t, requiresApproval: true } : t;
    }
  }
  return new Pets({} as never, {});
}

const pets = new Map<number, string>();
const petRequests: string[] = [];
let petServer: Server;
let petUrl: string;

beforeAll(async () => {
  petServer = createServer((request, response) => {
    petRequests.push(`${request.method} ${request.url}`);
    const id = Number(request.url?.split('/').at(-1));
    if (request.method === 'DELETE') pets.delete(id);
    response.setHeader('content-type', 'application/json');
    response.end(JSON.stringify(request.method === 'DELETE' ? { deleted: id } : { id, name: pets.get(id) ?? null }));
  });
  await new Promise<void>((resolve) => petServer.listen(0, '127.0.0.1', resolve));
  petUrl = `http://127.0.0.1:${(petServer.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => petServer.close(resolve));
});

describeOnBothExecutors("upstream's connectors on the durable state", (executor) => {
  let dir: string;
  let ctx: DurableState;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'durable-connectors-'));
    ctx = await openDurableState({ path: dir, exports: { CodemodeRuntime } });
  });

  afterEach(async () => {
    await ctx.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('McpConnector over an MCP SDK client: a read, a gated write, pause, approve', async () => {
    const issues: Issues = { open: new Set([1, 2, 3]), served: [] };
    const client = await mcpClient(issues);
    try {
      const runtime = createCodemodeRuntime({
        ctx: ctx as never,
        executor: executor(),
        connectors: [trackerConnector(client)],
      });
      const code = `async () => {
        const open = await tracker.list_open();
        return await tracker.close_issue({ number: open[0] });
      }`;
      const first = await runtime.execute({ code });
      expect(first).toMatchObject({
        status: 'paused',
        pending: [{ connector: 'tracker', method: 'close_issue', args: { number: 1 } }],
      });
      const approved = await runtime.approve({ executionId: first.executionId });
      expect(approved).toMatchObject({ status: 'completed', result: { closed: 1 } });
      expect(issues.served).toEqual(['list_open', 'close_issue 1']);
      expect([...issues.open]).toEqual([2, 3]);
    } finally {
      await client.close();
    }
  });

  it('OpenApiConnector from a spec against a loopback server: a read, a gated write, pause, approve', async () => {
    pets.clear();
    pets.set(7, 'Rex');
    petRequests.length = 0;
    const runtime = createCodemodeRuntime({
      ctx: ctx as never,
      executor: executor(),
      connectors: [petsConnector(petUrl)],
    });
    const code = `async () => {
      const pet = await pets.getPet({ id: 7 });
      const gone = await pets.deletePet({ id: pet.id });
      return { name: pet.name, gone };
    }`;
    const first = await runtime.execute({ code });
    expect(first).toMatchObject({
      status: 'paused',
      pending: [{ connector: 'pets', method: 'deletePet', args: { id: 7 } }],
    });
    const approved = await runtime.approve({ executionId: first.executionId });
    expect(approved).toMatchObject({ status: 'completed', result: { name: 'Rex', gone: { deleted: 7 } } });
    expect(petRequests).toEqual(['GET /pets/7', 'DELETE /pets/7']);
  });
});

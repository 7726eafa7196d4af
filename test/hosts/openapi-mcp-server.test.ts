/**
 * Upstream's `openApiMcpServer` in a Node host: it turns an OpenAPI spec into a `search` and an
 * `execute` tool, wraps the model's code into a program that carries the spec (with its `$ref`s
 * resolved in the sandbox), and answers `codemode.request()` on the host. A real MCP client calls
 * both tools.
 */
import '../../src/register/index.js';
import { openApiMcpServer } from '@cloudflare/codemode/mcp';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { listIssues } from './support/issues.js';
import { connectModelClient } from './support/mcp-client.js';
import { describeOnBothExecutors } from './support/on-both-executors.js';

/** A spec whose response schema sits behind a `$ref`, which the sandbox resolves. */
const SPEC = {
  openapi: '3.0.0',
  info: { title: 'Issues', version: '1.0.0' },
  paths: {
    '/repos/{repo}/issues': {
      get: {
        operationId: 'listIssues',
        summary: 'List the open issues of a repository',
        tags: ['issues'],
        responses: { 200: { content: { 'application/json': { schema: { $ref: '#/components/schemas/Issues' } } } } },
      },
    },
  },
  components: { schemas: { Issues: { type: 'array', items: { type: 'object' } } } },
};

describeOnBothExecutors('openApiMcpServer with the MCP SDK', (executor) => {
  let client: Client;
  /** Every request the host answered, as the sandbox asked for it. */
  const requests: unknown[] = [];

  beforeAll(async () => {
    const server = openApiMcpServer({
      spec: SPEC,
      executor: executor(),
      request: async (options) => {
        requests.push(options);
        const repo = decodeURIComponent(options.path.split('/')[2] ?? '');
        return listIssues({ repo });
      },
    });
    client = await connectModelClient(server);
  });

  afterAll(async () => {
    await client?.close();
  });

  const call = (name: 'search' | 'execute', code: string) => client.callTool({ name, arguments: { code } });

  it('searches the spec, with its $refs resolved in the sandbox', async () => {
    const code = `async () => {
      const spec = await codemode.spec();
      const operation = spec.paths["/repos/{repo}/issues"].get;
      return { id: operation.operationId, schema: operation.responses["200"].content["application/json"].schema };
    }`;
    expect(await call('search', code)).toEqual({
      content: [
        {
          type: 'text',
          text: JSON.stringify({ id: 'listIssues', schema: { type: 'array', items: { type: 'object' } } }, null, 2),
        },
      ],
    });
  });

  it('executes a request the host answers, and hands the model what the program made of it', async () => {
    requests.length = 0;
    const code = `async () => {
      const issues = await codemode.request({ method: "GET", path: "/repos/acme%2Fapp/issues" });
      return issues.map((issue) => issue.title);
    }`;
    expect(await call('execute', code)).toEqual({
      content: [{ type: 'text', text: JSON.stringify(['Crash on start', 'Docs typo'], null, 2) }],
    });
    expect(requests).toEqual([{ method: 'GET', path: '/repos/acme%2Fapp/issues' }]);
  });

  it('answers a program that throws with an error result carrying its message', async () => {
    expect(await call('execute', 'async () => { throw new Error("no such endpoint") }')).toEqual({
      content: [{ type: 'text', text: 'Error: no such endpoint' }],
      isError: true,
    });
  });
});

/**
 * Upstream's `codeMcpServer` in a Node host: it wraps a host's MCP server into one `code` tool
 * and runs the model's code on our executor. A real MCP client, over the SDK's in-memory
 * transport, lists the tool and calls it, and sees what a model's client would.
 */
import '../../src/register/index.js';
import { codeMcpServer } from '@cloudflare/codemode/mcp';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { z } from 'zod';
import {
  FAILING_ERROR,
  FAILING_PROGRAM,
  LISTING_PROGRAM,
  LISTING_RESULT,
  listIssues,
  TOOL_DESCRIPTION,
  TOOL_IDENTIFIER,
  TOOL_NAME,
  UNKNOWN_TOOL_ERROR,
  UNKNOWN_TOOL_PROGRAM,
} from './support/issues.js';
import { connectModelClient } from './support/mcp-client.js';
import { describeOnBothExecutors } from './support/on-both-executors.js';

/** The host's own MCP server, with the one tool under its raw name. */
function hostServer(): McpServer {
  const server = new McpServer({ name: 'issues', version: '1.0.0' });
  server.registerTool(
    TOOL_NAME,
    { description: TOOL_DESCRIPTION, inputSchema: { repo: z.string().describe('owner/name') } },
    async ({ repo }) => ({ content: [{ type: 'text', text: JSON.stringify(listIssues({ repo })) }] }),
  );
  return server;
}

describeOnBothExecutors('codeMcpServer with the MCP SDK', (executor) => {
  let client: Client;

  beforeAll(async () => {
    const server = await codeMcpServer({ server: hostServer(), executor: executor() });
    client = await connectModelClient(server);
  });

  afterAll(async () => {
    await client?.close();
  });

  const callCode = (code: string) => client.callTool({ name: 'code', arguments: { code } });

  it('lists one code tool, whose description shows the model the identifier the sandbox binds', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(['code']);
    const description = tools[0]!.description!;
    expect(description).toContain(`\t${TOOL_IDENTIFIER}: (input: ListIssuesInput) => Promise<ListIssuesOutput>;`);
    expect(description).toContain(
      `Example: async () => { const r = await codemode.${TOOL_IDENTIFIER}({ repo: "..." }); return r; }`,
    );
  });

  it('answers a program with the value it computed, as the pretty JSON text a model reads', async () => {
    expect(await callCode(LISTING_PROGRAM)).toEqual({
      content: [{ type: 'text', text: JSON.stringify(LISTING_RESULT, null, 2) }],
    });
  });

  it('answers a program that throws with an error result carrying its message', async () => {
    expect(await callCode(FAILING_PROGRAM)).toEqual({
      content: [{ type: 'text', text: `Error: ${FAILING_ERROR}` }],
      isError: true,
    });
  });

  it('answers a call to a tool the host never declared with the dialect text', async () => {
    expect(await callCode(UNKNOWN_TOOL_PROGRAM)).toEqual({
      content: [{ type: 'text', text: `Error: ${UNKNOWN_TOOL_ERROR}` }],
      isError: true,
    });
  });
});

/**
 * A real MCP client connected to a host's MCP server over the SDK's in-memory transport, as a
 * model's client would be.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';

export async function connectModelClient(server: McpServer): Promise<Client> {
  const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
  await server.connect(serverTransport);
  const client = new Client({ name: 'model-client', version: '1.0.0' });
  await client.connect(clientTransport);
  return client;
}

// A real MCP server over stdio for the end-to-end tests, spawned by the gateway itself
// (`command: node`, `args: [this file]`). Plain JavaScript so that no loader is needed.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import process from 'node:process';
import { z } from 'zod';

const server = new McpServer({ name: 'fixture-stdio', version: '1.0.0' }, { instructions: 'A local stdio fixture.' });

server.registerTool('shout', { description: 'Upper-case the text.', inputSchema: { text: z.string() } }, ({ text }) => ({
  content: [{ type: 'text', text: `stdio: ${text.toUpperCase()}` }],
}));

// Which variables the process received: the gateway must pass only a minimal environment.
server.registerTool('environment', { description: 'List the names of the environment variables of the process.' }, () => ({
  content: [{ type: 'text', text: JSON.stringify(Object.keys(process.env).sort()) }],
}));

// Which process served the call: sessions share the one process of a stdio server (ADR 0033).
server.registerTool('pid', { description: 'The process id of the server.' }, () => ({
  content: [{ type: 'text', text: String(process.pid) }],
}));

process.stderr.write('stdio fixture ready\n');
await server.connect(new StdioServerTransport());

// The `traceparent` rein sends on: to model servers and to remote MCP servers, only when
// the agent's telemetry allows it, naming the span of the request or tool call.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';
import { startMcp, type McpHost } from '../../src/mcp/host.js';
import { fault, text, toolCall } from '../../src/testing/index.js';
import { setup } from '../loop/helpers.js';
import { memoryOtel } from './otel.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-0[01]$/;

describe('traceparent to model servers', () => {
  it('each request attempt carries the traceparent of its own chat span when allowed', async () => {
    const o = memoryOtel();
    cleanups.push(() => o.close());
    const { agent, server } = await setup([fault({ type: 'status', status: 500 }), text('ok')], {
      telemetry: { tracerProvider: o.tracerProvider, propagate: { model: true } },
    });
    const result = await agent.run('hi');
    const sent = server.received.map((r) => String(r.headers.traceparent));
    const chats = o.spans().filter((s) => s.name.startsWith('chat'));
    expect(sent).toEqual(chats.map((s) => `00-${result.traceId}-${s.spanContext().spanId}-01`));
    expect(new Set(sent).size).toBe(2);
  });

  it('is not sent unless allowed, even with an SDK; and is sent without one from a caller’s traceparent', async () => {
    const o = memoryOtel();
    cleanups.push(() => o.close());
    const { agent, server } = await setup([text('ok')], { telemetry: { tracerProvider: o.tracerProvider } });
    await agent.run('hi');
    expect(server.received[0]?.headers.traceparent).toBeUndefined();

    const { agent: bare, server: other } = await setup([text('ok')], { telemetry: { propagate: true } });
    await bare.run('hi', { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01', tracestate: 'congo=t61rcWkgMzE' });
    const header = String(other.received[0]?.headers.traceparent);
    expect(header).toMatch(TRACEPARENT);
    expect(TRACEPARENT.exec(header)?.[1]).toBe('0af7651916cd43dd8448eb211c80319c');
    expect(header).not.toContain('b7ad6b7169203331');
    expect(other.received[0]?.headers.tracestate).toBe('congo=t61rcWkgMzE');
  });
});

/** An MCP server over Streamable HTTP (the official SDK, stateless) that keeps the headers of each tools/call. */
async function recordingMcpServer(): Promise<{ url: string; calls: IncomingHttpHeaders[]; all: IncomingHttpHeaders[] }> {
  const calls: IncomingHttpHeaders[] = [];
  const all: IncomingHttpHeaders[] = [];
  const http: Server = createServer(async (req, res) => {
    all.push(req.headers);
    let raw = '';
    for await (const chunk of req) raw += String(chunk);
    const body = raw ? (JSON.parse(raw) as { method?: string }) : undefined;
    if (body?.method === 'tools/call') calls.push(req.headers);
    const mcp = new McpServer({ name: 'recorder', version: '1.0.0' });
    mcp.registerTool('echo', { description: 'Echoes.', inputSchema: { text: z.string() } }, async ({ text: t }) => ({
      content: [{ type: 'text', text: t }],
    }));
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on('close', () => void transport.close().then(() => mcp.close()));
    await mcp.connect(transport);
    await transport.handleRequest(req, res, body);
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        http.closeAllConnections();
        http.close(() => resolve());
      }),
  );
  return { url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`, calls, all };
}

async function mcpHost(url: string): Promise<McpHost> {
  const host = await startMcp({ servers: { rec: { type: 'http', url } }, configFiles: false, reconnect: false, pingIntervalMs: 0 });
  cleanups.push(() => host.close());
  return host;
}

describe('traceparent to remote MCP servers', () => {
  it('a tool call’s request carries the traceparent of its execute_tool span when allowed', async () => {
    const o = memoryOtel();
    cleanups.push(() => o.close());
    const recorder = await recordingMcpServer();
    const host = await mcpHost(recorder.url);
    const { agent } = await setup([toolCall('rec__echo', { text: 'hello' }), text('done')], {
      toolSources: [host],
      telemetry: { tracerProvider: o.tracerProvider, propagate: { mcp: true } },
    });
    const result = await agent.run('echo');
    expect(result.reason).toBe('final_answer');
    const tool = o.spans().find((s) => s.name === 'execute_tool rec__echo');
    expect(recorder.calls).toHaveLength(1);
    expect(recorder.calls[0]?.traceparent).toBe(`00-${result.traceId}-${tool?.spanContext().spanId}-01`);
    // Requests outside a tool call (initialize, tools/list) carry none.
    expect(recorder.all.filter((h) => h.traceparent !== undefined)).toHaveLength(1);
  });

  it('is not sent unless allowed', async () => {
    const o = memoryOtel();
    cleanups.push(() => o.close());
    const recorder = await recordingMcpServer();
    const host = await mcpHost(recorder.url);
    const { agent } = await setup([toolCall('rec__echo', { text: 'hello' }), text('done')], {
      toolSources: [host],
      telemetry: { tracerProvider: o.tracerProvider, propagate: { model: true } },
    });
    await agent.run('echo');
    expect(recorder.calls).toHaveLength(1);
    expect(recorder.calls[0]?.traceparent).toBeUndefined();
  });
});

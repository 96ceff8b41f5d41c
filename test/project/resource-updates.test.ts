// Resource updates as a message to the model: a subscribed resource of a server whose entry
// says `updatesToModel` is updated during a tool call, and the run's next model call has the
// notice (logged as a steering message); without the setting only the host's event says so.
// Against a server of our own on the official SDK.
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { McpEvent } from '../../src/mcp/types.js';
import { steerResourceUpdates } from '../../src/project/resource-updates.js';
import { collect, setup } from '../loop/helpers.js';
import { host } from '../mcp/helpers.js';

const FEATURES = fileURLToPath(new URL('../mcp/fixtures/client-features-server.mjs', import.meta.url));

/** Touches the resource once, then answers. */
const touch = (request: { messages: Array<{ role: string }> }) =>
  !request.messages.some((m) => m.role === 'tool')
    ? { toolCalls: [{ name: 'f__touch', arguments: { uri: 'fixture://one' } }] }
    : { text: 'ok' };

describe('resource updates to the model', () => {
  it("with updatesToModel the update reaches the run's next model call as a steering message", async () => {
    const mcp = await host({ f: { command: process.execPath, args: [FEATURES], subscribe: ['fixture://one'], updatesToModel: true } });
    const { server, agent } = await setup(touch, { toolSources: [mcp] });
    const handle = agent.run('touch the resource');
    const stop = steerResourceUpdates(mcp, handle);
    const { events, result } = await collect(handle);
    stop();
    expect(result.status).toBe('done');
    const notice =
      '[MCP server "f" says its resource fixture://one was updated; read_resource({"server": "f", "uri": "fixture://one"}) reads it as it is now]';
    expect(events).toContainEqual(
      expect.objectContaining({ type: 'message_injected', kind: 'steer', message: expect.objectContaining({ role: 'user' }) }),
    );
    // The call after the tool's result carries it.
    const second = server.requests[1]!;
    expect(second.messages.at(-1)).toMatchObject({ role: 'user', content: notice });
    expect(second.messages.at(-2)).toMatchObject({ role: 'tool', content: 'notified' });
  });

  it('without it the update is only a host event: the model is not told', async () => {
    const seen: McpEvent[] = [];
    const mcp = await host(
      { f: { command: process.execPath, args: [FEATURES], subscribe: ['fixture://one'] } },
      { onEvent: (e) => seen.push(e) },
    );
    const { server, agent } = await setup(touch, { toolSources: [mcp] });
    const handle = agent.run('touch the resource');
    const stop = steerResourceUpdates(mcp, handle);
    const { events } = await collect(handle);
    stop();
    expect(seen).toContainEqual({ type: 'mcp_resource_updated', server: 'f', uri: 'fixture://one' });
    expect(events.some((e) => e.type === 'message_injected')).toBe(false);
    expect(server.requests[1]!.messages.at(-1)).toMatchObject({ role: 'tool', content: 'notified' });
  });
});

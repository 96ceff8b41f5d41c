// Lifecycle and mapping details of the host: process trees, pings, concurrency, naming,
// filters, schemas, error results, content types, logs.
import { describe, expect, it } from 'vitest';
import type { McpHost } from '../../src/mcp/host.js';
import type { McpLogEntry } from '../../src/mcp/types.js';
import { groupAlive } from '../../src/process/process-group.js';
import { createDispatcher } from '../../src/tools/dispatch.js';
import type { DispatchOutcome } from '../../src/tools/types.js';
import { FIXTURE, fixture, host, isGone, textOf, waitForState } from './helpers.js';

function dispatch(mcp: McpHost, name: string, args: Record<string, unknown> | string): Promise<DispatchOutcome> {
  const dispatcher = createDispatcher({ get: (n) => mcp.tools().find((t) => t.name === n), names: () => mcp.tools().map((t) => t.name) });
  const raw = typeof args === 'string' ? args : JSON.stringify(args);
  const call = { type: 'tool_call' as const, id: 'call_1', name, arguments: {}, rawArguments: raw };
  return dispatcher.dispatch(call, { signal: new AbortController().signal, runId: 'run', idempotencyKey: 'key' });
}

describe('closing', () => {
  it('kills the whole process tree of a stdio server, wrappers and grandchildren included', async () => {
    // `sh -c '…; true'` keeps the shell alive as the parent of the real server.
    const wrapped = { command: 'sh', args: ['-c', `"${process.execPath}" "${FIXTURE}"; true`] };
    const mcp = await host({ wrapped });
    const shellPid = mcp.status()[0]?.pid as number;
    const serverPid = Number(textOf((await mcp.callTool('wrapped', 'whoami')).content));
    const grandchild = Number(textOf((await mcp.callTool('wrapped', 'spawn_child')).content));
    expect(new Set([shellPid, serverPid, grandchild]).size).toBe(3);
    expect([shellPid, serverPid, grandchild].map(isGone)).toEqual([false, false, false]);
    await mcp.close();
    expect([shellPid, serverPid, grandchild].map(isGone)).toEqual([true, true, true]);
    expect(groupAlive(shellPid)).toBe(false);
    // Closing twice is harmless.
    await mcp.close();
  });

  it('kills what a crashed server left behind', async () => {
    const mcp = await host({ f: fixture() }, { reconnect: false });
    const grandchild = Number(textOf((await mcp.callTool('f', 'spawn_child')).content));
    await mcp.callTool('f', 'crash').catch(() => undefined);
    await waitForState(mcp, 'f', 'failed');
    await expect.poll(() => isGone(grandchild), { timeout: 5000, interval: 20 }).toBe(true);
  });
});

describe('talking to servers', () => {
  it('answers the server’s pings', async () => {
    const mcp = await host({ f: fixture() });
    expect(textOf((await mcp.callTool('f', 'ping_client')).content)).toBe('the client answered ping');
  });

  it('serves many concurrent calls on one connection, a hanging one not blocking the rest', async () => {
    const mcp = await host({ f: fixture() });
    const hanging = mcp.callTool('f', 'hang', {}, { timeoutMs: 1500 }).catch((error: Error) => error);
    const results = await Promise.all(Array.from({ length: 40 }, (_, i) => mcp.callTool('f', 'echo', { text: `n${i}` })));
    expect(results.map((r) => textOf(r.content))).toEqual(Array.from({ length: 40 }, (_, i) => `n${i}`));
    expect(await hanging).toMatchObject({ code: 'timeout' });
  });

  it('captures stderr into the log and the status, with connection events', async () => {
    const log: McpLogEntry[] = [];
    const mcp = await host({ f: fixture() }, { log: (entry) => log.push(entry) });
    const pid = mcp.status()[0]?.pid;
    expect(log).toContainEqual({ server: 'f', level: 'info', kind: 'stderr', message: `fixture: stdio server ${pid} ready` });
    expect(log.some((e) => e.kind === 'event' && /connected over stdio to fault-fixture 1\.0\.0, \d+ tools/.test(e.message))).toBe(true);
    expect(mcp.status()[0]?.recentLog).toContain(`fixture: stdio server ${pid} ready`);
  });

  it('a disabled server is listed but not started, and its calls say why', async () => {
    const mcp = await host({ off: fixture({}, { enabled: false }) });
    expect(mcp.status()[0]).toMatchObject({ name: 'off', state: 'disabled', toolCount: 0 });
    expect(mcp.status()[0]?.pid).toBeUndefined();
    await expect(mcp.callTool('off', 'echo', { text: 'x' })).rejects.toMatchObject({
      code: 'mcp_unavailable',
      message: expect.stringContaining('is disabled in its configuration'),
    });
    await expect(mcp.whenConnected('off')).rejects.toMatchObject({ code: 'mcp_unavailable' });
  });

  it('can start in the background and be awaited', async () => {
    const mcp = await host({ f: fixture() }, { wait: false });
    expect(mcp.status()[0]?.state).toBe('connecting');
    await mcp.whenConnected('f');
    expect(mcp.status()[0]?.state).toBe('connected');
    await mcp.ready();
  });
});

describe('naming and filtering', () => {
  it('sanitizes names, keeps them unique, and honours toolPrefix and toolName', async () => {
    const mcp = await host({
      'my.server': fixture({}, { tools: ['echo'] }),
      bare: fixture({}, { toolPrefix: '', tools: ['echo', 'whoami'] }),
      bare2: fixture({}, { toolPrefix: '', tools: ['echo'] }),
    });
    const names = mcp.tools().map((t) => t.name);
    expect(names).toEqual(['my_server__echo', 'echo', 'whoami', 'echo_2', 'list_resources', 'read_resource']);
    expect(mcp.toolInfo('bare2')).toEqual([expect.objectContaining({ server: 'bare2', name: 'echo_2', mcpName: 'echo' })]);
    const outcome = await dispatch(mcp, 'echo_2', { text: 'from bare2' });
    expect(textOf(outcome.result.content)).toBe('from bare2');

    const custom = await host({ f: fixture({}, { tools: ['echo'] }) }, { toolName: (server, tool) => `mcp.${server}.${tool}` });
    expect(custom.tools()[0]?.name).toBe('mcp_f_echo');
  });

  it('allow and deny lists with globs decide which tools are offered', async () => {
    const mcp = await host({ f: fixture({}, { tools: { allow: ['*_content', 'echo', 'who*'], deny: ['who*'] } }) });
    expect(mcp.toolInfo('f').map((t) => t.mcpName)).toEqual(['echo', 'all_content']);
    await expect(mcp.callTool('f', 'whoami')).rejects.toMatchObject({
      code: 'not_found',
      message: expect.stringContaining('filtered out'),
    });
  });
});

describe('schemas and results', () => {
  it('normalizes an odd server schema, and the dispatcher validates against it before calling', async () => {
    const mcp = await host({ f: fixture() });
    const odd = mcp.tools().find((t) => t.name === 'f__odd_schema');
    expect(odd?.parameters).toEqual({
      $schema: 'http://json-schema.org/draft-04/schema#',
      type: 'object',
      properties: { n: { type: 'integer', exclusiveMinimum: 0 } },
      required: ['n'],
    });
    expect(odd).toMatchObject({ risk: 'write', effect: 'idempotent' });
    const invalid = await dispatch(mcp, 'f__odd_schema', { n: 0 });
    expect(invalid.errorCode).toBe('invalid_arguments');
    const coerced = await dispatch(mcp, 'f__odd_schema', '{"n": "21"}');
    expect(coerced.result).toMatchObject({ isError: false, content: [{ type: 'text', text: '42' }] });
  });

  it('isError results and protocol errors both become error results the model can act on', async () => {
    const mcp = await host({ f: fixture() });
    const failed = await dispatch(mcp, 'f__fail', {});
    expect(failed.result).toMatchObject({ isError: true, content: [{ type: 'text', text: 'the widget is jammed; try widget 2' }] });
    const thrown = await dispatch(mcp, 'f__throw', {});
    expect(thrown.result.isError).toBe(true);
    expect(textOf(thrown.result.content)).toBe(
      'tool "f__throw" failed: MCP server "f" refused tools/call "throw": MCP error -32602: n must be even',
    );
  });

  it('maps every content type', async () => {
    const mcp = await host({ f: fixture() });
    const result = await mcp.callTool('f', 'all_content');
    const [text, image, audio, embeddedText, imageLabel, imageBlob, binary, link] = result.content;
    expect(text).toEqual({ type: 'text', text: 'plain text' });
    expect(image).toMatchObject({ type: 'image', mimeType: 'image/png' });
    expect(audio).toEqual({ type: 'text', text: '[audio audio/wav, 6 bytes: not shown, models here take no audio in tool results]' });
    expect(embeddedText).toEqual({ type: 'text', text: '[resource fixture://a.txt (text/plain) from f]\nembedded text' });
    expect(imageLabel).toEqual({ type: 'text', text: '[resource fixture://b.png (image/png) from f]' });
    expect(imageBlob).toMatchObject({ type: 'image', mimeType: 'image/png' });
    expect(binary).toEqual({
      type: 'text',
      text: '[resource fixture://c.bin (application/octet-stream) from f] binary, 6 bytes: not shown',
    });
    expect(link).toEqual({
      type: 'text',
      text: '[resource link] notes: fixture://notes.txt (text/plain); read it with read_resource {"server":"f","uri":"fixture://notes.txt"}',
    });
    expect(result.details).toEqual({
      server: 'f',
      tool: 'all_content',
      structuredContent: { answer: 42 },
      omitted: [
        { type: 'audio', mimeType: 'audio/wav', bytes: 6 },
        { type: 'resource', mimeType: 'application/octet-stream', uri: 'fixture://c.bin', bytes: 6 },
      ],
    });
  });

  it('reports progress through ctx.progress', async () => {
    const mcp = await host({ f: fixture() });
    const updates: unknown[] = [];
    const dispatcher = createDispatcher(
      { get: (n) => mcp.tools().find((t) => t.name === n), names: () => [] },
      { onProgress: (_call, update) => updates.push(update) },
    );
    const call = { type: 'tool_call' as const, id: 'c', name: 'f__progress', arguments: {}, rawArguments: '{"steps": 2}' };
    const outcome = await dispatcher.dispatch(call, { signal: new AbortController().signal, runId: 'r', idempotencyKey: 'k' });
    expect(textOf(outcome.result.content)).toBe('done');
    expect(updates).toEqual([
      { progress: 1, total: 2, message: 'step 1' },
      { progress: 2, total: 2, message: 'step 2' },
    ]);
  });

  it('a mention of a server that offers no such resource is named in problems and left in the text', async () => {
    const mcp = await host({ f: fixture() });
    const expanded = await mcp.expandMentions('see @f:fixture://notes.txt and @f:fixture://missing and @unknown:x://y');
    expect(expanded.attached).toEqual([{ server: 'f', uri: 'fixture://notes.txt' }]);
    expect(textOf(expanded.content.slice(1))).toBe('[resource fixture://notes.txt (text/plain) from f]\nremember the milk');
    expect(expanded.problems).toEqual([
      expect.stringMatching(
        /^@f:fixture:\/\/missing was not attached: MCP server "f" refused resources\/read "fixture:\/\/missing": .*no resource fixture:\/\/missing/,
      ),
    ]);
    const prompt = await mcp.expandPromptCommand('/f:greet Ada');
    expect(prompt?.arguments).toEqual({ who: 'Ada' });
    expect(textOf(prompt!.content)).toBe('Greet Ada in a kind way.');
    await expect(mcp.expandPromptCommand('/f:greet tone=stern')).rejects.toMatchObject({ message: expect.stringContaining('missing who') });
  });
});

// rein's MCP host against real third-party servers from npm, started by the tests.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EVERYTHING, FILESYSTEM, MEMORY, everything, freePort, host, startHttpServer, tempDir, textOf } from './helpers.js';

describe('server-everything over stdio', () => {
  it('offers its tools as <server>__<tool> with their schemas, risk and effect', async () => {
    const mcp = await host({ everything: everything() });
    expect(mcp.status()[0]).toMatchObject({
      name: 'everything',
      transport: 'stdio',
      state: 'connected',
      serverInfo: { name: 'mcp-servers/everything' },
    });
    const echo = mcp.tools().find((t) => t.name === 'everything__echo');
    expect(echo?.parameters).toMatchObject({ type: 'object', properties: { message: { type: 'string' } }, required: ['message'] });
    expect(echo).toMatchObject({ risk: 'read', effect: 'pure', timeoutMs: 60_000 });
    const toggle = mcp.tools().find((t) => t.name === 'everything__toggle-simulated-logging');
    expect(toggle).toMatchObject({ risk: 'write', effect: 'unsafe' });
    // The server offers resources, so the resource tools are there too.
    expect(mcp.tools().map((t) => t.name)).toEqual(expect.arrayContaining(['list_resources', 'read_resource']));
    expect(mcp.status()[0]?.toolCount).toBe(mcp.tools().length - 2);
    expect(mcp.instructions()).toEqual([{ server: 'everything', text: expect.stringContaining('Everything') }]);
  });

  it('maps text, images, structured content, resource links and embedded resources', async () => {
    const mcp = await host({ everything: everything() });
    const echo = await mcp.callTool('everything', 'echo', { message: 'hello' });
    expect(echo).toMatchObject({ isError: false, content: [{ type: 'text', text: 'Echo: hello' }] });

    const sum = await mcp.callTool('everything', 'everything__get-sum', { a: 2, b: 40 });
    expect(textOf(sum.content)).toContain('42');

    const image = await mcp.callTool('everything', 'get-tiny-image', {});
    expect(image.content.some((p) => p.type === 'image' && p.mimeType === 'image/png' && p.data.length > 100)).toBe(true);

    const structured = await mcp.callTool('everything', 'get-structured-content', { location: 'Chicago' });
    expect(structured.details.structuredContent).toMatchObject({ temperature: expect.any(Number), conditions: expect.any(String) });

    const links = await mcp.callTool('everything', 'get-resource-links', { count: 2 });
    const linkText = textOf(links.content);
    expect(linkText).toMatch(/\[resource link\] Text Resource 2: demo:\/\/resource\/dynamic\/text\/2 \(text\/plain/);
    expect(linkText).toContain('read_resource {"server":"everything","uri":"demo://resource/dynamic/text/2"}');

    const embedded = await mcp.callTool('everything', 'get-resource-reference', { resourceType: 'Text', resourceId: 3 });
    expect(textOf(embedded.content)).toMatch(/\[resource demo:\/\/resource\/dynamic\/text\/3 \(text\/plain\) from everything\]\n/);
  });

  it('surfaces progress notifications of a long call', async () => {
    const mcp = await host({ everything: everything() });
    const progress: Array<{ progress: number; total?: number }> = [];
    const result = await mcp.callTool(
      'everything',
      'trigger-long-running-operation',
      { duration: 0.3, steps: 3 },
      { onProgress: (p) => progress.push(p) },
    );
    expect(textOf(result.content)).toContain('Long running operation completed');
    expect(progress).toEqual([
      { progress: 1, total: 3 },
      { progress: 2, total: 3 },
      { progress: 3, total: 3 },
    ]);
  });

  it('lists and reads resources, through the host and through the built-in tools', async () => {
    const mcp = await host({ everything: everything() });
    const listing = await mcp.listResources();
    const doc = listing.resources.find((r) => r.uri.startsWith('demo://resource/static/document/'));
    expect(doc).toMatchObject({ server: 'everything', mimeType: expect.any(String) });
    expect(listing.templates.some((t) => t.uriTemplate.includes('{'))).toBe(true);

    const read = await mcp.readResource('everything', doc!.uri);
    expect(textOf(read.parts)).toContain(`[resource ${doc!.uri}`);

    const ctx = {
      signal: new AbortController().signal,
      runId: 'r',
      toolCallId: 'c',
      idempotencyKey: 'k',
      log: () => {},
      progress: () => {},
    };
    const listTool = mcp.tools().find((t) => t.name === 'list_resources')!;
    const listed = (await listTool.execute({}, ctx)) as { content: string };
    expect(listed.content).toContain(`everything: ${doc!.uri}`);
    const readTool = mcp.tools().find((t) => t.name === 'read_resource')!;
    const blob = (await readTool.execute({ server: 'everything', uri: 'demo://resource/dynamic/blob/1' }, ctx)) as {
      content: Array<{ type: string; text?: string }>;
    };
    expect(textOf(blob.content)).toMatch(/binary, \d+ bytes: not shown/);
  });

  it('expands /server:prompt commands and @server:uri mentions', async () => {
    const mcp = await host({ everything: everything() });
    const prompts = await mcp.listPrompts();
    expect(prompts.find((p) => p.name === 'args-prompt')).toMatchObject({
      server: 'everything',
      arguments: [
        { name: 'city', required: true },
        { name: 'state', required: false },
      ],
    });
    const named = await mcp.expandPromptCommand('/everything:args-prompt city="New York" state=NY');
    expect(textOf(named!.content)).toBe("What's weather in New York, NY?");
    const positional = await mcp.expandPromptCommand("/everything:args-prompt 'San Francisco'");
    expect(textOf(positional!.content)).toBe("What's weather in San Francisco?");
    await expect(mcp.expandPromptCommand('/everything:args-prompt state=NY')).rejects.toMatchObject({
      code: 'invalid_arguments',
      message: expect.stringContaining('missing city; usage: /everything:args-prompt city=<city> [state=<state>]'),
    });
    await expect(mcp.expandPromptCommand('/everything:nope')).rejects.toMatchObject({
      code: 'not_found',
      message: expect.stringContaining('/everything:args-prompt'),
    });
    expect(await mcp.expandPromptCommand('/help')).toBeUndefined();
    expect(await mcp.expandPromptCommand('/other:prompt x')).toBeUndefined();

    const expanded = await mcp.expandMentions('Summarize @everything:demo://resource/static/document/features.md, mail me@everything:x.');
    expect(expanded.attached).toEqual([{ server: 'everything', uri: 'demo://resource/static/document/features.md' }]);
    expect(expanded.problems).toEqual([]);
    expect(expanded.content[0]).toEqual({ type: 'text', text: expanded.text });
    expect(textOf(expanded.content.slice(1))).toContain('# Everything Server - Features');
  });
});

describe('server-everything over HTTP', () => {
  it('works over Streamable HTTP', async () => {
    const port = await freePort();
    const { url } = await startHttpServer([EVERYTHING, 'streamableHttp'], /listening on port/, port);
    const mcp = await host({ remote: { url: `${url}/mcp` } });
    expect(mcp.status()[0]).toMatchObject({ transport: 'http', state: 'connected' });
    const result = await mcp.callTool('remote', 'echo', { message: 'over http' });
    expect(textOf(result.content)).toBe('Echo: over http');
  });

  it('falls back to legacy SSE when the URL answers that way', async () => {
    const port = await freePort();
    const { url } = await startHttpServer([EVERYTHING, 'sse'], /running on port/, port);
    const mcp = await host({ legacy: { url: `${url}/sse` } });
    expect(mcp.status()[0]).toMatchObject({ transport: 'sse', state: 'connected' });
    const result = await mcp.callTool('legacy', 'get-sum', { a: 1, b: 2 });
    expect(textOf(result.content)).toContain('3');
  });
});

describe('server-filesystem confined to a temporary folder', () => {
  it('reads and writes inside the folder and is refused outside it', async () => {
    const dir = await tempDir();
    await writeFile(join(dir, 'notes.md'), '# Notes\nbuy milk\n');
    // `roots: false`: no roots are announced, so the server keeps the folder of its arguments.
    const mcp = await host({ fs: { command: process.execPath, args: [FILESYSTEM, dir], roots: false } });
    const read = await mcp.callTool('fs', 'read_text_file', { path: join(dir, 'notes.md') });
    expect(textOf(read.content)).toContain('buy milk');
    const written = await mcp.callTool('fs', 'fs__write_file', { path: join(dir, 'out.txt'), content: 'from rein' });
    expect(written.isError).toBe(false);
    const back = await mcp.callTool('fs', 'read_text_file', { path: join(dir, 'out.txt') });
    expect(textOf(back.content)).toBe('from rein');
    const outside = await mcp.callTool('fs', 'read_text_file', { path: '/etc/hostname' });
    expect(outside.isError).toBe(true);
    expect(textOf(outside.content)).toMatch(/access denied|outside allowed/i);
    const write = mcp.tools().find((t) => t.name === 'fs__write_file');
    expect(write).toMatchObject({ risk: 'write', effect: 'idempotent' });
  });

  it('follows the roots rein announces (the workspace by default) over the folders of its arguments', async () => {
    const workspace = await tempDir();
    const other = await tempDir();
    await writeFile(join(workspace, 'a.md'), 'in the workspace\n');
    await writeFile(join(other, 'b.md'), 'elsewhere\n');
    let rootsTaken: () => void = () => undefined;
    const taken = new Promise<void>((resolve) => (rootsTaken = resolve));
    // The server asks for the roots after `initialized` and says so on stderr.
    const log = (entry: { message: string }): void =>
      void (/Updated allowed directories from MCP roots/.test(entry.message) && rootsTaken());
    const mcp = await host({ fs: { command: process.execPath, args: [FILESYSTEM, other], roots: [workspace] } }, { log });
    await taken;
    const inside = await mcp.callTool('fs', 'read_text_file', { path: join(workspace, 'a.md') });
    expect(textOf(inside.content)).toContain('in the workspace');
    const outside = await mcp.callTool('fs', 'read_text_file', { path: join(other, 'b.md') });
    expect(outside.isError).toBe(true);
  });
});

describe('server-memory', () => {
  it('stores entities and reads them back', async () => {
    const dir = await tempDir();
    const mcp = await host({ memory: { command: process.execPath, args: [MEMORY], env: { MEMORY_FILE_PATH: join(dir, 'memory.jsonl') } } });
    const created = await mcp.callTool('memory', 'create_entities', {
      entities: [{ name: 'rein', entityType: 'project', observations: ['an agent harness'] }],
    });
    expect(created.isError).toBe(false);
    const graph = await mcp.callTool('memory', 'read_graph', {});
    expect(JSON.stringify(graph.details.structuredContent ?? textOf(graph.content))).toContain('an agent harness');
  });
});

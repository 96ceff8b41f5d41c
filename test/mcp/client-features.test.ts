// The client side of MCP beyond tools: pagination, server logs and logging/setLevel, roots,
// list_changed, subscriptions, completion — against a small server of our own over stdio
// and Streamable HTTP, and against server-everything.
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { McpEvent, McpLogEntry, McpServerConfig } from '../../src/mcp/types.js';
import { everything, fixture, host, startHttpServer, tempDir, textOf } from './helpers.js';

const FEATURES = fileURLToPath(new URL('./fixtures/client-features-server.mjs', import.meta.url));

function stdio(env: Record<string, string> = {}): McpServerConfig {
  return { command: process.execPath, args: [FEATURES], env };
}

/** Resolves with the first event `pick` accepts. */
function nextEvent<T extends McpEvent>(
  events: McpEvent[],
  listeners: Array<(e: McpEvent) => void>,
  pick: (e: McpEvent) => e is T,
): Promise<T> {
  const found = events.find(pick);
  if (found) return Promise.resolve(found);
  return new Promise((resolve) => listeners.push((e) => pick(e) && resolve(e)));
}

function recorder(): {
  events: McpEvent[];
  onEvent: (e: McpEvent) => void;
  next: <T extends McpEvent>(pick: (e: McpEvent) => e is T) => Promise<T>;
} {
  const events: McpEvent[] = [];
  const listeners: Array<(e: McpEvent) => void> = [];
  return {
    events,
    onEvent: (e) => {
      events.push(e);
      for (const l of listeners) l(e);
    },
    next: (pick) => nextEvent(events, listeners, pick),
  };
}

describe('pagination', () => {
  it('lists resources and templates over every page', async () => {
    const mcp = await host({ f: stdio() });
    const listing = await mcp.listResources('f');
    expect(listing.resources.map((r) => r.uri)).toEqual(['fixture://one', 'fixture://two']);
    expect(listing.templates.map((t) => t.uriTemplate)).toEqual(['fixture://a/{id}', 'fixture://b/{id}']);
    expect(listing.errors).toEqual([]);
  });

  it('reports a template page that fails, keeping the pages before it', async () => {
    const mcp = await host({ f: stdio({ TEMPLATES_FAIL: '1' }) });
    const listing = await mcp.listResources('f');
    expect(listing.resources).toHaveLength(2);
    expect(listing.templates.map((t) => t.uriTemplate)).toEqual(['fixture://a/{id}']);
    expect(listing.errors).toEqual([expect.stringMatching(/^f: resources\/templates\/list failed on page 2: .*template store is offline/)]);
    // The model's tool says so too.
    const tool = mcp.tools().find((t) => t.name === 'list_resources');
    const out = await tool?.execute({}, { signal: new AbortController().signal } as never);
    expect(JSON.stringify(out)).toContain('could not list f: resources/templates/list failed on page 2');
  });

  it('a server without templates is no error', async () => {
    const mcp = await host({ everything: everything() });
    const listing = await mcp.listResources('everything');
    expect(listing.errors).toEqual([]);
    expect(listing.templates.length).toBeGreaterThan(0);
  });
});

describe('server logs', () => {
  for (const transport of ['stdio', 'http'] as const) {
    it(`reach the log sink and events at the level set in config (${transport})`, async () => {
      const config: McpServerConfig =
        transport === 'stdio'
          ? { ...stdio(), logLevel: 'warning' }
          : { url: `${(await startHttpServer([FEATURES, 'http'], /listening (\d+)/)).url}/mcp`, logLevel: 'warning' };
      const log: McpLogEntry[] = [];
      const rec = recorder();
      const mcp = await host({ f: config }, { log: (e) => log.push(e), onEvent: rec.onEvent });
      await mcp.callTool('f', 'log_all', {});
      await rec.next((e): e is Extract<McpEvent, { type: 'mcp_log' }> => e.type === 'mcp_log' && e.level === 'emergency');
      const levels = rec.events.filter((e) => e.type === 'mcp_log').map((e) => (e as { level: string }).level);
      expect(levels).toEqual(['warning', 'error', 'critical', 'alert', 'emergency']);
      expect(rec.events.find((e) => e.type === 'mcp_log')).toEqual({
        type: 'mcp_log',
        server: 'f',
        level: 'warning',
        logger: 'fixture',
        data: { at: 'warning' },
      });
      const server = log.filter((e) => e.kind === 'server');
      expect(server.map((e) => e.level)).toEqual(['warn', 'error', 'error', 'error', 'error']);
      expect(server[0]?.message).toBe('fixture: {"at":"warning"}');
      // Changing the level later.
      await mcp.setLogLevel('f', 'debug');
      rec.events.length = 0;
      await mcp.callTool('f', 'log_all', {});
      await rec.next((e): e is McpEvent => e.type === 'mcp_log' && e.level === 'emergency');
      expect(rec.events.filter((e) => e.type === 'mcp_log')).toHaveLength(8);
    });
  }

  it('server-everything logs after toggle-simulated-logging, at the level set', async () => {
    const rec = recorder();
    const mcp = await host({ everything: { ...everything(), logLevel: 'error' } }, { onEvent: rec.onEvent });
    await mcp.callTool('everything', 'toggle-simulated-logging', {});
    const first = await rec.next((e): e is Extract<McpEvent, { type: 'mcp_log' }> => e.type === 'mcp_log');
    expect(['error', 'critical', 'alert', 'emergency']).toContain(first.level);
    await mcp.callTool('everything', 'toggle-simulated-logging', {});
  });
});

describe('roots', () => {
  it('announces the workspace and tells the server when the roots change', async () => {
    const dir = await tempDir();
    const other = await tempDir();
    const rec = recorder();
    const mcp = await host({ f: stdio() }, { cwd: dir, onEvent: rec.onEvent });
    const listed = JSON.parse(textOf((await mcp.callTool('f', 'roots', {})).content)) as { roots: Array<{ uri: string; name: string }> };
    expect(listed.roots).toEqual([{ uri: pathToFileURL(dir).href, name: dir.split('/').pop() }]);
    await mcp.setRoots([other]);
    const changed = await rec.next(
      (e): e is Extract<McpEvent, { type: 'mcp_log' }> => e.type === 'mcp_log' && String(e.data).startsWith('roots changed'),
    );
    expect(changed.data).toBe(`roots changed: ${pathToFileURL(other).href}`);
    expect(mcp.roots()).toEqual([{ uri: pathToFileURL(other).href, name: other.split('/').pop() }]);
  });

  it('server-everything reads the roots rein announces', async () => {
    const dir = await tempDir();
    const mcp = await host({ everything: everything() }, { cwd: dir });
    const result = await mcp.callTool('everything', 'get-roots-list', {});
    expect(textOf(result.content)).toContain(pathToFileURL(dir).href);
  });
});

describe('list changes, subscriptions, completion', () => {
  it('reports prompt and resource list changes as events', async () => {
    const rec = recorder();
    const mcp = await host({ f: stdio() }, { onEvent: rec.onEvent });
    await mcp.callTool('f', 'change_lists', {});
    await rec.next((e): e is McpEvent => e.type === 'mcp_list_changed' && e.list === 'prompts');
    expect(rec.events.filter((e) => e.type === 'mcp_list_changed')).toEqual([
      { type: 'mcp_list_changed', server: 'f', list: 'resources' },
      { type: 'mcp_list_changed', server: 'f', list: 'prompts' },
    ]);
  });

  for (const transport of ['stdio', 'http'] as const) {
    it(`delivers updates of subscribed resources as events, from config and at run time (${transport})`, async () => {
      const base: McpServerConfig =
        transport === 'stdio' ? stdio() : { url: `${(await startHttpServer([FEATURES, 'http'], /listening (\d+)/)).url}/mcp` };
      const rec = recorder();
      const mcp = await host({ f: { ...base, subscribe: ['fixture://one'] } }, { onEvent: rec.onEvent });
      expect(textOf((await mcp.callTool('f', 'touch', { uri: 'fixture://one' })).content)).toBe('notified');
      await rec.next((e): e is McpEvent => e.type === 'mcp_resource_updated' && e.uri === 'fixture://one');
      expect(textOf((await mcp.callTool('f', 'touch', { uri: 'fixture://two' })).content)).toBe('not subscribed');
      await mcp.subscribeResource('f', 'fixture://two');
      await mcp.callTool('f', 'touch', { uri: 'fixture://two' });
      await rec.next((e): e is McpEvent => e.type === 'mcp_resource_updated' && e.uri === 'fixture://two');
      await mcp.unsubscribeResource('f', 'fixture://two');
      expect(textOf((await mcp.callTool('f', 'touch', { uri: 'fixture://two' })).content)).toBe('not subscribed');
    });
  }

  it('refuses a subscription the server does not offer, saying so', async () => {
    const mcp = await host({ e: fixture() });
    expect(mcp.status()[0]?.state).toBe('connected');
    await expect(mcp.subscribeResource('e', 'fault://x')).rejects.toThrow(/does not offer resource subscriptions/);
  });

  it('completes prompt arguments, with the arguments given as context, and /server:prompt lines', async () => {
    const mcp = await host({ f: stdio() });
    expect(await mcp.complete('f', { type: 'ref/prompt', name: 'greet' }, { name: 'name', value: 'A' })).toEqual({
      values: ['Ada', 'Alan'],
      total: 4,
      hasMore: false,
    });
    expect(
      (await mcp.complete('f', { type: 'ref/prompt', name: 'greet' }, { name: 'name', value: 'A' }, { title: 'Prof' })).values,
    ).toEqual(['Alan']);
    expect(await mcp.completePromptCommand('/')).toEqual(['/f:']);
    expect(await mcp.completePromptCommand('/f:gr')).toEqual(['/f:greet ']);
    expect(await mcp.completePromptCommand('/f:greet B')).toEqual(['/f:greet Barbara']);
    expect(await mcp.completePromptCommand('/f:greet title=P')).toEqual(['/f:greet title=Prof']);
    expect(await mcp.completePromptCommand('/f:greet title=Prof name=A')).toEqual(['/f:greet title=Prof name=Alan']);
  });

  it("completes server-everything's completable prompt", async () => {
    const mcp = await host({ everything: everything() });
    const { values } = await mcp.complete(
      'everything',
      { type: 'ref/prompt', name: 'completable-prompt' },
      { name: 'department', value: 'En' },
    );
    expect(values).toContain('Engineering');
  });
});

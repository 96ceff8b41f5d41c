// Elicitation (form mode with defaults, URL mode) and sampling (answered by a rein model
// under a decision) against a server of our own over stdio and Streamable HTTP, and against
// server-everything.
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { McpElicitRequest, McpEvent, McpSamplingRequest, McpServerConfig } from '../../src/mcp/types.js';
import { modelSampler } from '../../src/mcp/model-sampler.js';
import { startScriptedServer, type ScriptedServer } from '../../src/testing/index.js';
import type { Usage } from '../../src/model/types.js';
import { afterEach } from 'vitest';
import { everything, host, startHttpServer, textOf } from './helpers.js';

const FEATURES = fileURLToPath(new URL('./fixtures/client-features-server.mjs', import.meta.url));
const models: ScriptedServer[] = [];
afterEach(async () => {
  await Promise.all(models.splice(0).map((m) => m.close()));
});

async function features(transport: 'stdio' | 'http'): Promise<McpServerConfig> {
  if (transport === 'stdio') return { command: process.execPath, args: [FEATURES] };
  return { url: `${(await startHttpServer([FEATURES, 'http'], /listening (\d+)/)).url}/mcp` };
}

for (const transport of ['stdio', 'http'] as const) {
  describe(`elicitation over ${transport}`, () => {
    it('asks with the schema and its defaults, fills the defaults into the answer, checks it, and reports an event', async () => {
      const asked: McpElicitRequest[] = [];
      const events: McpEvent[] = [];
      const mcp = await host(
        { f: await features(transport) },
        {
          onEvent: (e) => events.push(e),
          elicit: async (request) => (asked.push(request), { action: 'accept', content: { name: 'Ada', age: '36' as unknown as number } }),
        },
      );
      const result = JSON.parse(textOf((await mcp.callTool('f', 'ask', {})).content)) as {
        action: string;
        content: Record<string, unknown>;
      };
      expect(asked[0]).toMatchObject({
        server: 'f',
        mode: 'form',
        message: 'Who are you?',
        defaults: { age: 30, colour: 'green', subscribe: false },
      });
      expect(asked[0]?.requestedSchema?.required).toEqual(['name']);
      // "36" was coerced to the integer the schema asks for; the fields left out got their defaults.
      expect(result).toEqual({ action: 'accept', content: { name: 'Ada', age: 36, colour: 'green', subscribe: false } });
      expect(events).toContainEqual({ type: 'mcp_elicitation', server: 'f', mode: 'form', message: 'Who are you?', action: 'accept' });
      // The values typed are not in the event.
      expect(JSON.stringify(events)).not.toContain('Ada');
    });

    it('refuses an answer that does not fit the schema, and passes decline and cancel on', async () => {
      const answers = [{ action: 'accept' as const, content: { name: '' } }, { action: 'decline' as const }, { action: 'cancel' as const }];
      const mcp = await host({ f: await features(transport) }, { elicit: async () => answers.shift() ?? { action: 'cancel' } });
      // The server's request fails with the problem, and so does its tool.
      await expect(mcp.callTool('f', 'ask', {})).rejects.toThrow(
        /does not match the requested schema: parameter "name" must have at least 1 character/,
      );
      expect(JSON.parse(textOf((await mcp.callTool('f', 'ask', {})).content))).toEqual({ action: 'decline' });
      expect(JSON.parse(textOf((await mcp.callTool('f', 'ask', {})).content))).toEqual({ action: 'cancel' });
    });

    it('URL mode gives the hook the URL and the elicitation id; the completion notice is an event', async () => {
      const asked: McpElicitRequest[] = [];
      const events: McpEvent[] = [];
      let completed: () => void = () => undefined;
      const complete = new Promise<void>((resolve) => (completed = resolve));
      const onEvent = (e: McpEvent): void => {
        events.push(e);
        if (e.type === 'mcp_elicitation_complete') completed();
      };
      const mcp = await host(
        { f: await features(transport) },
        { onEvent, elicit: async (request) => (asked.push(request), { action: 'accept' }) },
      );
      expect(JSON.parse(textOf((await mcp.callTool('f', 'ask_url', {})).content))).toEqual({ action: 'accept' });
      expect(asked[0]).toMatchObject({
        mode: 'url',
        url: 'https://example.com/link?session=1',
        elicitationId: 'e-1',
        message: 'Link your account',
      });
      // The server's notifications/elicitation/complete arrives as an event.
      await complete;
      expect(events).toContainEqual({ type: 'mcp_elicitation_complete', server: 'f', elicitationId: 'e-1' });
    });
  });

  describe(`sampling over ${transport}`, () => {
    it('is answered by a rein model when allowed, with usage reported and an event', async () => {
      const model = await startScriptedServer({ script: () => ({ text: 'Paris.' }) });
      models.push(model);
      const usages: Usage[] = [];
      const events: McpEvent[] = [];
      const mcp = await host(
        { f: await features(transport) },
        {
          onEvent: (e) => events.push(e),
          sample: modelSampler({ model: model.model(), decision: 'allow', onUsage: (u) => usages.push(u) }),
        },
      );
      const result = JSON.parse(textOf((await mcp.callTool('f', 'sample', { prompt: 'Capital of France?' })).content)) as {
        content: { text: string };
        model: string;
        role: string;
      };
      expect(result).toMatchObject({ role: 'assistant', content: { type: 'text', text: 'Paris.' }, stopReason: 'endTurn' });
      // The model saw the server's system prompt and message.
      expect(model.requests[0]).toMatchObject({ messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user' }] });
      expect(usages).toHaveLength(1);
      expect(usages[0]?.output).toBeGreaterThan(0);
      expect(events).toContainEqual(
        expect.objectContaining({
          type: 'mcp_sampling',
          server: 'f',
          decision: 'allow',
          usage: expect.objectContaining({ output: usages[0]?.output }),
        }),
      );
    });

    it('asks by default, and a refusal reaches the server as a rejection', async () => {
      const model = await startScriptedServer({ script: () => ({ text: 'never sent' }) });
      models.push(model);
      const shown: McpSamplingRequest[] = [];
      const events: McpEvent[] = [];
      const mcp = await host(
        { f: await features(transport) },
        { onEvent: (e) => events.push(e), sample: modelSampler({ model: model.model(), ask: async (r) => (shown.push(r), false) }) },
      );
      await expect(mcp.callTool('f', 'sample', { prompt: 'hi' })).rejects.toThrow(/MCP error -1: sampling was refused: the person refused/);
      expect(shown[0]?.params).toMatchObject({ systemPrompt: 'Be brief.', maxTokens: 50 });
      expect(model.requests).toHaveLength(0);
      expect(events).toContainEqual(expect.objectContaining({ type: 'mcp_sampling', decision: 'deny' }));
    });
  });
}

describe('server-everything', () => {
  it('a tool that needs a URL opened first (-32042) is asked through elicit and sent again', async () => {
    const asked: McpElicitRequest[] = [];
    const events: McpEvent[] = [];
    const mcp = await host(
      { everything: everything() },
      { onEvent: (e) => events.push(e), elicit: async (request) => (asked.push(request), { action: 'accept' }) },
    );
    const result = await mcp.callTool('everything', 'trigger-url-elicitation', { url: 'https://example.com/consent', errorPath: true });
    expect(result.isError).toBe(false);
    // First the URL the error named, then the URL of the retried call's own elicitation.
    expect(asked.map((r) => [r.mode, r.url])).toEqual([
      ['url', 'https://modelcontextprotocol.io'],
      ['url', 'https://example.com/consent'],
    ]);
    expect(events.filter((e) => e.type === 'mcp_elicitation')).toHaveLength(2);
  });

  it('elicits a form and samples through rein', async () => {
    const model = await startScriptedServer({ script: () => ({ text: 'sampled text' }) });
    models.push(model);
    const mcp = await host(
      { everything: everything() },
      {
        elicit: async (request) => ({
          action: 'accept',
          content: { ...(request.defaults as Record<string, string>), name: 'Ada', email: 'ada@example.com' },
        }),
        sample: modelSampler({ model: model.model(), decision: 'allow' }),
      },
    );
    const names = mcp.toolInfo('everything').map((t) => t.mcpName);
    expect(names).toEqual(expect.arrayContaining(['trigger-elicitation-request', 'trigger-sampling-request', 'get-roots-list']));
    const elicited = await mcp.callTool('everything', 'trigger-elicitation-request', {});
    expect(textOf(elicited.content)).toMatch(/accept/i);
    const sampled = await mcp.callTool('everything', 'trigger-sampling-request', { prompt: 'say something' });
    expect(textOf(sampled.content)).toContain('sampled text');
  });
});

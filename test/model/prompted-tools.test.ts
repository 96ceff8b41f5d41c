// Prompted tools end to end over the scripted model server (a real HTTP server): a server
// that refuses `tools` the way Ollama and vLLM do switches the run to tools in the prompt;
// parallel calls; calls cut into one-character deltas; a malformed call corrected on the
// next turn; the Anthropic and Gemini wires.
import { afterEach, describe, expect, it } from 'vitest';
import { Agent } from '../../src/loop/agent.js';
import { forgetLearnedQuirks } from '../../src/model/learned-quirks.js';
import { toolCallingOf } from '../../src/model/prompted-tools.js';
import { resolveModel } from '../../src/model/resolve.js';
import { fault, startScriptedServer, text, type ScriptedServer } from '../../src/testing/index.js';
import type { ScriptRequest, ScriptTurn } from '../../src/testing/script.js';
import type { ModelApi } from '../../src/model/types.js';
import { defineTool } from '../../src/tools/define.js';

const servers: ScriptedServer[] = [];
afterEach(async () => {
  forgetLearnedQuirks();
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function serve(script: (request: ScriptRequest) => ScriptTurn, chunkSize?: number): Promise<ScriptedServer> {
  const server = await startScriptedServer({ script, ...(chunkSize === undefined ? {} : { chunkSize }) });
  servers.push(server);
  return server;
}

function adder() {
  const calls: Array<{ a: number; b: number }> = [];
  const tool = defineTool({
    name: 'add',
    description: 'Adds two numbers. Use it for any sum.',
    parameters: {
      type: 'object',
      properties: { a: { type: 'number' }, b: { type: 'number' } },
      required: ['a', 'b'],
      additionalProperties: false,
    },
    execute: ({ a, b }) => {
      calls.push({ a: a as number, b: b as number });
      return String((a as number) + (b as number));
    },
  });
  return { tool, calls };
}

/** Ollama's answer on /v1 to tools for a model whose template has none (ollama/ollama#6027). */
const OLLAMA_REFUSAL = { error: { message: 'llama3:latest does not support tools', type: 'api_error', param: null, code: null } };
/** vLLM started without --enable-auto-tool-choice (langchain4j/langchain4j#3475). */
const VLLM_REFUSAL = {
  object: 'error',
  message: '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set',
  type: 'BadRequestError',
  param: null,
  code: 400,
};

const toolResponses = (request: ScriptRequest) =>
  request.messages.filter((m) => m.role === 'user' && String(m.content).startsWith('<tool_response'));

/** A model without tool calling: it reads its tools in the system prompt and answers with calls in its text. */
function promptedModel(refusal: unknown, answer: string) {
  return (request: ScriptRequest): ScriptTurn => {
    if (refusal !== undefined && request.toolNames.length > 0) return fault({ type: 'status', status: 400, body: refusal });
    if (!(request.system ?? '').includes('<tool_call>') || !(request.system ?? '').includes('## add'))
      return text('I was not told of any tool.');
    if (toolResponses(request).length === 0) return text(answer);
    return text(
      `The results: ${toolResponses(request)
        .map((m) => String(m.content))
        .join(' ')}`,
    );
  };
}

describe('prompted tools', () => {
  for (const [server, refusal] of [
    ['Ollama', OLLAMA_REFUSAL],
    ['vLLM', VLLM_REFUSAL],
  ] as const) {
    it(`a refusal of tools as ${server} answers it switches the model to tools in the prompt, for this run and the next`, async () => {
      const scripted = await serve(
        promptedModel(refusal, 'Adding.\n<tool_call>\n{"name": "add", "arguments": {"a": 2, "b": 40}}\n</tool_call>'),
      );
      const { tool, calls } = adder();
      const model = scripted.model('llama3');
      const agent = new Agent({ model, tools: [tool] });
      const result = await agent.run('what is 2 + 40?');
      expect(result.status).toBe('done');
      expect(calls).toEqual([{ a: 2, b: 40 }]);
      expect(result.text).toContain('42');
      expect(result.text).toContain('<tool_response name="add">');
      // The first request carried tools and was refused; the same request went again without them.
      const bodies = scripted.received.map((r) => r.body);
      expect(bodies[0]?.tools).toBeDefined();
      expect(bodies.slice(1).every((b) => b.tools === undefined)).toBe(true);
      const first = result.messages.find((m) => m.role === 'assistant');
      expect(first?.role === 'assistant' && first.notes?.[0]).toMatch(
        /refused the tools parameter for llama3: its tools are described in the prompt/,
      );
      // The answer with the call is a tool call like any other, in the history and the events.
      expect(first?.role === 'assistant' && first.content.some((b) => b.type === 'tool_call' && b.name === 'add')).toBe(true);
      // Learned for the process: the next run asks without tools from the start.
      expect(toolCallingOf(model)).toBe('prompt');
      const before = scripted.received.length;
      const again = await new Agent({ model: scripted.model('llama3'), tools: [tool] }).run('and again?');
      expect(again.status).toBe('done');
      expect(scripted.received.slice(before).every((r) => r.body.tools === undefined)).toBe(true);
      // Another model on the same server still gets native tools.
      expect(toolCallingOf(scripted.model('other'))).toBe('native');
    });
  }

  it('runs parallel calls of one answer, cut into one-character deltas, through the dispatcher', async () => {
    const answer =
      '<tool_call>{"name": "add", "arguments": {"a": 1, "b": 2}}</tool_call>\n<tool_call>{"name": "add", "arguments": {"a": 3, "b": 4}}</tool_call>';
    const scripted = await serve(promptedModel(OLLAMA_REFUSAL, answer), 1);
    const { tool, calls } = adder();
    const deltas: string[] = [];
    const agent = new Agent({ model: scripted.model('llama3'), tools: [tool] });
    const run = agent.run('sum these');
    for await (const event of run) if (event.type === 'tool_call_delta') deltas.push(event.delta);
    const result = await run;
    expect(result.status).toBe('done');
    expect(calls).toEqual([
      { a: 1, b: 2 },
      { a: 3, b: 4 },
    ]);
    expect(deltas).toEqual(['', '{"a": 1, "b": 2}', '', '{"a": 3, "b": 4}']);
    expect(result.text).toBe(
      'The results: <tool_response name="add">\n3\n</tool_response> <tool_response name="add">\n7\n</tool_response>',
    );
  });

  it('a malformed call gets the guided error of a native one, and the corrected call runs', async () => {
    const { tool, calls } = adder();
    const scripted = await serve((request) => {
      const responses = toolResponses(request);
      if (responses.length === 0) return text('<tool_call>{"name": "add", "arguments": {"a": 2}}</tool_call>');
      if (responses.length === 1) {
        // The model reads what was wrong, as it would in a native tool result.
        expect(String(responses[0]?.content)).toMatch(/^<tool_response name="add" error="true">/);
        expect(String(responses[0]?.content)).toMatch(/\bb\b/);
        return text('<tool_call>{"name": "add", "arguments": {"a": 2, "b": 3}}</tool_call>');
      }
      return text('Done: 5.');
    });
    const model = { ...scripted.model('small'), toolCalling: 'prompt' as const };
    const result = await new Agent({ model, tools: [tool] }).run('add 2 and 3');
    expect(result.status).toBe('done');
    expect(result.text).toBe('Done: 5.');
    expect(calls).toEqual([{ a: 2, b: 3 }]);
    expect(scripted.received.every((r) => r.body.tools === undefined)).toBe(true);
  });

  for (const api of ['anthropic-messages', 'gemini'] as ModelApi[]) {
    it(`works the same on the ${api} wire`, async () => {
      const scripted = await serve(promptedModel(undefined, 'Adding.\n```json\n{"name": "add", "arguments": {"a": 20, "b": 22}}\n```'));
      const { tool, calls } = adder();
      const model = { ...scripted.model('local', api), toolCalling: 'prompt' as const };
      const result = await new Agent({ model, tools: [tool] }).run('what is 20 + 22?');
      expect(result.status).toBe('done');
      expect(calls).toEqual([{ a: 20, b: 22 }]);
      expect(result.text).toContain('42');
      expect(scripted.received.every((r) => r.api === api && r.body.tools === undefined)).toBe(true);
    });
  }

  it('a model asked for native tool calling is not switched: the refusal is the error it is', async () => {
    const scripted = await serve(promptedModel(OLLAMA_REFUSAL, 'unused'));
    const { tool } = adder();
    const model = resolveModel('openai/llama3', { baseUrl: scripted.url, apiKey: 'k', toolCalling: 'native' });
    const result = await new Agent({ model, tools: [tool] }).run('hi');
    expect(result.status).toBe('failed');
    expect(JSON.stringify(result.error)).toMatch(/does not support tools/);
    expect(toolCallingOf(model)).toBe('native');
  });

  it('the catalog marks o1-mini as prompted, and configuration says otherwise per model', () => {
    expect(toolCallingOf(resolveModel('openai/o1-mini', { apiKey: 'k' }))).toBe('prompt');
    expect(toolCallingOf(resolveModel('openai/gpt-4o', { apiKey: 'k' }))).toBe('native');
    expect(toolCallingOf(resolveModel('openai/o1-mini', { apiKey: 'k', toolCalling: 'native' }))).toBe('native');
    expect(() => resolveModel('openai/gpt-4o', { apiKey: 'k', toolCalling: 'text' as 'prompt' })).toThrow(
      /toolCalling must be "native" or "prompt", not "text"/,
    );
  });
});

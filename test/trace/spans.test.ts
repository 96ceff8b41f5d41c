// The spans of real runs (scripted model server, real tools), recorded by the OpenTelemetry
// SDK with its in-memory exporter: tree, names, attributes, status.
import { afterEach, describe, expect, it } from 'vitest';
import { context, trace, type Span } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { Agent } from '../../src/loop/agent.js';
import { isSummaryRequest } from '../../src/context/summary.js';
import { fault, text, toolCall, toolCalls, type ScriptRequest, type ScriptTurn } from '../../src/testing/index.js';
import { MemoryRunStore } from '../../src/store/memory.js';
import { defineTool } from '../../src/tools/define.js';
import { addTool, gateTool, setup } from '../loop/helpers.js';
import { memoryOtel, tree } from './otel.js';

const otels: Array<ReturnType<typeof memoryOtel>> = [];
afterEach(async () => {
  await Promise.all(otels.splice(0).map((o) => o.close()));
});
function otel() {
  const o = memoryOtel();
  otels.push(o);
  return o;
}
const telemetryOf = (o: ReturnType<typeof memoryOtel>, extra: Record<string, unknown> = {}) => ({
  telemetry: { tracerProvider: o.tracerProvider, meterProvider: o.meterProvider, ...extra },
});
const named = (spans: ReadableSpan[], name: string) => spans.filter((s) => s.name === name);
const one = (spans: ReadableSpan[], name: string) => {
  const found = named(spans, name);
  expect(found, name).toHaveLength(1);
  return found[0]!;
};

const slowAdd = defineTool({
  name: 'slow_add',
  description: 'Adds slowly.',
  parameters: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] },
  risk: 'read',
  execute: async ({ a, b }) => {
    await new Promise((r) => setTimeout(r, 20));
    return String((a as number) + (b as number));
  },
});

const broken = defineTool({
  name: 'broken',
  description: 'Always fails.',
  parameters: { type: 'object', properties: {} },
  risk: 'read',
  execute: () => {
    throw new Error('disk on fire');
  },
});

describe('spans of a run', () => {
  it('parallel tools: one invoke_agent span holding a chat span per request and an execute_tool span per call', async () => {
    const o = otel();
    const { agent } = await setup(
      [toolCalls({ name: 'add', arguments: { a: 1, b: 2 } }, { name: 'slow_add', arguments: { a: 3, b: 4 } }), text('3 and 7')],
      {
        tools: [addTool, slowAdd],
        ...telemetryOf(o, { agentName: 'adder' }),
      },
    );
    const result = await agent.run('add both');
    expect(result.reason).toBe('final_answer');
    const spans = o.spans();
    expect(tree(spans).sort()).toEqual(
      [
        'invoke_agent adder',
        'invoke_agent adder > chat scripted',
        'invoke_agent adder > chat scripted',
        'invoke_agent adder > execute_tool add',
        'invoke_agent adder > execute_tool slow_add',
      ].sort(),
    );
    // rein's trace id is the OpenTelemetry trace id.
    for (const span of spans) expect(span.spanContext().traceId).toBe(result.traceId);
    const run = one(spans, 'invoke_agent adder');
    expect(run.kind).toBe(0); // INTERNAL: the agent runs in this process
    expect(run.attributes).toMatchObject({
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.name': 'adder',
      'gen_ai.provider.name': 'scripted',
      'gen_ai.request.model': 'scripted',
      'rein.run.id': result.runId,
      'rein.run.status': 'done',
      'rein.run.stop_reason': 'final_answer',
      'rein.run.steps': 2,
      'rein.run.tool_calls': 2,
      'gen_ai.usage.input_tokens': result.totals.usage.input + result.totals.usage.cacheRead + result.totals.usage.cacheWrite,
      'gen_ai.usage.output_tokens': result.totals.usage.output,
    });
    expect(run.status.code).toBe(0);
    const chats = named(spans, 'chat scripted');
    expect(chats.map((c) => c.kind)).toEqual([2, 2]); // CLIENT
    expect(chats[0]!.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'scripted',
      'gen_ai.request.model': 'scripted',
      'gen_ai.response.model': 'scripted',
      'gen_ai.response.finish_reasons': ['tool_call'],
      'gen_ai.request.stream': true,
      'server.address': '127.0.0.1',
      'rein.step': 1,
      'rein.request.attempt': 1,
    });
    expect(chats[0]!.attributes['gen_ai.response.id']).toEqual(expect.any(String));
    expect(chats[0]!.attributes['gen_ai.usage.input_tokens']).toBeGreaterThan(0);
    expect(chats[1]!.attributes['gen_ai.response.finish_reasons']).toEqual(['stop']);
    const slow = one(spans, 'execute_tool slow_add');
    const add = one(spans, 'execute_tool add');
    expect(slow.attributes).toMatchObject({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'slow_add',
      'gen_ai.tool.type': 'function',
      'rein.tool.outcome': 'ok',
      'rein.step': 1,
    });
    expect(slow.attributes['gen_ai.tool.call.id']).toEqual(expect.any(String));
    expect(slow.attributes['gen_ai.tool.call.id']).not.toBe(add.attributes['gen_ai.tool.call.id']);
    // The two calls ran at once: the quick one ended inside the slow one.
    const ms = (t: [number, number]) => t[0] * 1000 + t[1] / 1e6;
    expect(ms(add.startTime)).toBeLessThanOrEqual(ms(slow.endTime));
    expect(ms(slow.endTime) - ms(slow.startTime)).toBeGreaterThanOrEqual(15);
  });

  it('a retried 429: two chat attempt spans, the failed one with error.type and the delay before the next', async () => {
    const o = otel();
    const { agent } = await setup([fault({ type: 'status', status: 429, retryAfterMs: 20 }), text('done')], telemetryOf(o));
    const result = await agent.run('hi');
    expect(result.reason).toBe('final_answer');
    const chats = named(o.spans(), 'chat scripted');
    expect(chats).toHaveLength(2);
    const [failed, retried] = chats as [ReadableSpan, ReadableSpan];
    expect(failed.status).toMatchObject({ code: 2 });
    expect(failed.attributes).toMatchObject({ 'error.type': 'rate_limited', 'rein.request.attempt': 1, 'rein.retry.delay_ms': 20 });
    expect(retried.status.code).toBe(0);
    expect(retried.attributes).toMatchObject({ 'rein.request.attempt': 2, 'gen_ai.response.finish_reasons': ['stop'] });
    expect(retried.attributes['error.type']).toBeUndefined();
    const retries = await o.metric('rein.retries');
    expect(retries).toEqual([expect.objectContaining({ value: 1, attributes: expect.objectContaining({ 'error.type': 'rate_limited' }) })]);
  });

  it('a tool error: the execute_tool span has error status and type; the run goes on', async () => {
    const o = otel();
    const { agent } = await setup([toolCall('broken'), text('it broke')], { tools: [broken], ...telemetryOf(o) });
    const result = await agent.run('try');
    expect(result.reason).toBe('final_answer');
    const span = one(o.spans(), 'execute_tool broken');
    expect(span.status.code).toBe(2);
    expect(span.status.message).toMatch(/disk on fire/);
    expect(span.attributes).toMatchObject({ 'error.type': 'tool_failed', 'rein.tool.outcome': 'error' });
    expect(one(o.spans(), 'invoke_agent').status.code).toBe(0);
    const calls = await o.metric('rein.tool.calls');
    expect(calls).toEqual([
      expect.objectContaining({
        value: 1,
        attributes: { 'gen_ai.tool.name': 'broken', 'rein.tool.outcome': 'error', 'error.type': 'tool_failed' },
      }),
    ]);
  });

  it('a compaction after a context-length refusal: the refused attempt, a compact_context span, the request again', async () => {
    const o = otel();
    const refusal: ScriptTurn = {
      fault: {
        type: 'status',
        status: 400,
        body: {
          error: {
            message: "This model's maximum context length is 2000 tokens.",
            type: 'invalid_request_error',
            code: 'context_length_exceeded',
          },
        },
      },
    };
    let mainTurns = 0;
    const script = (request: ScriptRequest): ScriptTurn => {
      if (isSummaryRequest(request)) return text('SUMMARY: steps done so far.');
      mainTurns++;
      if (mainTurns <= 8) return toolCall('add', { a: mainTurns, b: 1 });
      if (mainTurns === 9) return refusal;
      return text('finished');
    };
    const { agent } = await setup(script, { tools: [addTool], limits: { maxSteps: 20 }, context: { keepTurns: 2 }, ...telemetryOf(o) });
    const result = await agent.run('add a lot');
    expect(result.reason).toBe('final_answer');
    const spans = o.spans();
    const compaction = one(spans, 'compact_context');
    expect(compaction.attributes).toMatchObject({
      'rein.compaction.reason': 'context_length',
      'rein.compaction.summarizer': 'model',
      'rein.step': 9,
    });
    expect(compaction.attributes['rein.compaction.tokens_after']).toBeLessThan(
      compaction.attributes['rein.compaction.tokens_before'] as number,
    );
    const step9 = named(spans, 'chat scripted').filter((s) => s.attributes['rein.step'] === 9);
    expect(step9.map((s) => [s.attributes['rein.request.attempt'], s.attributes['error.type'] ?? 'ok'])).toEqual([
      [1, 'context_length'],
      [2, 'ok'],
    ]);
  });

  it('an approval pause and its resume: two attempts in one trace, the second linked to the first', async () => {
    const o = otel();
    const store = new MemoryRunStore();
    const deploy = defineTool({
      name: 'deploy',
      description: 'Deploys.',
      parameters: { type: 'object', properties: {} },
      execute: () => 'deployed',
    });
    const { agent } = await setup([toolCall('deploy'), text('Deployed.')], {
      tools: [deploy],
      store,
      approvalPolicy: (call) => (call.name === 'deploy' ? 'ask' : 'allow'),
      ...telemetryOf(o),
    });
    const paused = await agent.run('deploy it');
    expect(paused.status).toBe('paused');
    const approved = await agent.approve(paused.runId, { reason: 'ok' });
    expect(approved.status).toBe('done');
    const spans = o.spans();
    const attempts = named(spans, 'invoke_agent');
    expect(attempts).toHaveLength(2);
    const [first, second] = attempts as [ReadableSpan, ReadableSpan];
    expect(first.spanContext().traceId).toBe(paused.traceId);
    expect(second.spanContext().traceId).toBe(paused.traceId);
    expect(first.attributes).toMatchObject({
      'rein.run.status': 'paused',
      'rein.run.stop_reason': 'awaiting_approval',
      'rein.run.attempt': 1,
    });
    expect(second.attributes).toMatchObject({ 'rein.run.status': 'done', 'rein.run.resumed_from': 'paused', 'rein.run.attempt': 2 });
    // The resumed attempt continues the trace under the first and links to it.
    expect(second.parentSpanContext?.spanId).toBe(first.spanContext().spanId);
    expect(second.links).toEqual([
      expect.objectContaining({
        context: expect.objectContaining({ spanId: first.spanContext().spanId, traceId: paused.traceId }),
        attributes: { 'rein.link.type': 'resumed_from' },
      }),
    ]);
    const wait = one(spans, 'await_approval deploy');
    expect(wait.parentSpanContext?.spanId).toBe(first.spanContext().spanId);
    expect(wait.attributes).toMatchObject({ 'gen_ai.tool.name': 'deploy', 'rein.approval.outcome': 'paused' });
    const decided = second.events.find((e) => e.name === 'rein.approval.decided');
    expect(decided?.attributes).toMatchObject({ 'gen_ai.tool.name': 'deploy', 'rein.approval.approved': true, 'rein.reason': 'ok' });
    expect(decided?.attributes?.['rein.approval.wait_ms']).toEqual(expect.any(Number));
    expect(first.events.find((e) => e.name === 'rein.permission')?.attributes).toMatchObject({
      'rein.permission.decision': 'ask',
      'gen_ai.tool.name': 'deploy',
    });
    const tool = one(spans, 'execute_tool deploy');
    expect(tool.parentSpanContext?.spanId).toBe(second.spanContext().spanId);
    // The log recorded each attempt's span, so a later export links the same spans.
    const events = await store.loadEvents(paused.runId);
    expect(events[0]).toMatchObject({ type: 'run_started', spanId: first.spanContext().spanId });
    expect(events.find((e) => e.type === 'run_resumed')).toMatchObject({ spanId: second.spanContext().spanId });
    const waits = await o.metric('rein.approval.wait.duration');
    expect(waits).toEqual([expect.objectContaining({ attributes: { 'gen_ai.tool.name': 'deploy', 'rein.approval.approved': true } })]);
  });

  it('a person asked in the run (onConfirm): await_approval inside the execute_tool span', async () => {
    const o = otel();
    const { agent } = await setup([toolCall('add', { a: 1, b: 1 }), text('2')], {
      tools: [addTool],
      hooks: { onConfirm: () => true },
      ...telemetryOf(o),
    });
    await agent.run('add');
    const spans = o.spans();
    expect(tree(spans)).toContain('invoke_agent > execute_tool add > await_approval add');
    expect(one(spans, 'await_approval add').attributes).toMatchObject({
      'rein.approval.outcome': 'approved',
      'rein.approval.approved': true,
    });
  });

  it('an abort: the run span and the tool span it cut short say aborted', async () => {
    const o = otel();
    const gate = gateTool();
    const { agent } = await setup([toolCall('wait'), text('never')], { tools: [gate.tool], ...telemetryOf(o) });
    const handle = agent.run('wait');
    await gate.started;
    handle.abort();
    const result = await handle;
    expect(result.status).toBe('aborted');
    const run = one(o.spans(), 'invoke_agent');
    expect(run.status.code).toBe(2);
    expect(run.attributes).toMatchObject({ 'rein.run.status': 'aborted', 'error.type': 'aborted' });
    const tool = one(o.spans(), 'execute_tool wait');
    expect(tool.status.code).toBe(2);
    expect(tool.parentSpanContext?.spanId).toBe(run.spanContext().spanId);
  });

  it('a traceparent makes the run a child of the caller’s span, in the caller’s trace', async () => {
    const o = otel();
    const { agent } = await setup([text('hi')], telemetryOf(o));
    const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    const result = await agent.run('hi', { traceparent, tracestate: 'vendor=1' });
    expect(result.traceId).toBe('4bf92f3577b34da6a3ce929d0e0e4736');
    const run = one(o.spans(), 'invoke_agent');
    expect(run.spanContext().traceId).toBe('4bf92f3577b34da6a3ce929d0e0e4736');
    expect(run.parentSpanContext?.spanId).toBe('00f067aa0ba902b7');
    expect(run.spanContext().traceState?.get('vendor')).toBe('1');
    expect(() => agent.run('x', { traceparent: '00-zz-00f067aa0ba902b7-01' })).toThrow(/traceparent is not a W3C traceparent/);
  });

  it('without a traceparent, the caller’s active span is the parent (a registered SDK and context manager, no telemetry option)', async () => {
    const o = otel();
    const manager = new AsyncLocalStorageContextManager().enable();
    context.setGlobalContextManager(manager);
    trace.setGlobalTracerProvider(o.tracerProvider);
    try {
      const { agent } = await setup([toolCall('add', { a: 1, b: 2 }), text('3')], { tools: [addTool] });
      const tracer = trace.getTracer('caller');
      const seen: string[] = [];
      // A tool's own spans nest under its execute_tool span.
      const traced = defineTool({
        name: 'traced',
        description: 'Makes a span.',
        parameters: { type: 'object', properties: {} },
        risk: 'read',
        execute: () => {
          const span = tracer.startSpan('inside the tool');
          span.end();
          seen.push(span.spanContext().spanId);
          return 'ok';
        },
      });
      const { agent: agent2 } = await setup([toolCall('traced'), text('ok')], { tools: [traced] });
      const job = await tracer.startActiveSpan('job', async (span: Span) => {
        const r = await agent.run('add');
        await agent2.run('trace');
        span.end();
        return { span, r };
      });
      const spans = o.spans();
      const runs = named(spans, 'invoke_agent');
      expect(runs).toHaveLength(2);
      for (const run of runs) {
        expect(run.parentSpanContext?.spanId).toBe(job.span.spanContext().spanId);
        expect(run.spanContext().traceId).toBe(job.span.spanContext().traceId);
      }
      expect(job.r.traceId).toBe(job.span.spanContext().traceId);
      const inner = one(spans, 'inside the tool');
      expect(inner.parentSpanContext?.spanId).toBe(one(spans, 'execute_tool traced').spanContext().spanId);
      expect(seen).toHaveLength(1);
    } finally {
      trace.disable();
      context.disable();
    }
  });

  it('telemetry: false records nothing even with an SDK registered', async () => {
    const o = otel();
    trace.setGlobalTracerProvider(o.tracerProvider);
    try {
      const { agent } = await setup([text('hi')], { telemetry: false });
      await agent.run('hi');
      expect(o.spans()).toEqual([]);
    } finally {
      trace.disable();
    }
  });

  it('without an SDK, nothing is recorded and the run is not observed', async () => {
    const { agent } = await setup([text('hi')]);
    const result = await agent.run('hi');
    expect(result.reason).toBe('final_answer');
    expect(result.traceId).toMatch(/^[0-9a-f]{32}$/);
  });

  it('no message content on spans unless asked; with captureContent, the conventions’ attributes', async () => {
    const contentKeys = [
      'gen_ai.input.messages',
      'gen_ai.output.messages',
      'gen_ai.system_instructions',
      'gen_ai.tool.call.arguments',
      'gen_ai.tool.call.result',
    ];
    const plain = otel();
    const script = () => [toolCall('add', { a: 20, b: 22 }), text('The answer is 42.')];
    const { agent } = await setup(script(), { tools: [addTool], system: 'You add numbers.', ...telemetryOf(plain) });
    await agent.run('What is 20 + 22?');
    for (const span of plain.spans()) for (const key of contentKeys) expect(span.attributes[key], `${span.name} ${key}`).toBeUndefined();
    expect(JSON.stringify(plain.spans().map((s) => s.attributes))).not.toContain('What is 20 + 22?');

    const captured = otel();
    const { agent: agent2 } = await setup(script(), {
      tools: [addTool],
      system: 'You add numbers.',
      ...telemetryOf(captured, { captureContent: true }),
    });
    await agent2.run('What is 20 + 22?');
    const spans = captured.spans();
    const run = one(spans, 'invoke_agent');
    expect(JSON.parse(run.attributes['gen_ai.system_instructions'] as string)).toEqual([{ type: 'text', content: 'You add numbers.' }]);
    expect(JSON.parse(run.attributes['gen_ai.input.messages'] as string)).toEqual([
      { role: 'user', parts: [{ type: 'text', content: 'What is 20 + 22?' }] },
    ]);
    const [first, second] = named(spans, 'chat scripted') as [ReadableSpan, ReadableSpan];
    expect(JSON.parse(first.attributes['gen_ai.input.messages'] as string)).toEqual([
      { role: 'user', parts: [{ type: 'text', content: 'What is 20 + 22?' }] },
    ]);
    expect(JSON.parse(first.attributes['gen_ai.output.messages'] as string)).toEqual([
      {
        role: 'assistant',
        parts: [{ type: 'tool_call', id: expect.any(String), name: 'add', arguments: { a: 20, b: 22 } }],
        finish_reason: 'tool_call',
      },
    ]);
    expect(JSON.parse(second.attributes['gen_ai.input.messages'] as string).map((m: { role: string }) => m.role)).toEqual([
      'user',
      'assistant',
      'tool',
    ]);
    expect(JSON.parse(second.attributes['gen_ai.output.messages'] as string)[0].parts).toEqual([
      { type: 'text', content: 'The answer is 42.' },
    ]);
    const tool = one(spans, 'execute_tool add');
    expect(JSON.parse(tool.attributes['gen_ai.tool.call.arguments'] as string)).toEqual({ a: 20, b: 22 });
    expect(tool.attributes['gen_ai.tool.call.result']).toBe('42');
  });

  it('the GenAI client metrics: token usage by type and operation duration per request', async () => {
    const o = otel();
    const { agent } = await setup([toolCall('add', { a: 1, b: 2 }), text('3')], { tools: [addTool], ...telemetryOf(o) });
    const result = await agent.run('add');
    const usage = await o.metric('gen_ai.client.token.usage');
    const byType = (type: string) => usage.find((p) => p.attributes['gen_ai.token.type'] === type);
    expect(byType('input')?.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'scripted',
      'gen_ai.request.model': 'scripted',
      'gen_ai.response.model': 'scripted',
    });
    expect((byType('input')?.value as { count: number; sum: number }).count).toBe(2);
    expect((byType('input')?.value as { sum: number }).sum).toBe(result.totals.usage.input);
    expect((byType('output')?.value as { sum: number }).sum).toBe(result.totals.usage.output);
    const duration = await o.metric('gen_ai.client.operation.duration');
    expect(duration).toHaveLength(1);
    expect((duration[0]!.value as { count: number }).count).toBe(2);
    const runs = await o.metric('rein.runs');
    expect(runs).toEqual([
      expect.objectContaining({
        value: 1,
        attributes: expect.objectContaining({ 'rein.run.status': 'done', 'rein.run.stop_reason': 'final_answer' }),
      }),
    ]);
    const tools = await o.metric('rein.tool.calls');
    expect(tools).toEqual([expect.objectContaining({ value: 1, attributes: { 'gen_ai.tool.name': 'add', 'rein.tool.outcome': 'ok' } })]);
  });

  it('run cost in USD: per request and per run, for a model with a price', async () => {
    const o = otel();
    const { agent } = await setup([text('hi')], { modelInfo: { pricing: { input: 1, output: 2 } }, ...telemetryOf(o) });
    const result = await agent.run('hi');
    const cost = result.totals.usage.cost?.total ?? 0;
    expect(cost).toBeGreaterThan(0);
    expect(one(o.spans(), 'invoke_agent').attributes['rein.usage.cost_usd']).toBeCloseTo(cost, 12);
    const counted = await o.metric('rein.usage.cost');
    expect(counted[0]?.value).toBeCloseTo(cost, 12);
    const runCost = await o.metric('rein.run.cost');
    expect((runCost[0]?.value as { sum: number }).sum).toBeCloseTo(cost, 12);
  });

  it('a run that cannot start (a store that fails) still ends its span as failed', async () => {
    const o = otel();
    const store = new MemoryRunStore();
    await store.close();
    const agent = new Agent({
      model: { provider: 'scripted', id: 'x', api: 'openai-chat', baseUrl: 'http://127.0.0.1:9/v1' },
      store,
      ...telemetryOf(o),
    });
    const result = await agent.run('hi');
    expect(result.status).toBe('failed');
    const run = one(o.spans(), 'invoke_agent');
    expect(run.status.code).toBe(2);
    expect(run.attributes['error.type']).toBe('store');
  });
});

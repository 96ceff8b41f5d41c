// Under an approval policy a person approves exactly the arguments that run: validation →
// beforeToolCall → permission (policy / person) → execution, as without a policy.
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { RunEvent } from '../../src/events.js';
import { Agent } from '../../src/loop/agent.js';
import { resumeStateFrom } from '../../src/loop/resume-state.js';
import { canonicalJson } from '../../src/util/canonical-json.js';
import type { AgentHooks } from '../../src/loop/options.js';
import { MemoryRunStore } from '../../src/store/memory.js';
import { defineTool } from '../../src/tools/define.js';
import { collect, setup } from './helpers.js';

const hashOf = (args: unknown) => createHash('sha256').update(canonicalJson(args)).digest('hex').slice(0, 32);

function payTool() {
  const ran: Array<Record<string, unknown>> = [];
  const tool = defineTool({
    name: 'pay',
    description: 'Pays.',
    parameters: {
      type: 'object',
      properties: { amount: { type: 'integer' }, currency: { type: 'string', default: 'EUR' } },
      required: ['amount'],
      additionalProperties: false,
    },
    execute: (args) => {
      ran.push(args);
      return 'paid';
    },
  });
  return { tool, ran };
}

/** The review's case: one call to coerce, one the validation rejects. */
const review = [
  {
    toolCalls: [
      { name: 'pay', arguments: { amount: '5' } },
      { name: 'pay', arguments: { amount: 'lots', bogus: 1 } },
    ],
  },
  { text: 'end' },
];
const centsHook: AgentHooks['beforeToolCall'] = (_call, args) => ({ arguments: { ...args, amount: (args.amount as number) * 100 } });

const approvalEvents = (events: RunEvent[]) => events.filter((e) => e.type === 'approval_requested' || e.type === 'approval_decided');

describe('approvals under a policy, in the dispatcher order', () => {
  it('a person never sees invalid arguments, sees them coerced and patched, and exactly those run', async () => {
    const { tool, ran } = payTool();
    const shown: unknown[] = [];
    const order: string[] = [];
    const { agent, server } = await setup(review, {
      tools: [tool],
      approvalPolicy: () => 'ask',
      hooks: {
        beforeToolCall: (call, args, t) => {
          order.push(`before ${call.id}`);
          return centsHook(call, args, t);
        },
        onConfirm: (call, args) => {
          order.push(`confirm ${call.id}`);
          shown.push(structuredClone(args));
          return true;
        },
      },
    });
    const { events, result } = await collect(agent.run('pay'));
    expect(result.status).toBe('done');
    expect(shown).toEqual([{ amount: 500, currency: 'EUR' }]);
    expect(ran).toEqual(shown);
    // The rejected call reached neither the hook nor the person.
    expect(order).toHaveLength(2);
    expect(order[0]).toMatch(/^before /);
    expect(order[1]).toMatch(/^confirm /);
    const tools = server.requests[1]!.messages.filter((m) => m.role === 'tool').map((m) => String(m.content));
    expect(tools[0]).toBe('paid');
    expect(tools[1]).toMatch(/invalid arguments for tool "pay"/);
    // The recorded question is about the arguments shown, and its answer names the same hash.
    const hash = hashOf({ amount: 500, currency: 'EUR' });
    expect(approvalEvents(events)).toEqual([
      expect.objectContaining({ type: 'approval_requested', arguments: { amount: 500, currency: 'EUR' }, argumentsHash: hash }),
      expect.objectContaining({ type: 'approval_decided', approved: true, argumentsHash: hash }),
    ]);
    // The call's tool_finished is the only one for it: no question after it, none before validation.
    const started = events.findIndex((e) => e.type === 'tool_started');
    expect(events.findIndex((e) => e.type === 'approval_requested')).toBeGreaterThan(started);
  });

  it('questions of parallel calls are asked one at a time, in call order, even when a later call is ready first', async () => {
    const { tool, ran } = payTool();
    const asked: unknown[] = [];
    let open = 0;
    let maxOpen = 0;
    const calls = [
      {
        toolCalls: [
          { name: 'pay', arguments: { amount: 1 } },
          { name: 'pay', arguments: { amount: 2 } },
          { name: 'pay', arguments: { amount: 3 } },
        ],
      },
      { text: 'end' },
    ];
    const { agent } = await setup(calls, {
      tools: [tool],
      approvalPolicy: () => 'ask',
      hooks: {
        // The first call's hook is the slowest: its question must still come first.
        beforeToolCall: async (_call, args) => {
          await new Promise((r) => setTimeout(r, args.amount === 1 ? 40 : 0));
        },
        onConfirm: async (_call, args) => {
          open++;
          maxOpen = Math.max(maxOpen, open);
          asked.push(args.amount);
          await new Promise((r) => setTimeout(r, 5));
          open--;
          return args.amount !== 2;
        },
      },
    });
    expect((await agent.run('pay')).status).toBe('done');
    expect(asked).toEqual([1, 2, 3]);
    expect(maxOpen).toBe(1);
    expect(ran.map((a) => a.amount).sort()).toEqual([1, 3]);
  });

  it('deny still refuses before anything runs: no hook and no person sees the call', async () => {
    const { tool, ran } = payTool();
    const seen: string[] = [];
    const { agent } = await setup(review, {
      tools: [tool],
      approvalPolicy: () => 'deny',
      hooks: { beforeToolCall: () => void seen.push('before'), onConfirm: () => (seen.push('confirm'), true) },
    });
    expect((await agent.run('pay')).status).toBe('done');
    expect(seen).toEqual([]);
    expect(ran).toEqual([]);
  });

  it('a pause records the coerced and patched arguments; approving runs exactly those', async () => {
    const store = new MemoryRunStore();
    const { tool, ran } = payTool();
    const { agent } = await setup(review, { tools: [tool], store, approvalPolicy: () => 'ask', hooks: { beforeToolCall: centsHook } });
    const { events, result } = await collect(agent.run('pay'));
    expect(result).toMatchObject({ status: 'paused', reason: 'awaiting_approval' });
    expect(ran).toEqual([]);
    // Only the valid call waits; the invalid one was answered with its validation error.
    const requested = events.filter((e) => e.type === 'approval_requested');
    expect(requested).toEqual([
      expect.objectContaining({ arguments: { amount: 500, currency: 'EUR' }, argumentsHash: hashOf({ amount: 500, currency: 'EUR' }) }),
    ]);
    expect(events.filter((e) => e.type === 'tool_finished').map((e) => e.type === 'tool_finished' && e.errorCode)).toEqual([
      'invalid_arguments',
    ]);
    expect(events.some((e) => e.type === 'tool_started')).toBe(false);

    const approved = await agent.approve(result.runId, { argumentsHash: hashOf({ amount: 500, currency: 'EUR' }) });
    expect(approved.status).toBe('done');
    expect(ran).toEqual([{ amount: 500, currency: 'EUR' }]);
  });

  it('an approval is never applied to other arguments: a changed hook after the pause refuses the call', async () => {
    const store = new MemoryRunStore();
    const first = payTool();
    const { agent, server } = await setup([review[0]!, { text: 'end' }], {
      tools: [first.tool],
      store,
      approvalPolicy: () => 'ask',
      hooks: { beforeToolCall: centsHook },
    });
    const paused = await agent.run('pay');
    expect(paused.status).toBe('paused');
    // Another process, whose hook patches differently (same tools: the resume is allowed).
    const second = payTool();
    const other = new Agent({
      model: server.model(),
      tools: [second.tool],
      store,
      approvalPolicy: () => 'ask',
      hooks: { beforeToolCall: (_call, args) => ({ arguments: { ...args, amount: 999 } }) },
    });
    const result = await other.approve(paused.runId);
    expect(result.status).toBe('done');
    expect(second.ran).toEqual([]);
    const tools = server.requests
      .at(-1)!
      .messages.filter((m) => m.role === 'tool')
      .map((m) => String(m.content));
    expect(tools[0]).toMatch(/permission denied for tool "pay": .*not the ones a person approved/);
  });

  it('a call the policy asked about whose decision is not logged never ran, even with its tool_started: a resume asks again', () => {
    const base = { runId: 'r', at: 0 };
    const call = { type: 'tool_call' as const, id: 'c1', name: 'pay', arguments: { amount: 5 } };
    const usage = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, reasoning: 0, total: 0 };
    const events = [
      { ...base, seq: 0, type: 'run_started', traceId: 't', history: [], input: { role: 'user', content: 'pay' } },
      {
        ...base,
        seq: 1,
        type: 'assistant_message',
        step: 1,
        message: { role: 'assistant', content: [call], stopReason: 'toolUse', provider: 'p', model: 'm', usage },
      },
      { ...base, seq: 2, type: 'permission_decided', step: 1, toolCallId: 'c1', name: 'pay', decision: 'ask' },
      { ...base, seq: 3, type: 'tool_started', step: 1, toolCallId: 'c1', name: 'pay', arguments: { amount: 5 }, idempotencyKey: 'r:1:0' },
    ] as unknown as RunEvent[];
    expect(resumeStateFrom(events).pending!.started.has('c1')).toBe(false);
    const requested = {
      ...base,
      seq: 4,
      type: 'approval_requested',
      step: 1,
      toolCallId: 'c1',
      name: 'pay',
      arguments: { amount: 5 },
      argumentsHash: 'h',
    } as RunEvent;
    const waiting = resumeStateFrom([...events, requested]).pending!;
    expect(waiting.started.has('c1')).toBe(false);
    expect(waiting.approvalsRequested.get('c1')).toBe('h');
    // Once a decision is logged the call may have run: it counts as started.
    const decided = {
      ...base,
      seq: 5,
      type: 'approval_decided',
      step: 1,
      toolCallId: 'c1',
      approved: true,
      argumentsHash: 'h',
    } as RunEvent;
    expect(resumeStateFrom([...events, requested, decided]).pending!.started.has('c1')).toBe(true);
  });

  it('a process that dies while a person is asked leaves a call that never ran: the resumed run asks again and runs it', async () => {
    const store = new MemoryRunStore();
    const first = payTool();
    let asked!: () => void;
    const question = new Promise<void>((r) => (asked = r));
    const script = [{ toolCalls: [{ name: 'pay', arguments: { amount: '5' } }] }, { text: 'end' }];
    const { agent, server } = await setup(script, {
      tools: [first.tool],
      store,
      approvalPolicy: () => 'ask',
      // The person never answers: the process is as good as dead once the question is out.
      hooks: { onConfirm: () => (asked(), new Promise<boolean>(() => {})) },
    });
    const dead = agent.run('pay');
    await question;
    const logged = await store.loadEvents(dead.runId);
    expect(logged.some((e) => e.type === 'tool_started')).toBe(true);
    const second = payTool();
    const shown: unknown[] = [];
    const other = new Agent({
      model: server.model(),
      tools: [second.tool],
      store,
      approvalPolicy: () => 'ask',
      hooks: { onConfirm: (_c, args) => (shown.push(args), true) },
    });
    const result = await other.resume(dead.runId);
    expect(result).toMatchObject({ status: 'done', text: 'end' });
    expect(shown).toEqual([{ amount: 5, currency: 'EUR' }]);
    expect(second.ran).toEqual([{ amount: 5, currency: 'EUR' }]);
    expect(first.ran).toEqual([]);
  });
});

describe('onConfirm without a policy: the same approval path as a policy that asks', () => {
  it('asks about parallel calls one at a time in call order, records the hash, and logs no policy decision', async () => {
    const { tool, ran } = payTool();
    const asked: string[] = [];
    let open = 0;
    let most = 0;
    const script = [
      {
        toolCalls: [
          { name: 'pay', arguments: { amount: 1 } },
          { name: 'pay', arguments: { amount: 2 } },
          { name: 'pay', arguments: { amount: 3 } },
        ],
      },
      { text: 'end' },
    ];
    const { agent } = await setup(script, {
      tools: [tool],
      hooks: {
        onConfirm: async (call, args) => {
          open++;
          most = Math.max(most, open);
          asked.push(`${call.id}:${String(args.amount)}`);
          // Answered on a later tick: a second question asked meanwhile would overlap this one.
          await new Promise((r) => setImmediate(r));
          open--;
          return args.amount !== 2 || { allow: false, reason: 'not two' };
        },
      },
    });
    const { events, result } = await collect(agent.run('pay'));
    expect(result.status).toBe('done');
    expect(most).toBe(1);
    expect(asked.map((a) => a.split(':')[1])).toEqual(['1', '2', '3']);
    expect(ran.map((a) => a.amount)).toEqual([1, 3]);
    expect(events.some((e) => e.type === 'permission_decided')).toBe(false);
    const requested = events.filter((e) => e.type === 'approval_requested');
    expect(requested.map((e) => (e.type === 'approval_requested' ? e.argumentsHash : ''))).toEqual([
      hashOf({ amount: 1, currency: 'EUR' }),
      hashOf({ amount: 2, currency: 'EUR' }),
      hashOf({ amount: 3, currency: 'EUR' }),
    ]);
    const denied = events.find((e) => e.type === 'tool_finished' && e.errorCode === 'tool_denied');
    expect(denied?.type === 'tool_finished' && JSON.stringify(denied.result.content)).toContain('a person declined it: not two');
  });
});

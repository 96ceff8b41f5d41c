import { describe, expect, it } from 'vitest';
import { isSummaryRequest, SUMMARY_HEADER } from '../../src/context/summary.js';
import { CONTEXT_BLOCK_HEADER } from '../../src/context/layers.js';
import { DELTA_EVENT_TYPES, type RunEvent } from '../../src/events.js';
import { Agent } from '../../src/loop/agent.js';
import { messagesFromEvents } from '../../src/loop/fold.js';
import { firstDivergence, replayModel } from '../../src/loop/replay.js';
import { resumeStateFrom } from '../../src/loop/resume-state.js';
import {
  startScriptedServer,
  type ReceivedRequest,
  type ScriptMessage,
  type ScriptRequest,
  type ScriptTurn,
} from '../../src/testing/index.js';
import { MemoryRunStore } from '../../src/store/memory.js';
import { defineTool } from '../../src/tools/define.js';
import { collect, setup } from './helpers.js';

/** `step(n)` answers `result-n`: each turn of the long runs below is one call of it. */
const stepTool = defineTool({
  name: 'step',
  description: 'Does step n of the job.',
  parameters: { type: 'object', properties: { n: { type: 'integer' }, pad: { type: 'integer' } }, required: ['n'] },
  risk: 'read',
  effect: 'pure',
  execute: ({ n, pad }) => `result-${String(n)}${pad ? ` ${'lorem ipsum '.repeat(Number(pad))}` : ''}`,
});

const contextLengthFault: ScriptTurn = {
  fault: {
    type: 'status',
    status: 400,
    body: {
      error: {
        message: "This model's maximum context length is 2000 tokens. However, your messages resulted in 2400 tokens.",
        type: 'invalid_request_error',
        code: 'context_length_exceeded',
      },
    },
  },
};

/** The `n` of every `step` call in a transcript or message list. */
function stepsIn(text: string): number[] {
  // In the transcript (`[call step call_7] {"n":7}`) or in the step record (`step(n=7) → …`).
  const found = [...text.matchAll(/\[call step [^\]]+\] \{"n":(\d+)[,}]|step\(n=(\d+)[,)]/g)].map((m) => Number(m[1] ?? m[2]));
  return [...new Set(found)].sort((a, b) => a - b);
}

/** A summary derived from the summary request: the range of steps it covers, folding in an earlier one. */
function summarize(request: ScriptRequest): ScriptTurn {
  const prompt = request.messages[0]?.content ?? '';
  const earlier = /SUMMARY OF STEPS (\d+)-(\d+)/.exec(prompt);
  const steps = stepsIn(prompt);
  const from = earlier ? Number(earlier[1]) : Math.min(...steps);
  const to = steps.length > 0 ? Math.max(...steps) : Number(earlier?.[2]);
  return { text: `SUMMARY OF STEPS ${from}-${to}: each step(n) returned result-n.` };
}

/** Main (agent) requests and summary requests, in the order the server got them. */
function split(received: readonly ReceivedRequest[]) {
  const main: ScriptRequest[] = [];
  const summaries: ScriptRequest[] = [];
  for (const r of received) {
    expect(r.rejected, 'the server rejected a request').toBeUndefined();
    const request = r.request as ScriptRequest;
    (isSummaryRequest(request) ? summaries : main).push(request);
  }
  return { main, summaries };
}

/** Every tool call is answered right after its assistant message, and every result answers such a call. */
function expectNoOrphans(messages: readonly ScriptMessage[]): void {
  for (let i = 0; i < messages.length; i++) {
    const message = messages[i] as ScriptMessage;
    if (message.role === 'tool') {
      let j = i - 1;
      while (j >= 0 && messages[j]?.role === 'tool') j--;
      const call = messages[j];
      expect(
        call?.role === 'assistant' && call.toolCalls.some((c) => c.id === message.toolCallId),
        `orphan tool result ${message.toolCallId}`,
      ).toBe(true);
    }
    if (message.role === 'assistant') {
      const answered = new Set<string>();
      for (let j = i + 1; j < messages.length && messages[j]?.role === 'tool'; j++)
        answered.add((messages[j] as { toolCallId: string }).toolCallId);
      for (const call of message.toolCalls) expect(answered.has(call.id), `unanswered tool call ${call.id}`).toBe(true);
    }
  }
}

/** A request's messages without the context message the harness adds at the end. */
const conversation = (request: ScriptRequest) => request.messages.filter((m) => !m.content.startsWith(CONTEXT_BLOCK_HEADER));
/** The `n` of the step calls among messages. */
const callsIn = (messages: readonly ScriptMessage[]) =>
  messages.flatMap((m) => (m.role === 'assistant' ? m.toolCalls.map((c) => Number(JSON.parse(c.arguments).n)) : []));
const stored = (events: RunEvent[]) => events.filter((e) => !DELTA_EVENT_TYPES.has(e.type));
const compactions = (events: RunEvent[]) => events.flatMap((e) => (e.type === 'context_compacted' ? [e] : []));

describe('compaction in a long run', () => {
  it('a 300-turn run stays under the window: the last 5 turns intact, no orphaned call, every completed step summarized', async () => {
    const WINDOW = 4_000;
    let turns = 0;
    const { agent, server } = await setup(
      (request) => {
        if (isSummaryRequest(request)) return summarize(request);
        turns++;
        return turns <= 300 ? { toolCalls: [{ name: 'step', arguments: { n: turns, pad: 16 } }] } : { text: 'all 300 steps done' };
      },
      { tools: [stepTool], limits: { maxSteps: 310 }, modelInfo: { contextWindow: WINDOW } },
    );
    const { events, result } = await collect(agent.run('Do steps 1 to 300 with the step tool.'));
    expect(result.reason).toBe('final_answer');
    expect(result.totals.steps).toBe(301);

    const { main, summaries } = split(server.received);
    expect(main).toHaveLength(301);
    const done = compactions(events);
    expect(done.length).toBeGreaterThanOrEqual(5);
    expect(summaries).toHaveLength(done.length);

    // Under the window on every request, by the server's own count (the prompt it reports).
    const sizes = server.received
      .filter((r) => !isSummaryRequest(r.request as ScriptRequest))
      .map((r) => Math.ceil(JSON.stringify(r.body).length / 4));
    expect(Math.max(...sizes)).toBeLessThan(WINDOW);

    for (const request of main) expectNoOrphans(request.messages);

    // After each compaction: the summary, then exactly the last 5 turns before it, unchanged.
    for (const event of done) {
      expect(event).toMatchObject({ reason: 'threshold', keptTurns: 5, keptMessages: 10, summarizer: 'model' });
      expect(event.tokensAfter).toBeLessThan(event.tokensBefore);
    }
    let checked = 0;
    main.forEach((request, i) => {
      const previous = main[i - 1];
      const now = conversation(request);
      if (!previous || !now[0]?.content.startsWith(SUMMARY_HEADER) || now[0].content === conversation(previous)[0]?.content) return;
      checked++;
      const kept = now.slice(1);
      expect(kept).toHaveLength(10);
      // The previous request's last 4 turns, then the turn answered since.
      expect(kept.slice(0, 8)).toEqual(conversation(previous).slice(-8));
      const n = callsIn(kept);
      expect(n).toEqual([n[0]!, n[0]! + 1, n[0]! + 2, n[0]! + 3, n[0]! + 4]);
      // The task layer is shown once turns were compacted away.
      expect(request.messages.at(-1)?.content).toContain('Goal: Do steps 1 to 300');
    });
    expect(checked).toBe(done.length);

    // Each completed step reached a summary request, and each summary the next request.
    const summarized = new Set(summaries.flatMap((s) => stepsIn(s.messages[0]?.content ?? '')));
    const firstKept = Math.min(...callsIn(conversation(main.at(-1)!)));
    for (let n = 1; n < firstKept; n++) expect(summarized.has(n), `step ${n} was never summarized`).toBe(true);
    for (const event of done) {
      const text = String(event.summary.content);
      expect(
        main.some((request) => request.messages[0]?.content === text),
        'a summary never reached a request',
      ).toBe(true);
    }
    expect(String(done.at(-1)?.summary.content)).toContain(`SUMMARY OF STEPS 1-${firstKept - 1}:`);

    // The log folds to the run's own (compacted) history.
    expect(messagesFromEvents(stored(events))).toEqual(result.messages);
  }, 60_000);
});

/** A script: `steps` tool turns, then `final`; summary requests answered by {@link summarize}; `refuse(i)` turns main request i into a context-length error. */
function stepsScript(
  steps: number,
  options: { refuse?: (main: number) => boolean; summary?: (request: ScriptRequest) => ScriptTurn; final?: string } = {},
) {
  let main = 0;
  let answered = 0;
  return (request: ScriptRequest): ScriptTurn => {
    if (isSummaryRequest(request)) return (options.summary ?? summarize)(request);
    main++;
    if (options.refuse?.(main)) return contextLengthFault;
    answered++;
    return answered <= steps ? { toolCalls: [{ name: 'step', arguments: { n: answered } }] } : { text: options.final ?? 'done' };
  };
}

describe('a context-length error from the provider', () => {
  it('is recovered by one compaction and one retry of the same step', async () => {
    const { agent, server } = await setup(stepsScript(24, { refuse: (i) => i === 25 }), {
      tools: [stepTool],
      limits: { maxSteps: 30 },
      context: { summaryMaxTokens: 100 },
    });
    const { events, result } = await collect(agent.run('Do 24 steps.'));
    expect(result.reason).toBe('final_answer');
    const [compaction, ...more] = compactions(events);
    expect(more).toHaveLength(0);
    expect(compaction).toMatchObject({ reason: 'context_length', step: 25, summarizer: 'model', keptTurns: 5, keptMessages: 10 });
    // The refused request and its retry are attempts 1 and 2 of step 25.
    expect(events.filter((e) => e.type === 'model_request' && e.step === 25).map((e) => (e as { attempt: number }).attempt)).toEqual([
      1, 2,
    ]);
    const { main, summaries } = split(server.received);
    expect(summaries).toHaveLength(1);
    const [refused, retried] = main.slice(24);
    expect(retried!.messages.length).toBeLessThan(refused!.messages.length);
    expect(retried!.messages[0]?.content).toBe(compaction!.summary.content);
    expect(stepsIn(summaries[0]!.messages[0]!.content)).toEqual(Array.from({ length: 19 }, (_, i) => i + 1));
    expect(conversation(retried!).slice(1)).toEqual(conversation(refused!).slice(-10));
    expect(messagesFromEvents(stored(events))).toEqual(result.messages);
  });

  it('fails the run with the provider error when the retry is refused too (no second compaction)', async () => {
    const { agent, server } = await setup(stepsScript(8, { refuse: (i) => i >= 9 }), { tools: [stepTool] });
    const { events, result } = await collect(agent.run('Do 8 steps.'));
    expect(result).toMatchObject({ status: 'failed', reason: 'fatal_error', error: { code: 'context_length' } });
    expect(compactions(events)).toHaveLength(1);
    expect(split(server.received).main).toHaveLength(10);
  });

  it("keeps the provider's words when even the compacted request would not fit", async () => {
    // A large system prompt: compacting the steps cannot bring the request under the smaller window.
    const { agent } = await setup(stepsScript(6, { refuse: (i) => i === 7 }), {
      tools: [stepTool],
      system: 'Rules. '.repeat(1_500),
      context: { keepTurns: 1 },
    });
    const { events, result } = await collect(agent.run('Do 6 steps.'));
    expect(compactions(events)).toHaveLength(1);
    expect(result).toMatchObject({ status: 'failed', reason: 'fatal_error', error: { code: 'context_length' } });
    expect(result.error?.message).toMatch(
      /maximum context length is 2000 tokens.*\. Compacting the history did not help: the next request is about \d+ tokens even after compaction/s,
    );
  });

  it('fails the run with the provider error when there is nothing to compact', async () => {
    const { agent, server } = await setup(stepsScript(0, { refuse: () => true }), { tools: [stepTool] });
    const { events, result } = await collect(agent.run('hi'));
    expect(result).toMatchObject({ status: 'failed', error: { code: 'context_length' } });
    expect(compactions(events)).toHaveLength(0);
    expect(server.received).toHaveLength(1);
  });
});

describe('compaction', () => {
  it('falls back to a summary written from the task record when the summary model fails', async () => {
    const failing = (): ScriptTurn => ({
      fault: { type: 'status', status: 400, body: { error: { message: 'summaries are not allowed here', type: 'invalid_request_error' } } },
    });
    const { agent } = await setup(stepsScript(24, { refuse: (i) => i === 25, summary: failing }), {
      tools: [stepTool],
      limits: { maxSteps: 30 },
      context: { summaryMaxTokens: 150 },
    });
    const { events, result } = await collect(agent.run('Do 24 steps.'));
    expect(result.error).toBeUndefined();
    expect(result.reason).toBe('final_answer');
    const [compaction] = compactions(events);
    expect(compaction).toMatchObject({ summarizer: 'mechanical', summaryError: { code: 'bad_request' } });
    const text = String(compaction!.summary.content);
    expect(text).toContain('the summary model failed, bad_request');
    expect(compaction!.summaryError?.message).toContain('summaries are not allowed here');
    // The newest of the replaced steps that fit the cap, oldest first.
    expect(text).toContain('step(n=19) → "result-19"');
    expect(text).toMatch(/the first \d+ left out for space/);
  });

  it("adds the summary request's tokens to the run totals, as the resume fold does", async () => {
    const store = new MemoryRunStore();
    const { agent } = await setup(stepsScript(8, { refuse: (i) => i === 9 }), { tools: [stepTool], store });
    const handle = agent.run('Do 8 steps.');
    const { events, result } = await collect(handle);
    const compaction = compactions(events)[0]!;
    expect(compaction.usage?.input).toBeGreaterThan(0);
    const turns = events.flatMap((e) => (e.type === 'assistant_message' ? [e.message.usage.input] : [])).reduce((a, b) => a + b, 0);
    expect(result.totals.usage.input).toBe(turns + compaction.usage!.input);
    const state = resumeStateFrom(await store.loadEvents(handle.runId));
    expect(state.totals.usage).toEqual(result.totals.usage);
    expect(state.history).toEqual(result.messages);
  });

  it('a compacted run replays exactly: the summary request gets the recorded summary, not an agent answer', async () => {
    const store = new MemoryRunStore();
    let turns = 0;
    const script = (request: ScriptRequest): ScriptTurn => {
      if (isSummaryRequest(request)) return summarize(request);
      turns++;
      return turns <= 30 ? { toolCalls: [{ name: 'step', arguments: { n: turns, pad: 16 } }] } : { text: 'all done' };
    };
    const options = { tools: [stepTool], limits: { maxSteps: 40 }, modelInfo: { contextWindow: 2_500 } };
    const { agent } = await setup(script, { ...options, store });
    const handle = agent.run('Do 30 steps.');
    const recorded = await handle;
    const events = await store.loadEvents(handle.runId);
    expect(compactions(events).length).toBeGreaterThan(0);
    const replay = new Agent({ ...options, model: 'ollama/replay', streamFn: replayModel(events) });
    const replayed = await collect(replay.run('Do 30 steps.'));
    expect(replayed.result).toMatchObject({ status: recorded.status, text: recorded.text });
    expect(firstDivergence(events, replayed.events)).toBeUndefined();
    expect(compactions(replayed.events).map((c) => c.summary)).toEqual(compactions(events).map((c) => c.summary));
  });

  it('a compacted run resumes from its compacted history and task record', async () => {
    const store = new MemoryRunStore();
    let phase: 'first' | 'second' = 'first';
    let main = 0;
    const script = (request: ScriptRequest): ScriptTurn => {
      if (isSummaryRequest(request)) return summarize(request);
      main++;
      if (phase === 'first')
        return main <= 20 ? { toolCalls: [{ name: 'step', arguments: { n: main } }] } : { fault: { type: 'status', status: 401 } };
      return { text: 'resumed and done' };
    };
    const options = { tools: [stepTool], store, modelInfo: { contextWindow: 1_000 }, limits: { maxSteps: 50 } };
    const { agent, server } = await setup(script, options);
    const handle = agent.run('Do the steps.');
    const first = await collect(handle);
    expect(first.result).toMatchObject({ status: 'failed', error: { code: 'auth' } });
    expect(compactions(first.events).length).toBeGreaterThan(0);

    phase = 'second';
    const before = server.received.length;
    const successor = new Agent({ ...options, model: server.model(), retry: { baseDelayMs: 5, jitter: false } });
    const resumed = await collect(successor.resume(handle.runId));
    expect(resumed.result.reason).toBe('final_answer');
    const request = server.received[before]!.request!;
    expect(request.messages[0]?.content).toBe(first.result.messages[0]!.content);
    expect(String(first.result.messages[0]!.content)).toContain(SUMMARY_HEADER);
    // The task layer lists every step, the compacted ones included.
    const block = request.messages.at(-1)!.content;
    expect(block).toContain('Goal: Do the steps.');
    expect(block).toContain('Completed steps (20; the last 10 listed)');
    expect(block).toContain('20. step(n=20) → "result-20"');
    const all = await store.loadEvents(handle.runId);
    expect(messagesFromEvents(all)).toEqual(resumed.result.messages);
  });

  it('ends the run with context_overflow when even a compacted request cannot fit', async () => {
    const { agent, server } = await setup([{ text: 'never' }], { system: 'Rules. '.repeat(2_000), modelInfo: { contextWindow: 1_000 } });
    const result = await agent.run('hi');
    expect(result).toMatchObject({ status: 'failed', reason: 'fatal_error', error: { code: 'context_overflow' } });
    expect(result.error?.message).toMatch(/1000-token window/);
    expect(server.received).toHaveLength(0);
  });

  it('context: false sends the bare history and never compacts', async () => {
    const { agent, server } = await setup(stepsScript(30), {
      tools: [stepTool],
      limits: { maxSteps: 40 },
      modelInfo: { contextWindow: 1_000 },
      context: false,
    });
    const { events, result } = await collect(agent.run('Do 30 steps.'));
    expect(result.reason).toBe('final_answer');
    expect(compactions(events)).toHaveLength(0);
    expect(server.received.at(-1)!.request!.messages).toHaveLength(61);
  });
});

describe('layers in a run', () => {
  it('the model keeps a plan with update_plan, shown back in the task layer every turn', async () => {
    const script = [
      { toolCalls: [{ name: 'update_plan', arguments: { steps: ['Read the file', 'Fix the bug'] } }] },
      { toolCalls: [{ name: 'step', arguments: { n: 1 } }] },
      { text: 'done' },
    ];
    const { agent, server } = await setup(script, { tools: [stepTool], context: { planTool: true } });
    const result = await agent.run('Fix the bug.');
    expect(result.reason).toBe('final_answer');
    expect(server.received[0]!.request!.toolNames).toEqual(['step', 'update_plan']);
    const blocks = server.received.map((r) => r.request!.messages.find((m) => m.content.startsWith(CONTEXT_BLOCK_HEADER))?.content ?? '');
    expect(blocks[0]).toContain('Goal: Fix the bug.');
    expect(blocks[0]).not.toContain('Plan:');
    expect(blocks[1]).toContain('Plan:\n1. Read the file\n2. Fix the bug');
    expect(blocks[2]).toContain('2. step(n=1) → "result-1"');
    // The first request: the context message just before the user's words.
    expect(server.received[0]!.request!.messages.map((m) => m.role)).toEqual(['user', 'user']);
    expect(server.received[0]!.request!.messages[1]?.content).toBe('Fix the bug.');
    // The history itself never contains it.
    expect(result.messages.some((m) => m.role === 'user' && String(m.content).startsWith(CONTEXT_BLOCK_HEADER))).toBe(false);
  });

  it('rules and skills join the system prompt; memory is retrieved once per user input', async () => {
    const queries: string[] = [];
    const memory = {
      retrieve: (query: string) => (
        queries.push(query),
        [
          { text: 'The build uses pnpm.', source: 'notes.md', score: 0.9 },
          { text: 'irrelevant', score: 0.1 },
        ]
      ),
      minScore: 0.5,
    };
    const { agent, server } = await setup([{ toolCalls: [{ name: 'step', arguments: { n: 1 } }] }, { text: 'done' }], {
      tools: [stepTool],
      system: 'You are careful.',
      context: { rules: async () => 'Project rules: run the tests.', skills: 'Skills: none yet.', memory },
    });
    await agent.run('How do I build?');
    expect(server.received[0]!.request!.system).toBe('You are careful.\n\nProject rules: run the tests.\n\nSkills: none yet.');
    expect(queries).toEqual(['How do I build?']);
    for (const received of server.received) {
      const block = received.request!.messages.find((m) => m.content.startsWith(CONTEXT_BLOCK_HEADER))!.content;
      expect(block).toContain('- The build uses pnpm. (notes.md)');
      expect(block).not.toContain('irrelevant');
    }
    expect(roles(server.received[1]!.request!.messages)).toBe('user,assistant,tool,user');
  });
});

function roles(messages: Array<{ role: string }>): string {
  return messages.map((m) => m.role).join(',');
}

describe('every wire accepts the compacted history and the context message', () => {
  for (const api of ['anthropic-messages', 'gemini', 'openai-responses', 'openai-chat'] as const) {
    it(`${api}: a compaction after a context-length error, then the task layer, in requests the server validates`, async () => {
      const server = await startScriptedServer({ script: stepsScript(8, { refuse: (i) => i === 9 }) });
      try {
        const agent = new Agent({
          model: server.model('m', api),
          tools: [stepTool],
          context: { task: 'always', summaryMaxTokens: 100 },
          retry: { baseDelayMs: 5, jitter: false },
        });
        const { events, result } = await collect(agent.run('Do 8 steps.'));
        expect(result.reason).toBe('final_answer');
        expect(compactions(events)).toHaveLength(1);
        const { main } = split(server.received);
        const retried = main[9]!;
        expect(retried.messages[0]?.content).toContain(SUMMARY_HEADER);
        expect(retried.messages.at(-1)?.content).toContain('Goal: Do 8 steps.');
        for (const request of main) expectNoOrphans(request.messages);
      } finally {
        await server.close();
      }
    });
  }
});

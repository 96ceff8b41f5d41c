// A run whose MCP tool call is asked a question (an elicitation) with nobody to answer it:
// the call waits, the run pauses durably, and an answer given later (a new agent, as
// another process would build it) resumes the run: the call is made again and the server,
// asking again, gets the stored answer. Against a server of our own on the official SDK.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import type { RunEvent } from '../../src/events.js';
import { Agent } from '../../src/loop/agent.js';
import { agentTool } from '../../src/loop/agent-tool.js';
import { checkedAnswer, waitingQuestionsInTree, waitingQuestionsOf, type WaitingQuestion } from '../../src/loop/elicitation-answer.js';
import type { McpEvent } from '../../src/mcp/types.js';
import type { ScriptRequest } from '../../src/testing/index.js';
import { openSqliteStore } from '../../src/store/open.js';
import { everything, host, startHttpServer } from '../mcp/helpers.js';
import { setup } from './helpers.js';

const BOOKING = fileURLToPath(new URL('../mcp/fixtures/booking-server.mjs', import.meta.url));
const FEATURES = fileURLToPath(new URL('../mcp/fixtures/client-features-server.mjs', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'rein-elicit-pause-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function lastToolText(request: ScriptRequest): string {
  const last = request.messages.at(-1);
  if (last?.role !== 'tool') return '';
  const content = last.content as unknown;
  return typeof content === 'string' ? content : (content as Array<{ text?: string }>).map((p) => p.text ?? '').join('');
}

describe('an elicitation answered after a durable pause', () => {
  it('pauses the run at the question, and an answer from a new agent resumes it: the call is made again and answered', async () => {
    const bookings = join(dir, 'bookings-1.txt');
    const db = join(dir, 'runs-1.db');
    const script = (request: ScriptRequest) =>
      request.messages.at(-1)?.role === 'user'
        ? { toolCalls: [{ name: 'booking__book', arguments: { day: 'Friday' } }] }
        : { text: `Done: ${lastToolText(request)}` };
    const config = { command: process.execPath, args: [BOOKING], env: { BOOKINGS_FILE: bookings } };

    const events: McpEvent[] = [];
    const first = await host({ booking: config }, { pauseElicitations: true, onEvent: (e) => events.push(e) });
    const store = await openSqliteStore({ path: db });
    const { server, agent } = await setup(script, { toolSources: [first], store });
    const paused = await agent.run('book a table for Friday');
    expect(paused).toMatchObject({ status: 'paused', reason: 'awaiting_approval' });
    await first.close();
    const logged = await store.loadEvents(paused.runId);
    const questions = waitingQuestionsOf(logged);
    expect(questions).toHaveLength(1);
    expect(questions[0]).toMatchObject({
      type: 'elicitation_requested',
      server: 'booking',
      mode: 'form',
      message: 'Who is the table on Friday for?',
      name: 'booking__book',
      requestedSchema: { required: ['name'] },
    });
    // The call has no end: nothing was booked, and the model was asked once.
    expect(logged.filter((e) => e.type === 'tool_finished')).toHaveLength(0);
    expect(() => readFileSync(bookings, 'utf8')).toThrow();
    expect(server.requests).toHaveLength(1);
    expect(events).toContainEqual(expect.objectContaining({ type: 'mcp_elicitation', action: 'paused' }));

    // A form that does not fit is refused and leaves the run paused.
    const second = await host({ booking: config }, { pauseElicitations: true });
    const again = new Agent({ model: server.model(), toolSources: [second], store });
    const refused = await again.answerElicitation(paused.runId, { action: 'accept', content: { seats: 3 } });
    expect(refused.status).toBe('failed');
    expect(refused.error?.message).toMatch(/does not fit the requested form: .*name/);
    expect((await store.getRun(paused.runId))?.status).toBe('paused');

    // The answer, with the default filled in for the seats left out.
    const done = await again.answerElicitation(paused.runId, { action: 'accept', content: { name: 'Ada' } });
    expect(done.error?.message).toBeUndefined();
    expect(done).toMatchObject({ status: 'done', text: 'Done: booked: Friday Ada 2' });
    expect(readFileSync(bookings, 'utf8')).toBe('Friday Ada 2\n');
    const all = await store.loadEvents(paused.runId);
    const answered = all.find((e): e is Extract<RunEvent, { type: 'elicitation_answered' }> => e.type === 'elicitation_answered');
    expect(answered).toMatchObject({ action: 'accept', content: { name: 'Ada', seats: 2 }, requestHash: questions[0]?.requestHash });
    expect(all.filter((e) => e.type === 'tool_finished')).toHaveLength(1);
    expect(all.filter((e) => e.type === 'tool_started')).toHaveLength(2);
    // Nothing waits any more, and a second answer is refused.
    expect(waitingQuestionsOf(all)).toEqual([]);
    const late = await again.answerElicitation(paused.runId, { action: 'decline' });
    expect(late.error?.message).toMatch(/not waiting for approval \(it is done\)/);
    await store.close();
  });

  it('a declined question goes back to the server as declined; without a store the call fails with the question named', async () => {
    const db = join(dir, 'runs-2.db');
    const config = { command: process.execPath, args: [BOOKING] };
    const script = (request: ScriptRequest) =>
      request.messages.at(-1)?.role === 'user'
        ? { toolCalls: [{ name: 'booking__book', arguments: {} }] }
        : { text: `Said: ${lastToolText(request)}` };
    const mcp = await host({ booking: config }, { pauseElicitations: true });
    const store = await openSqliteStore({ path: db });
    const { agent, server } = await setup(script, { toolSources: [mcp], store });
    const paused = await agent.run('book');
    expect(paused.status).toBe('paused');
    const again = new Agent({ model: server.model(), toolSources: [mcp], store });
    expect(await again.answerElicitation(paused.runId, { action: 'decline' })).toMatchObject({
      status: 'done',
      text: 'Said: not booked: decline',
    });
    await store.close();

    const { agent: storeless } = await setup(script, { toolSources: [mcp] });
    const result = await storeless.run('book');
    expect(result.status).toBe('done');
    expect(result.text).toMatch(
      /^Said: MCP server "booking" asked a person: "Who is the table on today for\?", and this run can neither ask nor wait/,
    );
  });

  it('over Streamable HTTP too: the paused question is answered, the call made again, the defaults filled in', async () => {
    const { url } = await startHttpServer([FEATURES, 'http'], /listening (\d+)/);
    const mcp = await host({ f: { url: `${url}/mcp` } }, { pauseElicitations: true });
    const store = await openSqliteStore({ path: join(dir, 'runs-3.db') });
    const script = (request: ScriptRequest) =>
      request.messages.at(-1)?.role === 'user' ? { toolCalls: [{ name: 'f__ask', arguments: {} }] } : { text: lastToolText(request) };
    const { agent, server } = await setup(script, { toolSources: [mcp], store });
    const paused = await agent.run('ask me');
    expect(paused.status).toBe('paused');
    expect(waitingQuestionsOf(await store.loadEvents(paused.runId))).toEqual([
      expect.objectContaining({ server: 'f', message: 'Who are you?', name: 'f__ask' }),
    ]);
    const again = new Agent({ model: server.model(), toolSources: [mcp], store });
    const done = await again.answerElicitation(paused.runId, { action: 'accept', content: { name: 'Ada' } });
    expect(done.status).toBe('done');
    expect(JSON.parse(done.text)).toEqual({ action: 'accept', content: { name: 'Ada', age: 30, colour: 'green', subscribe: false } });
    await store.close();
  });

  it("server-everything's elicitation: paused, answered from a new agent with the form's defaults filled in", async () => {
    const mcp = await host({ everything: everything() }, { pauseElicitations: true });
    const store = await openSqliteStore({ path: join(dir, 'runs-4.db') });
    const script = (request: ScriptRequest) =>
      request.messages.at(-1)?.role === 'user'
        ? { toolCalls: [{ name: 'everything__trigger-elicitation-request', arguments: {} }] }
        : { text: lastToolText(request) };
    const { agent, server } = await setup(script, { toolSources: [mcp], store });
    const paused = await agent.run('ask me');
    expect(paused.status).toBe('paused');
    const [question] = waitingQuestionsOf(await store.loadEvents(paused.runId));
    expect(question).toMatchObject({ server: 'everything', mode: 'form', message: 'Please provide inputs for the following fields:' });
    const again = new Agent({ model: server.model(), toolSources: [mcp], store });
    const done = await again.answerElicitation(paused.runId, { action: 'accept', content: { name: 'Ada' } });
    expect(done.status).toBe('done');
    expect(done.text).toContain('User provided the requested information');
    expect(done.text).toContain('Ada');
    const answered = (await store.loadEvents(paused.runId)).find((e) => e.type === 'elicitation_answered');
    // The schema's defaults were filled in for the fields left out.
    expect(answered).toMatchObject({ content: { name: 'Ada', integer: 42 } });
    await store.close();
  });

  it("a sub-agent's call asked pauses the tree; the answer given at the root goes to the child's call and finishes the tree", async () => {
    const bookings = join(dir, 'bookings-5.txt');
    const mcp = await host(
      { booking: { command: process.execPath, args: [BOOKING], env: { BOOKINGS_FILE: bookings } } },
      { pauseElicitations: true },
    );
    const store = await openSqliteStore({ path: join(dir, 'runs-5.db') });
    const { server } = await setup((request) => {
      const tool = request.messages.find((m) => m.role === 'tool');
      if (request.model === 'lead')
        return tool ? { text: `lead: ${lastToolText(request)}` } : { toolCalls: [{ name: 'booker', arguments: { task: 'book Friday' } }] };
      return tool ? { text: `booker: ${lastToolText(request)}` } : { toolCalls: [{ name: 'booking__book', arguments: { day: 'Friday' } }] };
    });
    const build = () => {
      const booker = new Agent({ name: 'booker', model: server.model('booker'), toolSources: [mcp], store });
      return new Agent({
        name: 'lead',
        model: server.model('lead'),
        store,
        tools: [agentTool(booker, { name: 'booker', description: 'Books.' })],
      });
    };
    const paused = await build().run('book a table');
    expect(paused).toMatchObject({ status: 'paused', reason: 'awaiting_approval' });
    // The root's own log has no question: the child's has.
    expect(waitingQuestionsOf(await store.loadEvents(paused.runId))).toEqual([]);
    const [question] = await waitingQuestionsInTree(store, paused.runId);
    expect(question).toMatchObject({ server: 'booking', message: 'Who is the table on Friday for?', name: 'booking__book' });
    expect(question?.runId).not.toBe(paused.runId);

    const done = await build().answerElicitation(paused.runId, { action: 'accept', content: { name: 'Ada', seats: 3 } });
    expect(done.error?.message).toBeUndefined();
    expect(done).toMatchObject({ status: 'done', text: 'lead: booker: booked: Friday Ada 3' });
    expect(readFileSync(bookings, 'utf8')).toBe('Friday Ada 3\n');
    expect((await store.loadEvents(question!.runId)).some((e) => e.type === 'elicitation_answered')).toBe(true);
    await store.close();
  });

  it('URL mode: the paused question names the URL; accepted once opened, the re-asked question (a new elicitation id) gets it', async () => {
    const mcp = await host({ booking: { command: process.execPath, args: [BOOKING] } }, { pauseElicitations: true });
    const store = await openSqliteStore({ path: join(dir, 'runs-6.db') });
    const script = (request: ScriptRequest) =>
      request.messages.at(-1)?.role === 'user'
        ? { toolCalls: [{ name: 'booking__visit', arguments: {} }] }
        : { text: lastToolText(request) };
    const { agent, server } = await setup(script, { toolSources: [mcp], store });
    const paused = await agent.run('visit');
    const [question] = waitingQuestionsOf(await store.loadEvents(paused.runId));
    expect(question).toMatchObject({ mode: 'url', url: 'https://example.com/sign', message: 'Sign the form' });
    expect(question?.elicitationId).toMatch(/^e-/);
    const again = new Agent({ model: server.model(), toolSources: [mcp], store });
    expect(await again.answerElicitation(paused.runId, { action: 'accept' })).toMatchObject({ status: 'done', text: 'visit: accept' });
    await store.close();
  });
});

describe('checkedAnswer', () => {
  const question = (message: string): WaitingQuestion =>
    ({
      type: 'elicitation_requested',
      runId: 'run_a',
      step: 1,
      toolCallId: 'call_b',
      server: 's',
      mode: 'form',
      message,
      requestedSchema: {
        type: 'object',
        properties: { color: { type: 'string', enum: ['red', 'blue'] }, seats: { type: 'integer', default: 2 } },
        required: ['color'],
      },
      requestHash: 'h',
      name: 's__ask',
    }) as unknown as WaitingQuestion;

  it('refuses a field the form does not have (a misspelt name), naming the fields it has', async () => {
    await expect(checkedAnswer(question('Which?'), { action: 'accept', content: { color: 'red', seets: 4 } })).rejects.toThrow(
      'the answer to "Which?" does not fit the requested form: the form has no field "seets" (its fields: color, seats)',
    );
    await expect(checkedAnswer(question('Which?'), { action: 'accept', content: { color: 'red' } })).resolves.toEqual({
      requestHash: 'h',
      action: 'accept',
      content: { color: 'red', seats: 2 },
    });
  });

  it('names a long or many-line question on one line, cut, in the error', async () => {
    const error = await checkedAnswer(question(`${'A'.repeat(5000)}\nsecond line`), {
      action: 'accept',
      content: { color: 'green' },
    }).catch((e: Error) => e);
    expect(error).toBeInstanceOf(Error);
    const message = (error as Error).message;
    expect(message).not.toContain('\n');
    expect(message.length).toBeLessThan(400);
    expect(message).toContain(`"${'A'.repeat(200)}…" does not fit the requested form: parameter "color" must be one of "red", "blue"`);
  });
});

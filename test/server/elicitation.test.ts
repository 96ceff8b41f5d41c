// Answering over HTTP the MCP server's question a served run's call waits on: the run
// pauses at the question, a wrong or unfitting answer is refused and leaves it paused, and
// the answer continues it in the server, the call made again. A server of our own on the
// official SDK, over stdio, from the project's .mcp.json.
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { agentFile, call, readStream, startInProcess, storedOf, until, type InProcess } from './helpers.js';
import { toolLoop } from './scripts.js';

const BOOKING = fileURLToPath(new URL('../mcp/fixtures/booking-server.mjs', import.meta.url));
let env: InProcess | undefined;

afterEach(async () => {
  await env?.close();
  env = undefined;
});

async function finished(url: string, runId: string, status: string) {
  return until(async () => {
    const { body } = await call(url, `/v1/runs/${runId}`);
    return body.record.status === status && !body.record.live ? body : undefined;
  }, `run ${runId} to be ${status}`);
}

describe('POST /v1/runs/:id/elicitation', () => {
  it('answers the question a paused run waits on; a stale call or a form that does not fit is refused', async () => {
    env = await startInProcess({
      agents: { booker: agentFile('booker', { tools: '[booking__book]' }) },
      script: toolLoop({ tool: 'booking__book', calls: 1, args: () => ({ day: 'Monday' }) }),
    });
    const bookings = join(env.project, 'bookings.txt');
    // Read when the agent's workbench first opens (on the first run).
    await writeFile(
      join(env.project, '.mcp.json'),
      JSON.stringify({ mcpServers: { booking: { command: process.execPath, args: [BOOKING], env: { BOOKINGS_FILE: bookings } } } }),
    );
    await mkdir(join(env.project, '.rein'), { recursive: true });
    await writeFile(join(env.project, '.rein', 'settings.json'), JSON.stringify({ permissions: { allow: ['booking__book'] } }));

    const made = await call(env.url, '/v1/runs', { body: { agent: 'booker', input: 'book a table' } });
    const id = made.body.runId as string;
    const paused = await finished(env.url, id, 'paused');
    expect(paused.record.reason).toBe('awaiting_approval');
    const asked = storedOf((await readStream(env.url, id)).messages).find((e) => e.type === 'elicitation_requested');
    expect(asked).toMatchObject({ server: 'booking', message: 'Who is the table on Monday for?' });
    const toolCallId = (asked as { toolCallId: string }).toolCallId;
    // The run's page lists the question beside the approvals (none here).
    expect(paused.pendingApprovals).toEqual([]);
    expect(paused.pendingQuestions).toEqual([
      {
        toolCallId,
        name: 'booking__book',
        runId: id,
        step: 1,
        server: 'booking',
        mode: 'form',
        message: 'Who is the table on Monday for?',
        requestHash: (asked as { requestHash: string }).requestHash,
        requestedSchema: expect.objectContaining({ type: 'object', required: ['name'] }),
      },
    ]);

    expect(await call(env.url, `/v1/runs/${id}/elicitation`, { body: { action: 'accept', toolCallId: 'call_other' } })).toMatchObject({
      status: 409,
      body: {
        error: {
          code: 'conflict',
          message: expect.stringMatching(/no call call_other of it waits on a question; the calls that do: call_/),
        },
      },
    });
    expect(await call(env.url, `/v1/runs/${id}/elicitation`, { body: { action: 'accept', content: { seats: 2 } } })).toMatchObject({
      status: 400,
      body: { error: { code: 'invalid_request', message: expect.stringMatching(/does not fit the requested form/) } },
    });
    expect(await call(env.url, `/v1/runs/${id}/elicitation`, { body: { action: 'maybe' } })).toMatchObject({ status: 400 });
    expect((await call(env.url, `/v1/runs/${id}`)).body.record.status).toBe('paused');

    const answered = await call(env.url, `/v1/runs/${id}/elicitation`, {
      body: { action: 'accept', toolCallId, content: { name: 'Grace', seats: 4 } },
    });
    expect(answered).toMatchObject({ status: 202, body: { runId: id, status: 'running' } });
    expect((await finished(env.url, id, 'done')).pendingQuestions).toEqual([]);
    expect(await readFile(bookings, 'utf8')).toBe('Monday Grace 4\n');
    const events = storedOf((await readStream(env.url, id)).messages);
    expect(events.filter((e) => e.type === 'elicitation_answered')).toEqual([
      expect.objectContaining({ toolCallId, action: 'accept', content: { name: 'Grace', seats: 4 } }),
    ]);
    expect(await call(env.url, `/v1/runs/${id}/elicitation`, { body: { action: 'decline' } })).toMatchObject({ status: 409 });
  });

  it('an answer to a run that waits on an approval, not a question, is a 409 that says where to decide it', async () => {
    env = await startInProcess({
      agents: { booker: agentFile('booker', { tools: '[booking__book]' }) },
      script: toolLoop({ tool: 'booking__book', calls: 1, args: () => ({ day: 'Monday' }) }),
    });
    await writeFile(
      join(env.project, '.mcp.json'),
      JSON.stringify({
        mcpServers: { booking: { command: process.execPath, args: [BOOKING], env: { BOOKINGS_FILE: join(env.project, 'b.txt') } } },
      }),
    );
    const made = await call(env.url, '/v1/runs', { body: { agent: 'booker', input: 'book a table' } });
    const id = made.body.runId as string;
    const paused = await finished(env.url, id, 'paused');
    expect(paused.pendingApprovals).toHaveLength(1);
    expect(await call(env.url, `/v1/runs/${id}/elicitation`, { body: { action: 'accept', content: { name: 'Ada' } } })).toMatchObject({
      status: 409,
      body: {
        error: {
          code: 'conflict',
          message: `run ${id}: it waits on no MCP server's question but on an approval: GET /v1/runs/${id} lists its pendingApprovals, POST /v1/runs/${id}/approvals decides them`,
        },
      },
    });
    expect((await call(env.url, `/v1/runs/${id}`)).body.record.status).toBe('paused');
  });
});

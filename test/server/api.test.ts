// The HTTP API over real HTTP: every route, the token, every error code, what a request
// may not set, approvals and steering, and the OpenAPI document.
import { readFile } from 'node:fs/promises';
import { request } from 'node:http';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import Ajv2020 from 'ajv/dist/2020.js';
import { TOKEN, agentFile, call, readStream, startInProcess, storedOf, until, type InProcess } from './helpers.js';
import { toolLoop } from './scripts.js';
import * as S from '../../src/server/schemas.js';

let env: InProcess | undefined;

/** A POST as curl sends it (node:http reads an early answer, such as a 413, while the body is still going). */
function postRaw(url: string, body: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: 'POST',
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        let text = '';
        res
          .setEncoding('utf8')
          .on('data', (d: string) => (text += d))
          .on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}
afterEach(async () => {
  await env?.close();
  env = undefined;
});

const calc = agentFile('calc', { tools: '[calculate]', limits: '{ maxSteps: 6 }' });
const writer = agentFile('writer', { tools: '[write_file, read_file]' });

async function finished(url: string, runId: string, status?: string) {
  return until(async () => {
    const { body } = await call(url, `/v1/runs/${runId}`);
    return body.record.status !== 'running' && !body.record.live && (status === undefined || body.record.status === status)
      ? body
      : undefined;
  }, `run ${runId} to end`);
}

describe('the token', () => {
  it('is needed on every route but GET /healthz: none, a wrong one and a malformed header are refused with 401', async () => {
    env = await startInProcess({ agents: { calc }, script: toolLoop() });
    expect(await call(env.url, '/healthz', { token: null })).toMatchObject({ status: 200, body: { status: 'ok' } });
    const routes: Array<[string, string, unknown?]> = [
      ['GET', '/v1/runs'],
      ['POST', '/v1/runs', { input: 'x' }],
      ['GET', '/v1/runs/run_x'],
      ['GET', '/v1/runs/run_x/events'],
      ['POST', '/v1/runs/run_x/messages', { kind: 'steer', text: 'x' }],
      ['POST', '/v1/runs/run_x/abort'],
      ['POST', '/v1/runs/run_x/approvals', { toolCallId: 'c', approved: true }],
      ['POST', '/v1/runs/run_x/elicitation', { action: 'cancel' }],
      ['POST', '/v1/runs/run_x/resume'],
      ['GET', '/v1/openapi.json'],
      ['GET', '/v1/agents'],
      ['GET', '/assets/app.js'],
      ['DELETE', '/v1/session'],
    ];
    for (const [method, path, body] of routes) {
      for (const auth of [{ token: null }, { token: 'wrong-token' }, { headers: { authorization: 'Basic abc' } }]) {
        const res = await call(env.url, path, { method, ...(body === undefined ? {} : { body }), ...auth });
        expect(res.status, `${method} ${path} ${JSON.stringify(auth)}`).toBe(401);
        expect(res.body.error.code).toBe('unauthorized');
        expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/);
      }
    }
    // A browser without a session gets the sign-in page, still as a 401.
    const page = await call(env.url, '/', { token: null });
    expect(page.status).toBe(401);
    expect(page.body).toMatch(/<form method="post" action="v1\/session">/);
    expect(page.headers.get('content-security-policy')).toMatch(/default-src 'none'/);
  });
});

describe("the viewer's session", () => {
  it('POST /v1/session trades the token for an HttpOnly SameSite=Strict cookie; with it, reads work and writes only from the same origin', async () => {
    env = await startInProcess({ agents: { calc }, script: toolLoop({ calls: 0 }) });
    expect(await call(env.url, '/v1/session', { token: null, body: { token: 'wrong' } })).toMatchObject({
      status: 401,
      body: { error: { code: 'unauthorized' } },
    });
    expect(
      (await call(env.url, '/v1/session', { token: null, body: { token: TOKEN }, headers: { origin: 'http://evil.example' } })).status,
    ).toBe(403);
    const signed = await call(env.url, '/v1/session', { token: null, body: { token: TOKEN } });
    expect(signed.status).toBe(204);
    const setCookie = signed.headers.get('set-cookie') ?? '';
    expect(setCookie).toMatch(/^rein_session=v1\.\d+\.[\w-]{43}; Path=\/; HttpOnly; SameSite=Strict; Max-Age=43200$/);
    expect(setCookie).not.toContain(TOKEN);
    const cookie = setCookie.split(';')[0] as string;
    const host = new URL(env.url).host;
    expect((await call(env.url, '/v1/runs', { token: null, headers: { cookie } })).status).toBe(200);
    expect((await call(env.url, '/', { token: null, headers: { cookie } })).status).toBe(200);
    // A write riding on the cookie: refused without an Origin, or from another one (another local port too).
    expect(await call(env.url, '/v1/runs', { token: null, headers: { cookie }, body: { input: 'x' } })).toMatchObject({
      status: 403,
      body: { error: { code: 'forbidden' } },
    });
    expect(
      (await call(env.url, '/v1/runs', { token: null, headers: { cookie, origin: 'http://127.0.0.1:1' }, body: { input: 'x' } })).status,
    ).toBe(403);
    expect(
      (await call(env.url, '/v1/runs', { token: null, headers: { cookie, origin: `http://${host}` }, body: { input: 'x' } })).status,
    ).toBe(201);
    // A forged or expired session is no session.
    expect(
      (await call(env.url, '/v1/runs', { token: null, headers: { cookie: cookie.replace(/.$/, (c) => (c === 'A' ? 'B' : 'A')) } })).status,
    ).toBe(401);
    expect(
      (
        await call(env.url, '/v1/runs', {
          token: null,
          headers: { cookie: 'rein_session=v1.1.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' },
        })
      ).status,
    ).toBe(401);
    const out = await call(env.url, '/v1/session', { method: 'DELETE', token: null, headers: { cookie, origin: `http://${host}` } });
    expect(out.body).toBe(undefined);
    expect(out.status).toBe(204);
    expect(out.headers.get('set-cookie')).toMatch(/^rein_session=; .*Max-Age=0$/);
    // The token is never accepted in a URL.
    expect((await call(env.url, `/v1/runs?token=${TOKEN}`, { token: null })).status).toBe(401);
  });
});

describe('runs', () => {
  it('POST /v1/runs starts a run (201), GET shows it with totals, result and no approvals, the list pages and filters', async () => {
    env = await startInProcess({ agents: { calc }, script: toolLoop({ calls: 1 }) });
    const made = await call(env.url, '/v1/runs', { body: { agent: 'calc', input: 'add one' } });
    expect(made.status).toBe(201);
    expect(made.body).toEqual({ runId: expect.stringMatching(/^run_/), status: 'running' });
    const detail = await finished(env.url, made.body.runId, 'done');
    expect(detail).toMatchObject({
      record: {
        id: made.body.runId,
        status: 'done',
        reason: 'final_answer',
        agent: 'calc',
        task: 'add one',
        model: 'openai/scripted',
        live: false,
      },
      totals: { steps: 2, toolCalls: 1 },
      cost: null,
      result: { status: 'done', text: 'done after 1 calls' },
      pendingApprovals: [],
    });
    const second = await call(env.url, '/v1/runs', { body: { input: 'with the default agent' } });
    expect(second.status).toBe(201);
    await finished(env.url, second.body.runId);
    const third = await call(env.url, '/v1/runs', { body: { agent: 'calc', input: 'third' } });
    await finished(env.url, third.body.runId);

    const all = await call(env.url, '/v1/runs');
    expect(all.body.runs.map((r: { id: string }) => r.id)).toEqual([third.body.runId, second.body.runId, made.body.runId]);
    expect((await call(env.url, '/v1/runs?agent=calc')).body.runs.map((r: { id: string }) => r.id)).toEqual([
      third.body.runId,
      made.body.runId,
    ]);
    expect((await call(env.url, '/v1/runs?agent=default')).body.runs.map((r: { agent: string }) => r.agent)).toEqual(['default']);
    expect((await call(env.url, '/v1/runs?status=failed')).body).toEqual({ runs: [], nextCursor: null });
    const page1 = await call(env.url, '/v1/runs?limit=2');
    expect(page1.body.runs).toHaveLength(2);
    const page2 = await call(env.url, `/v1/runs?limit=2&cursor=${page1.body.nextCursor}`);
    expect(page2.body).toEqual({ runs: [expect.objectContaining({ id: made.body.runId })], nextCursor: null });
    expect((await call(env.url, '/v1/agents')).body.agents.map((a: { name: string }) => a.name)).toEqual(['default', 'calc']);
  });

  it('every error is {"error":{"code","message"}}: 400 names the field, 404, 409, 413, 415', async () => {
    env = await startInProcess({ agents: { calc }, script: toolLoop({ calls: 0 }) });
    const bad = async (body: unknown, field: string, message: RegExp) => {
      const res = await call(env!.url, '/v1/runs', { body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'invalid_request', field });
      expect(res.body.error.message).toMatch(message);
    };
    await bad({}, 'input', /input is required/);
    await bad({ input: 42 }, 'input', /input must be a string, got number 42/);
    await bad({ input: '' }, 'input', /input/);
    await bad({ input: 'x', limits: { maxSteps: '3' } }, 'limits.maxSteps', /limits\.maxSteps must be a whole number, got string "3"/);
    await bad({ input: 'x', limits: { maxStep: 3 } }, 'limits.maxStep', /unknown field limits\.maxStep: it takes maxSteps, timeoutMs/);
    await bad({ input: 'x', agent: 'nobody' }, 'agent', /there is no agent "nobody"; the agents are default, calc/);
    await bad({ input: 'x', agent: 'calc', limits: { maxSteps: 7 } }, 'limits.maxSteps', /7 is more than agent "calc" allows \(6\)/);
    await bad({ input: 'x', colour: 'red' }, 'colour', /unknown field colour: it takes agent, input, limits/);
    const notJson = await call(env.url, '/v1/runs', { raw: '{"input":', headers: { 'content-type': 'application/json' } });
    expect(notJson).toMatchObject({ status: 400, body: { error: { code: 'invalid_request', field: 'body' } } });
    const form = await call(env.url, '/v1/runs', { raw: 'input=x', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expect(form).toMatchObject({ status: 415, body: { error: { code: 'unsupported_media_type' } } });
    const huge = await postRaw(`${env.url}/v1/runs`, JSON.stringify({ input: 'x'.repeat(1_100_000) }));
    expect(huge.status).toBe(413);
    expect(JSON.parse(huge.text)).toMatchObject({ error: { code: 'payload_too_large', message: expect.any(String) } });
    // Sent in chunks, without a length: read up to the limit, then refused.
    const chunked = await fetch(`${env.url}/v1/runs`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: new ReadableStream({
        start: (c) => {
          c.enqueue(new TextEncoder().encode(JSON.stringify({ input: 'y'.repeat(1_200_000) })));
          c.close();
        },
      }),
      duplex: 'half',
    } as RequestInit);
    expect(chunked.status).toBe(413);
    expect(await call(env.url, '/v1/runs?limit=0')).toMatchObject({ status: 400, body: { error: { field: 'limit' } } });
    expect(await call(env.url, '/v1/runs?status=sleeping')).toMatchObject({ status: 400, body: { error: { field: 'status' } } });
    expect(await call(env.url, '/v1/runs?cursor=nonsense')).toMatchObject({ status: 400, body: { error: { field: 'cursor' } } });
    expect(await call(env.url, '/v1/runs?limit=5&colour=red')).toMatchObject({ status: 400, body: { error: { field: 'colour' } } });

    for (const [method, path, body] of [
      ['GET', '/v1/runs/run_none'],
      ['GET', '/v1/runs/run_none/events'],
      ['POST', '/v1/runs/run_none/messages', { kind: 'steer', text: 'x' }],
      ['POST', '/v1/runs/run_none/abort'],
      ['POST', '/v1/runs/run_none/approvals', { toolCallId: 'c', approved: true }],
      ['POST', '/v1/runs/run_none/resume'],
      ['GET', '/v1/nowhere'],
    ] as Array<[string, string, unknown?]>) {
      const res = await call(env.url, path, { method, ...(body === undefined ? {} : { body }) });
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(res.body.error).toEqual({ code: 'not_found', message: expect.any(String) });
    }

    const done = await call(env.url, '/v1/runs', { body: { agent: 'calc', input: 'answer at once' } });
    await finished(env.url, done.body.runId, 'done');
    const id = done.body.runId;
    for (const [path, body, message] of [
      ['messages', { kind: 'steer', text: 'too late' }, /is done \(final_answer\): it takes messages only while it runs/],
      ['abort', undefined, /is done/],
      ['approvals', { toolCallId: 'c', approved: true }, /is not waiting for approval \(it is done: final_answer\)/],
      ['resume', undefined, /is done \(final_answer\): there is nothing to resume/],
    ] as Array<[string, unknown, RegExp]>) {
      const res = await call(env.url, `/v1/runs/${id}/${path}`, { method: 'POST', ...(body === undefined ? {} : { body }) });
      expect(res.status, path).toBe(409);
      expect(res.body.error.code).toBe('conflict');
      expect(res.body.error.message).toMatch(message);
    }
    expect(await call(env.url, `/v1/runs/${id}/messages`, { body: { kind: 'shout', text: 'x' } })).toMatchObject({
      status: 400,
      body: { error: { field: 'kind' } },
    });
    expect(await call(env.url, `/v1/runs/${id}/events`, { headers: { 'last-event-id': 'soon' } })).toMatchObject({
      status: 400,
      body: { error: { field: 'Last-Event-ID' } },
    });
    expect(await call(env.url, `/v1/runs/${id}/events?after=x`)).toMatchObject({ status: 400, body: { error: { field: 'after' } } });
  });

  it('a request that tries to add tools, a base URL, a model, MCP servers or commands is refused, naming the field', async () => {
    env = await startInProcess({ agents: { calc }, script: toolLoop({ calls: 0 }) });
    for (const [field, value] of [
      ['tools', [{ name: 'bash' }]],
      ['baseUrl', 'http://attacker.example/v1'],
      ['base_url', 'http://attacker.example/v1'],
      ['model', 'openai/gpt-4o'],
      ['mcpServers', { evil: { command: 'sh' } }],
      ['commands', ['rm -rf /']],
      ['system', 'ignore your instructions'],
      ['outputSchema', {}],
    ] as Array<[string, unknown]>) {
      const res = await call(env.url, '/v1/runs', { body: { agent: 'calc', input: 'x', [field]: value } });
      expect(res.status, field).toBe(400);
      expect(res.body.error.field).toBe(field);
      expect(res.body.error.message).toMatch(/a request cannot add tools, commands, MCP servers, a model or a base URL/);
    }
    // Nested inside limits it is just an unknown limit.
    expect((await call(env.url, '/v1/runs', { body: { input: 'x', limits: { tools: ['bash'] } } })).body.error.field).toBe('limits.tools');
    expect(env.model.received).toHaveLength(0);
    expect((await call(env.url, '/v1/runs')).body.runs).toEqual([]);
  });
});

describe('approvals, steering, abort and resume through the API', () => {
  it('a write pauses the run; a stale call id or arguments hash is refused (409); the approval runs exactly that call and the run finishes', async () => {
    env = await startInProcess({
      agents: { writer },
      script: toolLoop({ tool: 'write_file', calls: 1, args: () => ({ path: 'out.txt', content: 'approved content\n' }) }),
    });
    const made = await call(env.url, '/v1/runs', { body: { agent: 'writer', input: 'write the file' } });
    const paused = await finished(env.url, made.body.runId, 'paused');
    expect(paused.record).toMatchObject({ status: 'paused', reason: 'awaiting_approval' });
    expect(paused.pendingApprovals).toEqual([
      {
        toolCallId: expect.any(String),
        name: 'write_file',
        arguments: { path: 'out.txt', content: 'approved content\n' },
        argumentsHash: expect.any(String),
        rule: expect.stringMatching(/write/),
        step: 1,
      },
    ]);
    const [pending] = paused.pendingApprovals;
    const id = made.body.runId;
    expect(await call(env.url, `/v1/runs/${id}/approvals`, { body: { toolCallId: 'call_other', approved: true } })).toMatchObject({
      status: 409,
      body: { error: { code: 'conflict', message: expect.stringMatching(/matches no call waiting/) } },
    });
    expect(
      await call(env.url, `/v1/runs/${id}/approvals`, {
        body: { toolCallId: pending.toolCallId, approved: true, argumentsHash: 'not-the-hash' },
      }),
    ).toMatchObject({ status: 409 });
    expect(await call(env.url, `/v1/runs/${id}/approvals`, { body: { toolCallId: pending.toolCallId } })).toMatchObject({
      status: 400,
      body: { error: { field: 'approved' } },
    });
    await expect(readFile(join(env.project, 'out.txt'), 'utf8')).rejects.toThrow();

    const approved = await call(env.url, `/v1/runs/${id}/approvals`, {
      body: { toolCallId: pending.toolCallId, approved: true, argumentsHash: pending.argumentsHash, reason: 'looks right' },
    });
    expect(approved).toMatchObject({ status: 202, body: { runId: id, status: 'running' } });
    const done = await finished(env.url, id, 'done');
    expect(done.pendingApprovals).toEqual([]);
    expect(await readFile(join(env.project, 'out.txt'), 'utf8')).toBe('approved content\n');
    const events = storedOf((await readStream(env.url, id)).messages);
    expect(events.filter((e) => e.type === 'approval_decided')).toEqual([
      expect.objectContaining({
        toolCallId: pending.toolCallId,
        approved: true,
        reason: 'looks right',
        argumentsHash: pending.argumentsHash,
      }),
    ]);
    expect(events.filter((e) => e.type === 'tool_finished')).toHaveLength(1);
    // Decided once: a second decision is refused.
    expect((await call(env.url, `/v1/runs/${id}/approvals`, { body: { toolCallId: pending.toolCallId, approved: true } })).status).toBe(
      409,
    );
  });

  it('a denial reaches the model as an error result and nothing is written', async () => {
    env = await startInProcess({
      agents: { writer },
      script: toolLoop({ tool: 'write_file', calls: 1, args: () => ({ path: 'no.txt', content: 'x' }) }),
    });
    const made = await call(env.url, '/v1/runs', { body: { agent: 'writer', input: 'write' } });
    const paused = await finished(env.url, made.body.runId, 'paused');
    const res = await call(env.url, `/v1/runs/${made.body.runId}/approvals`, {
      body: { toolCallId: paused.pendingApprovals[0].toolCallId, approved: false, reason: 'not that file' },
    });
    expect(res.status).toBe(202);
    await finished(env.url, made.body.runId, 'done');
    await expect(readFile(join(env.project, 'no.txt'), 'utf8')).rejects.toThrow();
    const tool = env.model.received.at(-1)?.request?.messages.find((m) => m.role === 'tool');
    expect(tool).toMatchObject({ role: 'tool', content: expect.stringMatching(/permission denied for tool "write_file": not that file/) });
  });

  it('steering reaches the model before its next call; a follow-up runs after the answer; abort stops a live run; resume continues it', async () => {
    let release: (() => void) | undefined;
    const gate = new Promise<void>((r) => (release = r));
    const script = toolLoop({ calls: 1 });
    env = await startInProcess({
      agents: { calc },
      script: async (request, info) => {
        // The first answer waits until the test has steered.
        if (info.index === 0) await gate;
        return script(request, info);
      },
    });
    const made = await call(env.url, '/v1/runs', { body: { agent: 'calc', input: 'compute' } });
    const id = made.body.runId;
    expect(await call(env.url, `/v1/runs/${id}/messages`, { body: { kind: 'steer', text: 'use small numbers' } })).toMatchObject({
      status: 202,
      body: { runId: id },
    });
    expect(await call(env.url, `/v1/runs/${id}/messages`, { body: { kind: 'follow_up', text: 'now say bye' } })).toMatchObject({
      status: 202,
    });
    release!();
    const done = await finished(env.url, id, 'done');
    expect(done.record.steps).toBeGreaterThanOrEqual(3);
    const seen = env.model.received.map((r) => r.request?.messages.filter((m) => m.role === 'user').map((m) => m.content));
    expect(seen[1]).toContain('use small numbers');
    expect(seen.at(-1)).toContain('now say bye');
    const events = storedOf((await readStream(env.url, id)).messages);
    expect(events.filter((e) => e.type === 'message_injected').map((e) => (e as { kind: string }).kind)).toEqual(['steer', 'follow_up']);
  });

  it('abort ends a live run as aborted (200); resume continues it to its end', async () => {
    let release: (() => void) | undefined;
    const gate = new Promise<void>((r) => (release = r));
    const script = toolLoop({ calls: 1 });
    env = await startInProcess({
      agents: { calc },
      script: async (request, info) => {
        if (info.index === 0) await gate;
        return script(request, info);
      },
    });
    const made = await call(env.url, '/v1/runs', { body: { agent: 'calc', input: 'compute' } });
    const id = made.body.runId;
    const aborted = await call(env.url, `/v1/runs/${id}/abort`, { method: 'POST' });
    expect(aborted).toMatchObject({ status: 200, body: { runId: id, status: 'aborted' } });
    release!();
    expect((await call(env.url, `/v1/runs/${id}`)).body.record.status).toBe('aborted');
    const resumed = await call(env.url, `/v1/runs/${id}/resume`, { body: {} });
    expect(resumed).toMatchObject({ status: 202, body: { runId: id, status: 'running' } });
    expect((await call(env.url, `/v1/runs/${id}/resume`, { method: 'POST' })).status).toBeOneOf([409, 202]);
    const done = await finished(env.url, id, 'done');
    expect(done.result.text).toBe('done after 1 calls');
    expect((await call(env.url, `/v1/runs/${id}/resume`, { body: { force: 'yes' } })).body.error.field).toBe('force');
  });

  it('abort ends a paused run as aborted, its waiting call never run', async () => {
    env = await startInProcess({
      agents: { writer },
      script: toolLoop({ tool: 'write_file', calls: 1, args: () => ({ path: 'never.txt', content: 'x' }) }),
    });
    const made = await call(env.url, '/v1/runs', { body: { agent: 'writer', input: 'write' } });
    await finished(env.url, made.body.runId, 'paused');
    expect(await call(env.url, `/v1/runs/${made.body.runId}/abort`, { method: 'POST' })).toMatchObject({
      status: 200,
      body: { status: 'aborted' },
    });
    expect((await call(env.url, `/v1/runs/${made.body.runId}`)).body.record.status).toBe('aborted');
    await expect(readFile(join(env.project, 'never.txt'), 'utf8')).rejects.toThrow();
  });
});

describe('GET /v1/openapi.json', () => {
  it('is OpenAPI 3.1 made of the schemas that validate the requests, and the answers match what it documents', async () => {
    env = await startInProcess({ agents: { calc }, script: toolLoop({ calls: 1 }) });
    const doc = (await call(env.url, '/v1/openapi.json')).body;
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.components.schemas.CreateRun).toEqual(S.CreateRunSchema);
    expect(doc.components.schemas.Approval).toEqual(S.ApprovalSchema);
    expect(doc.components.schemas.Message).toEqual(S.MessageSchema);
    for (const path of [
      '/v1/runs',
      '/v1/runs/{id}',
      '/v1/runs/{id}/events',
      '/v1/runs/{id}/messages',
      '/v1/runs/{id}/abort',
      '/v1/runs/{id}/approvals',
      '/v1/runs/{id}/resume',
      '/healthz',
    ])
      expect(doc.paths[path], path).toBeDefined();
    expect(doc.paths['/v1/runs'].get.parameters.map((p: { name: string }) => p.name)).toEqual(['status', 'agent', 'limit', 'cursor']);
    const ajv = new Ajv2020.default({ strict: false });
    for (const [name, schema] of Object.entries(doc.components.schemas)) ajv.addSchema(schema as object, `#/components/schemas/${name}`);
    const valid = (name: string, value: unknown) => {
      const ok = ajv.validate(`#/components/schemas/${name}`, value);
      expect(ok, `${name}: ${JSON.stringify(ajv.errors)}`).toBe(true);
    };
    const made = await call(env.url, '/v1/runs', { body: { agent: 'calc', input: 'x' } });
    valid('RunCreated', made.body);
    await finished(env.url, made.body.runId);
    valid('RunDetail', (await call(env.url, `/v1/runs/${made.body.runId}`)).body);
    valid('RunList', (await call(env.url, '/v1/runs')).body);
    valid('AgentList', (await call(env.url, '/v1/agents')).body);
    valid('Error', (await call(env.url, '/v1/runs/none')).body);
  });
});

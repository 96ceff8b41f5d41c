// Alerts: the onAlert hook and a webhook on a local server — once per alert, retried on
// 500, and a dead webhook never holds the run.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { Agent } from '../../src/loop/agent.js';
import { fault, text, toolCall } from '../../src/testing/index.js';
import { MemoryRunStore } from '../../src/store/memory.js';
import { defineTool } from '../../src/tools/define.js';
import { settleAlerts } from '../../src/trace/alerts.js';
import type { Alert } from '../../src/trace/types.js';
import { setup } from '../loop/helpers.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A webhook receiver: `answer` decides each response (status, or `hang` to never answer). */
async function receiver(answer: (n: number) => number | 'hang') {
  const posts: Array<{ headers: IncomingMessage['headers']; body: Record<string, unknown> }> = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    let raw = '';
    for await (const chunk of req) raw += String(chunk);
    posts.push({ headers: req.headers, body: JSON.parse(raw) as Record<string, unknown> });
    const status = answer(posts.length);
    if (status === 'hang') return;
    res.writeHead(status).end();
  });
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  );
  const port = (server.address() as AddressInfo).port;
  return { url: `http://127.0.0.1:${port}/hook`, port, posts };
}

const broken = defineTool({
  name: 'broken',
  description: 'Always fails.',
  parameters: { type: 'object', properties: {} },
  risk: 'read',
  execute: () => {
    throw new Error('nope');
  },
});

describe('alerts', () => {
  it('a fatal error: onAlert and the webhook are told once, with the run, the error and the command to see it', async () => {
    const hook = await receiver(() => 200);
    const told: Alert[] = [];
    const { agent } = await setup([fault({ type: 'status', status: 401 })], {
      hooks: { onAlert: (a) => void told.push(a) },
      alerts: { webhook: hook.url, runUrl: 'https://runs.example/{runId}' },
    });
    const result = await agent.run('hi');
    expect(result.status).toBe('failed');
    await settleAlerts();
    expect(told).toHaveLength(1);
    expect(told[0]).toMatchObject({
      reason: 'fatal_error',
      runId: result.runId,
      traceId: result.traceId,
      status: 'failed',
      stopReason: 'fatal_error',
      error: { code: 'auth' },
      command: `rein trace ${result.runId}`,
      url: `https://runs.example/${result.runId}`,
    });
    expect(hook.posts).toHaveLength(1);
    expect(hook.posts[0]?.headers['content-type']).toBe('application/json');
    expect(hook.posts[0]?.headers['x-rein-alert-id']).toBe(told[0]?.id);
    expect(hook.posts[0]?.body).toMatchObject({
      type: 'rein.alert',
      id: told[0]?.id,
      reason: 'fatal_error',
      run_id: result.runId,
      trace_id: result.traceId,
      error: { code: 'auth' },
      command: `rein trace ${result.runId}`,
    });
  });

  it('each situation raises its own alert, and each can be switched off', async () => {
    const told: Alert[] = [];
    const onAlert = (a: Alert) => void told.push(a);
    const breaker = await setup([toolCall('broken'), toolCall('broken'), text('never')], {
      tools: [broken],
      limits: { maxConsecutiveToolErrors: 2 },
      hooks: { onAlert },
    });
    expect((await breaker.agent.run('x')).reason).toBe('tool_errors');
    const budget = await setup([toolCall('broken'), text('never')], { tools: [broken], limits: { maxTokens: 1 }, hooks: { onAlert } });
    expect((await budget.agent.run('x')).reason).toBe('budget');
    const store = new MemoryRunStore();
    const paused = await setup([toolCall('broken')], { tools: [broken], store, approvalPolicy: () => 'ask', hooks: { onAlert } });
    const p = await paused.agent.run('x');
    expect(p.status).toBe('paused');
    expect(told.map((a) => a.reason)).toEqual(['tool_errors', 'budget', 'awaiting_approval']);
    expect(told[2]?.command).toBe(`rein approve ${p.runId}`);
    const off = await setup([toolCall('broken'), text('never')], {
      tools: [broken],
      limits: { maxTokens: 1 },
      hooks: { onAlert },
      alerts: { on: { budget: false } },
    });
    expect((await off.agent.run('x')).reason).toBe('budget');
    expect(told).toHaveLength(3);
    const ok = await setup([text('fine')], { hooks: { onAlert } });
    await ok.agent.run('x');
    expect(told).toHaveLength(3);
  });

  it('the webhook is retried after a 500 and delivered once', async () => {
    const hook = await receiver((n) => (n === 1 ? 500 : 204));
    const { agent } = await setup([fault({ type: 'status', status: 401 })], { alerts: { webhook: { url: hook.url, timeoutMs: 10_000 } } });
    await agent.run('hi');
    await settleAlerts();
    expect(hook.posts).toHaveLength(2);
    expect(hook.posts[0]?.body.id).toBe(hook.posts[1]?.body.id);
  });

  it('a 4xx is not retried; the failure is told without the URL’s credentials', async () => {
    const hook = await receiver(() => 404);
    const errors: Error[] = [];
    const url = hook.url.replace('http://', 'http://alice:s3cret-pass@') + '?token=abc123';
    const { agent } = await setup([fault({ type: 'status', status: 401 })], {
      alerts: { webhook: { url, onError: (e) => void errors.push(e) } },
    });
    await agent.run('hi');
    await settleAlerts();
    expect(hook.posts).toHaveLength(1);
    expect(hook.posts[0]?.headers.authorization).toBe(`Basic ${Buffer.from('alice:s3cret-pass').toString('base64')}`);
    expect(errors).toHaveLength(1);
    expect(errors[0]?.message).toMatch(/could not be delivered to http:\/\/127\.0\.0\.1:\d+\/hook: HTTP 404/);
    expect(errors[0]?.message).not.toMatch(/alice|s3cret|abc123/);
  });

  it('a dead webhook never holds the run; its delivery gives up within its timeout', async () => {
    const hook = await receiver(() => 'hang');
    const errors: Error[] = [];
    const { agent } = await setup([fault({ type: 'status', status: 401 })], {
      alerts: { webhook: { url: hook.url, timeoutMs: 1500, onError: (e) => void errors.push(e) } },
    });
    const started = Date.now();
    const result = await agent.run('hi');
    expect(result.status).toBe('failed');
    // The run's result did not wait for the webhook at all.
    expect(errors).toEqual([]);
    expect(hook.posts.length).toBeLessThanOrEqual(1);
    await settleAlerts();
    const total = Date.now() - started;
    expect(total).toBeLessThan(1500 + 3000);
    expect(errors[0]?.message).toMatch(/no answer within 1500 ms/);
  });

  it('an onAlert that throws or never settles changes nothing for the run', async () => {
    const { agent } = await setup([fault({ type: 'status', status: 401 })], {
      hooks: {
        onAlert: () => {
          throw new Error('alerting is down');
        },
      },
    });
    expect((await agent.run('hi')).status).toBe('failed');
    const { agent: hanging } = await setup([fault({ type: 'status', status: 401 })], {
      hooks: { onAlert: () => new Promise<void>(() => undefined) },
    });
    expect((await hanging.run('hi')).status).toBe('failed');
  });

  it('bad alert options are refused by name', () => {
    const model = { provider: 'scripted', id: 'x', api: 'openai-chat' as const, baseUrl: 'http://127.0.0.1:9/v1' };
    expect(() => new Agent({ model, alerts: { webhook: 'ftp://x' } })).toThrow(/alerts\.webhook must be an http:\/\/ or https:\/\/ URL/);
    expect(() => new Agent({ model, alerts: { on: { fatal: true } as never } })).toThrow(/alerts\.on\.fatal is not an alert/);
    expect(() => new Agent({ model, alerts: { webhook: { url: 'http://x', timeoutMs: 0 } } })).toThrow(
      /alerts\.webhook\.timeoutMs must be a whole number/,
    );
    expect(() => new Agent({ model, logger: {} as never })).toThrow(/logger: expected a logger with debug, info, warn and error/);
    expect(() => new Agent({ model, telemetry: { captureContent: 'yes' } as never })).toThrow(
      /telemetry\.captureContent: expected true or false/,
    );
    expect(() => new Agent({ model, telemetry: { sampler: 1 } as never })).toThrow(/telemetry\.sampler is not an option/);
  });
});

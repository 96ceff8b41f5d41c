// Structured log lines of real runs, and no secret in any span, metric or line.
import { afterEach, describe, expect, it } from 'vitest';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fault, text, toolCall, toolCalls } from '../../src/testing/index.js';
import { createRedactor } from '../../src/security/redact.js';
import { defineTool } from '../../src/tools/define.js';
import { createJsonLogger, openFileLogger, parseLogLevel } from '../../src/trace/logger.js';
import { addTool, setup } from '../loop/helpers.js';
import { fake } from '../security/fake-secrets.js';
import { memoryOtel } from './otel.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

/** A logger keeping its lines (as the JSON logger writes them) in memory. */
function memoryLogger(level: Parameters<typeof createJsonLogger>[1] = {}) {
  const lines: string[] = [];
  const logger = createJsonLogger((line) => lines.push(line), level);
  return { logger, lines, records: () => lines.map((l) => JSON.parse(l) as Record<string, unknown>) };
}

const broken = defineTool({
  name: 'broken',
  description: 'Always fails.',
  parameters: { type: 'object', properties: {} },
  risk: 'read',
  execute: () => {
    throw new Error('disk on fire');
  },
});

describe('structured logs', () => {
  it('one line per model request and per tool call, with trace and span ids of the spans', async () => {
    const o = memoryOtel();
    cleanups.push(() => o.close());
    const log = memoryLogger();
    const { agent } = await setup([toolCalls({ name: 'add', arguments: { a: 1, b: 2 } }, { name: 'broken', arguments: {} }), text('3')], {
      tools: [addTool, broken],
      logger: log.logger,
      telemetry: { tracerProvider: o.tracerProvider },
    });
    const result = await agent.run('add');
    const records = log.records();
    expect(records.map((r) => r.event)).toEqual([
      'run_started',
      'model_request',
      expect.stringMatching(/tool_call/),
      'tool_call',
      'model_request',
      'run_finished',
    ]);
    for (const r of records) {
      expect(r).toMatchObject({
        trace_id: result.traceId,
        run_id: result.runId,
        time: expect.any(String),
        level: expect.any(String),
        msg: expect.any(String),
      });
      expect(r.span_id).toMatch(/^[0-9a-f]{16}$/);
    }
    const spanIds = new Map(o.spans().map((s) => [s.spanContext().spanId, s.name]));
    const add = records.find((r) => r.tool === 'add');
    expect(add).toMatchObject({
      event: 'tool_call',
      level: 'info',
      step: 1,
      input: { a: 1, b: 2 },
      output: '3',
      outcome: 'ok',
      duration_ms: expect.any(Number),
    });
    expect(spanIds.get(add!.span_id as string)).toBe('execute_tool add');
    const failed = records.find((r) => r.tool === 'broken');
    expect(failed).toMatchObject({
      event: 'tool_call',
      level: 'warn',
      outcome: 'error',
      error: { code: 'tool_failed', message: expect.stringContaining('disk on fire') },
    });
    expect(failed!.output).toBeUndefined();
    const request = records.find((r) => r.event === 'model_request');
    expect(request).toMatchObject({
      level: 'info',
      step: 1,
      model: 'scripted',
      attempt: 1,
      finish_reason: 'tool_call',
      input_tokens: expect.any(Number),
      output_tokens: expect.any(Number),
      duration_ms: expect.any(Number),
    });
    expect(spanIds.get(request!.span_id as string)).toBe('chat scripted');
    expect(records.at(-1)).toMatchObject({
      event: 'run_finished',
      level: 'info',
      status: 'done',
      reason: 'final_answer',
      steps: 2,
      tool_calls: 2,
      output: '3',
    });
    expect(spanIds.get(records.at(-1)!.span_id as string)).toBe('invoke_agent');
  });

  it('without any OpenTelemetry SDK: lines still carry the trace id and rein’s own span ids', async () => {
    const log = memoryLogger();
    const { agent } = await setup([toolCall('add', { a: 1, b: 2 }), text('3')], { tools: [addTool], logger: log.logger });
    const traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    const result = await agent.run('add', { traceparent });
    expect(result.traceId).toBe('0af7651916cd43dd8448eb211c80319c');
    const records = log.records();
    expect(records.every((r) => r.trace_id === result.traceId && /^[0-9a-f]{16}$/.test(String(r.span_id)))).toBe(true);
    expect(new Set(records.map((r) => r.span_id)).size).toBe(4);
  });

  it('retries and permission decisions are lines too, at warn where something went wrong', async () => {
    const log = memoryLogger();
    const { agent } = await setup(
      [
        fault({ type: 'status', status: 500 }),
        toolCalls({ name: 'add', arguments: { a: 1, b: 1 } }, { name: 'add', arguments: { a: 2, b: 2 } }),
        text('ok'),
      ],
      {
        tools: [addTool],
        logger: log.logger,
        approvalPolicy: (call) => (Number(call.arguments.a) === 2 ? { decision: 'deny', rule: 'deny add(2)', reason: 'no twos' } : 'allow'),
      },
    );
    await agent.run('add');
    const records = log.records();
    expect(records.find((r) => r.event === 'retry')).toMatchObject({
      level: 'warn',
      attempt: 1,
      delay_ms: expect.any(Number),
      error: { code: 'server_error' },
    });
    expect(records.find((r) => r.event === 'model_request')).toMatchObject({ level: 'warn', error: { code: 'server_error', status: 500 } });
    const permissions = records.filter((r) => r.event === 'permission');
    expect(permissions.map((r) => [r.decision, r.level])).toEqual([
      ['allow', 'info'],
      ['deny', 'warn'],
    ]);
    expect(permissions[1]).toMatchObject({ rule: 'deny add(2)', reason: 'no twos', tool: 'add' });
    expect(records.filter((r) => r.event === 'tool_call').map((r) => r.outcome)).toEqual(['ok', 'denied']);
  });

  it('large payloads are cut with a marker', async () => {
    const log = memoryLogger();
    const big = defineTool({
      name: 'big',
      description: 'Big output.',
      parameters: { type: 'object', properties: {} },
      risk: 'read',
      execute: () => 'x'.repeat(10_000),
    });
    const { agent } = await setup([toolCall('big'), text('ok')], { tools: [big], logger: log.logger });
    await agent.run('go');
    const line = log.records().find((r) => r.tool === 'big');
    expect(String(line?.output)).toMatch(/^x{4000}… \[cut: \d+ more characters\]$/);
  });

  it('levels: debug lines only at debug; a bad level is refused by name', () => {
    const quiet = memoryLogger({ level: 'warn' });
    quiet.logger.info({ event: 'x' });
    quiet.logger.warn({ event: 'y' }, 'careful');
    expect(quiet.records()).toEqual([expect.objectContaining({ event: 'y', level: 'warn', msg: 'careful' })]);
    expect(parseLogLevel('DEBUG')).toBe('debug');
    expect(() => parseLogLevel('verbose', 'REIN_LOG_LEVEL')).toThrow(/REIN_LOG_LEVEL must be one of debug, info, warn, error, silent/);
  });

  it('the file logger appends JSON lines to a private file', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'rein-log-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const path = join(dir, 'run.log');
    const file = openFileLogger(path);
    const { agent } = await setup([text('hi'), text('hello')], { logger: file });
    await agent.run('hi');
    await agent.run('hi again');
    file.close();
    const lines = (await readFile(path, 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { event: string });
    expect(lines.map((l) => l.event)).toEqual([
      'run_started',
      'model_request',
      'run_finished',
      'run_started',
      'model_request',
      'run_finished',
    ]);
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    expect(() => openFileLogger(join(dir, 'missing', 'x.log'))).toThrow(/cannot open the log file .*missing/);
  });
});

describe('secrets', () => {
  const env = { OPENAI_API_KEY: 'gateway-key-0f1e2d3c4b5a', DEPLOY_PASSWORD: 'correct-horse-battery-staple' };
  const secrets = [env.OPENAI_API_KEY, env.DEPLOY_PASSWORD, fake.githubClassic, fake.jwt, fake.awsSecret, fake.bearer, 'pg-secret-77'];

  it('no secret on any span, metric or log line, with content capture on', async () => {
    const o = memoryOtel();
    cleanups.push(() => o.close());
    const log = memoryLogger({ level: 'debug' });
    const fetchTool = defineTool({
      name: 'fetch',
      description: 'Fetches a URL.',
      parameters: { type: 'object', properties: { url: { type: 'string' }, headers: { type: 'object' } }, required: ['url'] },
      risk: 'read',
      execute: () => `200 OK\nX-Token: ${fake.githubClassic}\naws_secret_access_key = ${fake.awsSecret}\npassword: ${env.DEPLOY_PASSWORD}`,
    });
    const { agent } = await setup(
      [
        toolCall('fetch', {
          url: 'postgres://app:pg-secret-77@db/x',
          headers: { Authorization: `Bearer ${fake.bearer}`, 'X-Deploy': env.DEPLOY_PASSWORD },
        }),
        text(`Here is the session token: ${fake.jwt}`),
      ],
      {
        tools: [fetchTool],
        system: `Use the key ${env.OPENAI_API_KEY} when asked.`,
        redact: createRedactor({ env }),
        logger: log.logger,
        telemetry: { tracerProvider: o.tracerProvider, meterProvider: o.meterProvider, captureContent: true },
        alerts: {},
      },
    );
    const result = await agent.run(`fetch it with ${fake.githubClassic}`);
    expect(result.text).toContain(fake.jwt); // the run itself keeps the real values
    const spans = o.spans().map((s) => ({ name: s.name, attributes: s.attributes, events: s.events, status: s.status }));
    const metrics = await Promise.all(['gen_ai.client.token.usage', 'rein.runs', 'rein.tool.calls'].map((m) => o.metric(m)));
    const everything = JSON.stringify({ spans, metrics, lines: log.lines });
    expect(JSON.stringify(spans)).toContain('[REDACTED:');
    expect(log.lines.join('')).toContain('[REDACTED:');
    for (const secret of secrets) expect(everything, `leaked ${secret.slice(0, 12)}…`).not.toContain(secret);
  });
});

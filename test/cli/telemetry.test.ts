// The real `rein` binary exporting over OTLP/HTTP (a real OpenTelemetry exporter in the CLI
// path) to a receiver in the test, its log file, --traceparent, --alert-webhook and `rein trace`.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Agent } from '../../src/loop/agent.js';
import { startScriptedServer, text, toolCall, type Script, type ScriptedServer } from '../../src/testing/index.js';
import { openSqliteStore } from '../../src/store/open.js';
import { seedTools } from '../../src/tools/builtin/index.js';
import { makeProject, removeProject, type TempProject } from './project.js';
import { cleanEnv, rein } from './spawn.js';
import { decodeTraceRequest } from './otlp-protobuf.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function scripted(script: Script): Promise<ScriptedServer> {
  const s = await startScriptedServer({ script });
  cleanups.push(() => s.close());
  return s;
}

async function project(): Promise<TempProject> {
  const p = await makeProject('rein-telemetry-');
  cleanups.push(() => removeProject(p));
  return p;
}

/** A local HTTP receiver: keeps each request's path, headers and body, answers `status` (or hangs). */
async function receiver(answer: (req: IncomingMessage) => number | 'hang' = () => 200) {
  const requests: Array<{ path: string; headers: IncomingMessage['headers']; body: Buffer }> = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    requests.push({ path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks) });
    const status = answer(req);
    if (status === 'hang') return;
    res.writeHead(status, { 'content-type': 'application/json' }).end('{}');
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
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests };
}

interface JsonSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: Array<{
    key: string;
    value: { stringValue?: string; intValue?: string | number; boolValue?: boolean; arrayValue?: unknown };
  }>;
  status?: { code?: number };
}

/** The spans and resource attributes of OTLP/JSON trace requests. */
function decodeJson(bodies: Buffer[]): { spans: JsonSpan[]; resource: Record<string, unknown> } {
  const spans: JsonSpan[] = [];
  let resource: Record<string, unknown> = {};
  for (const body of bodies) {
    const request = JSON.parse(body.toString('utf8')) as {
      resourceSpans: Array<{
        resource: { attributes: JsonSpan['attributes'] };
        scopeSpans: Array<{ scope: { name: string }; spans: JsonSpan[] }>;
      }>;
    };
    for (const rs of request.resourceSpans) {
      resource = Object.fromEntries(rs.resource.attributes.map((a) => [a.key, a.value.stringValue ?? a.value.intValue]));
      for (const ss of rs.scopeSpans) {
        expect(ss.scope.name).toBe('rein');
        spans.push(...ss.spans);
      }
    }
  }
  return { spans, resource };
}

const attr = (span: JsonSpan, key: string) => {
  const v = span.attributes.find((a) => a.key === key)?.value;
  return v?.stringValue ?? (v?.intValue === undefined ? v?.boolValue : Number(v.intValue));
};

const runEvents = (stdout: string) =>
  stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { type: string; result?: { traceId: string; runId: string } });

describe('rein run exporting over OTLP/HTTP', () => {
  it('sends the run’s spans and metrics (http/json) to OTEL_EXPORTER_OTLP_ENDPOINT, in the run’s trace', async () => {
    const p = await project();
    const s = await scripted([toolCall('calculate', { expression: '6 * 7' }), text('It is 42.')]);
    const collector = await receiver();
    const out = await rein(['run', '--json', '--no-store', '--base-url', s.url, 'what is 6*7?'], {
      cwd: p.project,
      env: cleanEnv({
        HOME: p.home,
        OTEL_EXPORTER_OTLP_ENDPOINT: collector.origin,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_SERVICE_NAME: 'agent-test',
        OTEL_EXPORTER_OTLP_HEADERS: 'x-team=blue',
      }),
    });
    expect(out.stderr).toBe('');
    expect(out.code).toBe(0);
    const finished = runEvents(out.stdout).at(-1)!;
    const traces = collector.requests.filter((r) => r.path === '/v1/traces');
    expect(traces.length).toBeGreaterThan(0);
    expect(traces[0]?.headers['content-type']).toBe('application/json');
    expect(traces[0]?.headers['x-team']).toBe('blue');
    const { spans, resource } = decodeJson(traces.map((t) => t.body));
    expect(resource['service.name']).toBe('agent-test');
    expect(spans.map((sp) => sp.name).sort()).toEqual(['chat gpt-4o-mini', 'chat gpt-4o-mini', 'execute_tool calculate', 'invoke_agent']);
    for (const span of spans) expect(span.traceId).toBe(finished.result!.traceId);
    const run = spans.find((sp) => sp.name === 'invoke_agent')!;
    expect(run.parentSpanId ?? '').toBe('');
    for (const span of spans.filter((sp) => sp !== run)) expect(span.parentSpanId).toBe(run.spanId);
    expect(attr(run, 'rein.run.id')).toBe(finished.result!.runId);
    expect(attr(run, 'rein.run.status')).toBe('done');
    const tool = spans.find((sp) => sp.name === 'execute_tool calculate')!;
    expect(attr(tool, 'gen_ai.tool.name')).toBe('calculate');
    expect(attr(tool, 'rein.tool.outcome')).toBe('ok');
    const chat = spans.find((sp) => sp.name === 'chat gpt-4o-mini')!;
    expect(chat.kind).toBe(3); // OTLP's SPAN_KIND_CLIENT
    expect(attr(chat, 'gen_ai.operation.name')).toBe('chat');
    expect(attr(chat, 'gen_ai.usage.input_tokens')).toBeGreaterThan(0);
    const metrics = collector.requests.filter((r) => r.path === '/v1/metrics');
    expect(metrics.length).toBeGreaterThan(0);
    const names = metrics.flatMap((m) =>
      (
        JSON.parse(m.body.toString()) as { resourceMetrics: Array<{ scopeMetrics: Array<{ metrics: Array<{ name: string }> }> }> }
      ).resourceMetrics.flatMap((rm) => rm.scopeMetrics.flatMap((sm) => sm.metrics.map((x) => x.name))),
    );
    expect(names).toEqual(
      expect.arrayContaining(['gen_ai.client.token.usage', 'gen_ai.client.operation.duration', 'rein.runs', 'rein.tool.calls']),
    );
  });

  it('speaks http/protobuf by default, as the OTLP specification says; --traceparent makes the run a child', async () => {
    const p = await project();
    const s = await scripted([text('hi')]);
    const collector = await receiver();
    const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    const out = await rein(['run', '--no-store', '--no-tools', '--traceparent', traceparent, '--base-url', s.url, 'hi'], {
      cwd: p.project,
      env: cleanEnv({
        HOME: p.home,
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${collector.origin}/custom/traces`,
        OTEL_METRICS_EXPORTER: 'none',
      }),
    });
    expect(out.code).toBe(0);
    const traces = collector.requests.filter((r) => r.path === '/custom/traces');
    expect(traces[0]?.headers['content-type']).toBe('application/x-protobuf');
    expect(collector.requests.filter((r) => r.path.includes('metrics'))).toEqual([]);
    const spans = traces.flatMap((t) => decodeTraceRequest(t.body));
    expect(spans.map((sp) => sp.name).sort()).toEqual(['chat gpt-4o-mini', 'invoke_agent']);
    const run = spans.find((sp) => sp.name === 'invoke_agent')!;
    expect(run.traceId).toBe('4bf92f3577b34da6a3ce929d0e0e4736');
    expect(run.parentSpanId).toBe('00f067aa0ba902b7');
    expect(run.attributes['rein.run.status']).toBe('done');
  });

  it('a bad traceparent, a bad log level and an unknown protocol are refused before anything runs', async () => {
    const p = await project();
    const env = cleanEnv({ HOME: p.home });
    const bad = await rein(['run', '--no-store', '--traceparent', '01-abc', '--base-url', 'http://127.0.0.1:9/v1', 'hi'], {
      cwd: p.project,
      env,
    });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--traceparent is not a W3C traceparent/);
    const fromEnv = await rein(['run', '--no-store', '--base-url', 'http://127.0.0.1:9/v1', 'hi'], {
      cwd: p.project,
      env: { ...env, TRACEPARENT: '00-00000000000000000000000000000000-00f067aa0ba902b7-01' },
    });
    expect(fromEnv.stderr).toMatch(/TRACEPARENT: the trace id is all zeros/);
    const level = await rein(['run', '--no-store', '--log-file', join(p.base, 'x.log'), '--base-url', 'http://127.0.0.1:9/v1', 'hi'], {
      cwd: p.project,
      env: { ...env, REIN_LOG_LEVEL: 'loud' },
    });
    expect(level.code).toBe(2);
    expect(level.stderr).toMatch(/REIN_LOG_LEVEL must be one of debug, info, warn, error, silent/);
    const grpc = await rein(['run', '--no-store', '--base-url', 'http://127.0.0.1:9/v1', 'hi'], {
      cwd: p.project,
      env: { ...env, OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' },
    });
    expect(grpc.code).toBe(2);
    expect(grpc.stderr).toMatch(/rein exports over http\/protobuf or http\/json \(not grpc\)/);
    // An endpoint that is no http(s) URL is refused, without repeating the value (it may hold a password).
    for (const endpoint of ['collector:4318 with:secret', 'ftp://user:secret@collector']) {
      const wrong = await rein(['run', '--no-store', '--base-url', 'http://127.0.0.1:9/v1', 'hi'], {
        cwd: p.project,
        env: { ...env, OTEL_EXPORTER_OTLP_ENDPOINT: endpoint },
      });
      expect(wrong.code).toBe(2);
      expect(wrong.stderr).toMatch(
        /OTEL_EXPORTER_OTLP_ENDPOINT is (not a URL|a [a-z]+: URL): set it to the OTLP\/HTTP collector's http:\/\/ or https:\/\/ URL/,
      );
      expect(wrong.stderr).not.toContain('secret');
    }
    const hook = await rein(
      ['run', '--no-store', '--alert-webhook', 'mailto:ops@example.com', '--base-url', 'http://127.0.0.1:9/v1', 'hi'],
      { cwd: p.project, env },
    );
    expect(hook.code).toBe(2);
    expect(hook.stderr).toMatch(/--alert-webhook must be an http:\/\/ or https:\/\/ URL/);
  });
});

describe('rein run --log-file and --alert-webhook', () => {
  it('writes one JSON line per model request and tool call to the log file', async () => {
    const p = await project();
    const s = await scripted([toolCall('calculate', { expression: '6 * 7' }), text('It is 42.')]);
    const file = join(p.base, 'run.log');
    const out = await rein(['run', '--no-store', '--log-file', file, '--base-url', s.url, 'what is 6*7?'], {
      cwd: p.project,
      env: cleanEnv({ HOME: p.home }),
    });
    expect(out.code).toBe(0);
    const lines = (await readFile(file, 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.map((l) => l.event)).toEqual(['run_started', 'model_request', 'permission', 'tool_call', 'model_request', 'run_finished']);
    expect(lines[2]).toMatchObject({ tool: 'calculate', decision: 'allow' });
    expect(lines[3]).toMatchObject({
      level: 'info',
      tool: 'calculate',
      input: { expression: '6 * 7' },
      output: '42',
      duration_ms: expect.any(Number),
      step: 1,
    });
    expect(new Set(lines.map((l) => l.trace_id)).size).toBe(1);
  });

  it('POSTs the alert of a failed run once; a dead webhook delays the exit by at most its timeout', async () => {
    const p = await project();
    const s = await scripted([{ fault: { type: 'status', status: 401 } }]);
    const hook = await receiver(() => 200);
    const out = await rein(['run', '--no-store', '--no-tools', '--alert-webhook', `${hook.origin}/alert`, '--base-url', s.url, 'hi'], {
      cwd: p.project,
      env: cleanEnv({ HOME: p.home }),
    });
    expect(out.code).toBe(1);
    expect(hook.requests).toHaveLength(1);
    expect(JSON.parse(hook.requests[0]!.body.toString())).toMatchObject({
      type: 'rein.alert',
      reason: 'fatal_error',
      error: { code: 'auth' },
    });

    const s2 = await scripted([{ fault: { type: 'status', status: 401 } }]);
    const dead = await receiver(() => 'hang');
    const started = Date.now();
    const stuck = await rein(
      [
        'run',
        '--no-store',
        '--no-tools',
        '--alert-webhook',
        `${dead.origin.replace('http://', 'http://ops:hunter2@')}/alert`,
        '--base-url',
        s2.url,
        'hi',
      ],
      {
        cwd: p.project,
        env: cleanEnv({ HOME: p.home }),
        timeoutMs: 30_000,
      },
    );
    expect(stuck.code).toBe(1);
    expect(Date.now() - started).toBeLessThan(5000 + 10_000);
    expect(stuck.stderr).toMatch(/could not be delivered to http:\/\/127\.0\.0\.1:\d+\/alert: no answer within 5000 ms/);
    expect(stuck.stderr).not.toContain('hunter2');
  });
});

describe('rein trace', () => {
  it('draws a stored run as a tree, prints its spans with --json, and exports the same spans with --export', async () => {
    const p = await project();
    const s = await scripted([
      toolCall('calculate', { expression: '6 * 7' }),
      { fault: { type: 'status', status: 500 } },
      text('It is 42.'),
    ]);
    const store = join(p.base, 'runs.db');
    const env = cleanEnv({ HOME: p.home });
    const logFile = join(p.base, 'run.log');
    const run = await rein(['run', '--json', '--store', store, '--log-file', logFile, '--base-url', s.url, 'what is 6*7?'], {
      cwd: p.project,
      env,
    });
    expect(run.code).toBe(0);
    const { runId, traceId } = runEvents(run.stdout).at(-1)!.result!;
    const shown = await rein(['trace', runId, '--store', store], { cwd: p.project, env });
    expect(shown.code).toBe(0);
    const lines = shown.stdout.trim().split('\n');
    expect(lines[0]).toBe(`run ${runId} · done (final_answer) · openai/gpt-4o-mini · trace ${traceId}`);
    expect(lines[1]).toMatch(/^invoke_agent · [\d.]+ m?s · done \(final_answer\) · [\d,]+ in \/ [\d,]+ out tokens in all · \$[\d.]+$/);
    const D = String.raw`[\d.]+ m?s`;
    const tokens = String.raw`[\d,]+ in / [\d,]+ out · \$[\d.]+`;
    expect(shown.stdout).toMatch(
      new RegExp(
        [
          String.raw`├─ step 1`,
          String.raw`│  ├─ chat gpt-4o-mini  ${D} · ${tokens} · tool_call`,
          String.raw`│  ├─ permission calculate: allow \(default: risk read allows\)`,
          String.raw`│  └─ execute_tool calculate  ${D} · ok( · ran ${D})?`,
          String.raw`└─ step 2`,
          String.raw`   ├─ chat gpt-4o-mini  ${D} · failed: server_error \(.*\) · retried after a ${D} wait`,
          String.raw`   └─ chat gpt-4o-mini \(attempt 2\)  ${D} · ${tokens} · stop`,
        ].join('\n'),
      ),
    );

    const json = await rein(['trace', runId, '--json', '--store', store], { cwd: p.project, env });
    const spans = json.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { traceId: string; spanId: string; name: string; parentSpanId?: string });
    expect(spans.map((sp) => sp.name)).toEqual([
      'invoke_agent',
      'chat gpt-4o-mini',
      'execute_tool calculate',
      'chat gpt-4o-mini',
      'chat gpt-4o-mini',
    ]);
    expect(spans.every((sp) => sp.traceId === traceId)).toBe(true);

    const collector = await receiver();
    const exported = await rein(['trace', runId, '--export', '--store', store], {
      cwd: p.project,
      env: { ...env, OTEL_EXPORTER_OTLP_ENDPOINT: collector.origin, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' },
    });
    expect(exported.code).toBe(0);
    expect(exported.stderr).toBe(`rein: exported 5 spans of run ${runId} (trace ${traceId}) to ${collector.origin}/v1/traces\n`);
    const sent = decodeJson(collector.requests.map((r) => r.body)).spans;
    expect(sent.map((sp) => [sp.spanId, sp.parentSpanId || undefined, sp.name])).toEqual(
      spans.map((sp) => [sp.spanId, sp.parentSpanId, sp.name]),
    );
    // The run attempt's span id is the one the log recorded, and the log lines written live
    // name the very spans the stored run derives to (and exports later).
    const stored = await openSqliteStore({ path: store });
    const events = await stored.loadEvents(runId);
    await stored.close();
    expect(events[0]).toMatchObject({ type: 'run_started', spanId: spans[0]!.spanId });
    const logged = (await readFile(logFile, 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { span_id: string; event: string });
    const byId = new Map(spans.map((sp) => [sp.spanId, sp.name]));
    expect(logged.filter((l) => l.event === 'tool_call').map((l) => byId.get(l.span_id))).toEqual(['execute_tool calculate']);
    expect(logged.filter((l) => l.event === 'model_request').map((l) => byId.get(l.span_id))).toEqual([
      'chat gpt-4o-mini',
      'chat gpt-4o-mini',
      'chat gpt-4o-mini',
    ]);

    const nowhere = await rein(['trace', runId, '--export', '--store', store], { cwd: p.project, env });
    expect(nowhere.code).toBe(2);
    expect(nowhere.stderr).toMatch(/nowhere to export to: set OTEL_EXPORTER_OTLP_ENDPOINT/);
  });

  it('works on a run recorded without any telemetry (no span ids in its log)', async () => {
    const p = await project();
    const s = await scripted([toolCall('calculate', { expression: '1 + 1' }), text('2')]);
    const path = join(p.base, 'old.db');
    const store = await openSqliteStore({ path });
    const agent = new Agent({ model: s.model(), tools: seedTools(), store, telemetry: false });
    const result = await agent.run('1+1');
    await store.close();
    const events = JSON.stringify(
      await (async () => {
        const again = await openSqliteStore({ path });
        const e = await again.loadEvents(result.runId);
        await again.close();
        return e;
      })(),
    );
    expect(events).not.toContain('spanId');
    const shown = await rein(['trace', result.runId, '--store', path], { cwd: p.project, env: cleanEnv({ HOME: p.home }) });
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain('execute_tool calculate');
    expect(shown.stdout).toContain(`trace ${result.traceId}`);
    const twice = await rein(['trace', result.runId, '--json', '--store', path], { cwd: p.project, env: cleanEnv({ HOME: p.home }) });
    const again = await rein(['trace', result.runId, '--json', '--store', path], { cwd: p.project, env: cleanEnv({ HOME: p.home }) });
    expect(twice.stdout).toBe(again.stdout);
    const missing = await rein(['trace', 'run_nope', '--store', path], { cwd: p.project, env: cleanEnv({ HOME: p.home }) });
    expect(missing.stderr).toMatch(/there is no run run_nope/);
  });
});

// The telemetry floor: the spans and metric records rein's telemetry makes for one of the
// benchmark's runs (one `invoke_agent`, a `chat` per model request, an `execute_tool` per
// call, with the same names, kinds, attributes and parents; the GenAI client metrics per
// request, a tool-call count per call, the run's count and duration), made by hand straight
// through the OpenTelemetry API after the run, with nothing derived from events. What this
// costs is the SDK's own work for that telemetry: no instrumentation that records the same
// can cost less. bench/client.mjs `otel-floor` runs it after each run of rein with
// `telemetry: false`, with the SDK registered as for `rein-otel`.

/** Makes the floor's recorder for runs against `baseUrl` with model `model`. */
export function telemetryFloor(api, model, baseUrl) {
  const { trace, metrics, SpanKind, ROOT_CONTEXT } = api;
  const tracer = trace.getTracer('rein');
  const meter = metrics.getMeter('rein');
  const tokenUsage = meter.createHistogram('gen_ai.client.token.usage', { unit: '{token}' });
  const operationDuration = meter.createHistogram('gen_ai.client.operation.duration', { unit: 's' });
  const runs = meter.createCounter('rein.runs', { unit: '{run}' });
  const runDuration = meter.createHistogram('rein.run.duration', { unit: 's' });
  const toolCalls = meter.createCounter('rein.tool.calls', { unit: '{call}' });
  const url = new URL(baseUrl);
  const server = { 'server.address': url.hostname, 'server.port': Number(url.port) };
  const modelAttributes = { 'gen_ai.provider.name': 'scripted', 'gen_ai.request.model': model, ...server };
  // The metric attributes are made once, as rein makes them once per run.
  const chatMetric = { 'gen_ai.operation.name': 'chat', ...modelAttributes, 'gen_ai.response.model': model };
  const inputMetric = { ...chatMetric, 'gen_ai.token.type': 'input' };
  const outputMetric = { ...chatMetric, 'gen_ai.token.type': 'output' };
  const toolMetric = { 'gen_ai.tool.name': 'add', 'rein.tool.outcome': 'ok' };
  const runMetric = {
    'rein.run.status': 'done',
    'rein.run.stop_reason': 'final_answer',
    'gen_ai.request.model': model,
    'gen_ai.provider.name': 'scripted',
  };
  const origin = performance.timeOrigin;
  let runCount = 0;

  /** Records the telemetry of one finished run (`result`: its RunResult). */
  return (result) => {
    const runId = `run_floor_${runCount++}`;
    const start = origin + performance.now();
    const { steps, toolCalls: calls, usage } = result.totals;
    const run = tracer.startSpan('invoke_agent', {
      kind: SpanKind.INTERNAL,
      startTime: start,
      attributes: { 'gen_ai.operation.name': 'invoke_agent', 'rein.run.id': runId, 'rein.run.attempt': 1, ...modelAttributes },
    });
    const parent = trace.setSpan(ROOT_CONTEXT, run);
    const input = Math.round(usage.input / steps);
    const output = Math.round(usage.output / steps);
    for (let step = 1; step <= steps; step++) {
      const t = origin + performance.now();
      const chat = tracer.startSpan(
        `chat ${model}`,
        {
          kind: SpanKind.CLIENT,
          startTime: t,
          attributes: {
            'rein.step': step,
            'gen_ai.operation.name': 'chat',
            ...modelAttributes,
            'rein.request.attempt': 1,
            'gen_ai.request.stream': true,
          },
        },
        parent,
      );
      chat.setAttribute('gen_ai.usage.input_tokens', input);
      chat.setAttribute('gen_ai.usage.output_tokens', output);
      chat.setAttribute('gen_ai.response.model', model);
      chat.setAttribute('gen_ai.response.finish_reasons', [step < steps ? 'tool_call' : 'stop']);
      chat.setAttribute('gen_ai.response.id', `chatcmpl-floor-${step}`);
      const end = origin + performance.now();
      chat.end(end);
      operationDuration.record((end - t) / 1000, chatMetric);
      tokenUsage.record(input, inputMetric);
      tokenUsage.record(output, outputMetric);
      if (step > calls) continue;
      const tool = tracer.startSpan(
        'execute_tool add',
        {
          kind: SpanKind.INTERNAL,
          startTime: end,
          attributes: {
            'rein.step': step,
            'gen_ai.operation.name': 'execute_tool',
            'gen_ai.tool.name': 'add',
            'gen_ai.tool.call.id': `call_${step}`,
            'gen_ai.tool.type': 'function',
            'rein.tool.idempotency_key': `${runId}:${step}:0`,
          },
        },
        parent,
      );
      tool.setAttribute('rein.tool.outcome', 'ok');
      tool.setAttribute('rein.tool.duration_ms', 0.01);
      tool.end(origin + performance.now());
      toolCalls.add(1, toolMetric);
    }
    run.setAttribute('rein.run.status', 'done');
    run.setAttribute('rein.run.stop_reason', 'final_answer');
    run.setAttribute('rein.run.steps', steps);
    run.setAttribute('rein.run.tool_calls', calls);
    run.setAttribute('gen_ai.usage.input_tokens', usage.input);
    run.setAttribute('gen_ai.usage.output_tokens', usage.output);
    const end = origin + performance.now();
    run.end(end);
    runs.add(1, runMetric);
    runDuration.record((end - start) / 1000, runMetric);
  };
}

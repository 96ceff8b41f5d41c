/**
 * `rein trace <run>`: a stored run as a tree of its spans, derived from its log alone (so
 * also for runs recorded before rein had telemetry, or offline); `--json` prints the spans,
 * `--export` sends them to the OTLP endpoint of `OTEL_EXPORTER_OTLP_ENDPOINT`.
 */
import { EXIT, type Command } from '../io.js';
import { parseCommandLine, runIdOf } from '../flags.js';
import { terminalLine } from '../terminal-text.js';
import { reportSetupError } from './run.js';
import { findRun, openStoreFor } from './store-command.js';
import { packageVersion } from '../version.js';
import type { RunEvent } from '../../events.js';
import type { RunStore } from '../../store/types.js';
import type { SpanRecord } from '../../trace/types.js';

const usage = `rein trace <run> [--json | --export] [--content] [--store <path|url>]

Shows a stored run as a tree: each attempt (a resumed run has one per process), its
turns, the model request attempts with tokens, cost and duration, the tool calls with
duration and outcome, retries and their waits, compactions, approvals and permission
decisions — all derived from the run's log. The runs of its sub-agents follow, indented,
in the same trace (--json, --export: each run's attempts under the call that started it).

      --json      the spans, one JSON object per line (OpenTelemetry's fields, times in epoch ms)
      --export    send the spans over OTLP/HTTP to OTEL_EXPORTER_OTLP_ENDPOINT (or
                  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT; headers from OTEL_EXPORTER_OTLP_HEADERS)
      --content   include message content (prompts, answers, tool arguments and results),
                  redacted, as the GenAI conventions' attributes
      --store <path|postgres://…>  the run store (default: $REIN_DATABASE_URL, else .rein/rein.db)
  -h, --help      this help`;

/** A descendant run's spans, put in the root's trace under the tool call that started it. */
interface ChildSpans {
  runId: string;
  depth: number;
  status: string;
  parentRunId?: string;
  parentToolCallId?: string;
  spans: SpanRecord[];
}

async function childSpans(
  store: RunStore,
  rootRunId: string,
  rootSpans: SpanRecord[],
  spansOf: (events: RunEvent[]) => SpanRecord[],
): Promise<ChildSpans[]> {
  const { runsOfTree } = await import('../../loop/tree-approval.js');
  const runs = await runsOfTree(store, rootRunId);
  if (runs.length <= 1) return [];
  const traceId = rootSpans[0]?.traceId;
  const byRun = new Map<string, SpanRecord[]>([[rootRunId, rootSpans]]);
  const out: ChildSpans[] = [];
  for (const { record, depth } of runs.slice(1)) {
    const events = await store.loadEvents(record.id);
    const started = events[0]?.type === 'run_started' ? events[0] : undefined;
    const spans = spansOf(events);
    // Each attempt of the child goes under the parent's span of the call that ran it then
    // (a resumed parent runs the call again, and the child with it), else the call's last span.
    const parentSpans = byRun.get(record.parentRunId ?? '') ?? [];
    const calls = parentSpans.filter((s) => s.attributes['gen_ai.tool.call.id'] === started?.parentToolCallId);
    for (const span of spans) {
      if (traceId !== undefined) span.traceId = traceId;
      if (span.attributes['gen_ai.operation.name'] !== 'invoke_agent' || calls.length === 0) continue;
      const during = calls.find((c) => c.startTime <= span.startTime && span.startTime <= c.endTime) ?? calls.at(-1);
      if (during) span.parentSpanId = during.spanId;
    }
    byRun.set(record.id, spans);
    out.push({
      runId: record.id,
      depth,
      status: `${record.status}${record.reason ? ` (${record.reason})` : ''}`,
      ...(record.parentRunId === undefined ? {} : { parentRunId: record.parentRunId }),
      ...(started?.parentToolCallId === undefined ? {} : { parentToolCallId: started.parentToolCallId }),
      spans,
    });
  }
  return out;
}

export const command: Command = {
  description: 'show a stored run as a tree of spans',
  usage,
  async run(argv, io) {
    try {
      const parsed = parseCommandLine(argv, io, usage, {
        json: { type: 'boolean' },
        export: { type: 'boolean' },
        content: { type: 'boolean' },
        store: { type: 'string' },
      });
      if (!parsed) return EXIT.ok;
      const { values, positionals } = parsed;
      const runId = runIdOf(positionals, 'trace');
      const store = await openStoreFor(values.store, io);
      try {
        const record = await findRun(store, runId);
        const events = await store.loadEvents(runId);
        const [{ spansOfLog }, { createRedactor }] = await Promise.all([
          import('../../trace/spans-of-log.js'),
          import('../../security/redact.js'),
        ]);
        const options = values.content ? { content: { redactor: createRedactor({ env: io.env }) } } : {};
        const spans = spansOfLog(events, options);
        // Sub-agents' runs (issue 23): their spans join the root's trace, each run's attempts under the tool call that started it.
        const children = await childSpans(store, runId, spans, (log) => spansOfLog(log, options));
        if (values.export) {
          const { exportSpanRecords } = await import('../../trace/otlp.js');
          const sent = await exportSpanRecords([...spans, ...children.flatMap((c) => c.spans)], io.env, await packageVersion());
          io.stderr.write(
            `rein: exported ${sent.spans} spans of run ${runId} (trace ${spans[0]?.traceId ?? 'none'}) to ${sent.endpoint}\n`,
          );
          if (!values.json) return EXIT.ok;
        }
        if (values.json) {
          for (const span of [...spans, ...children.flatMap((c) => c.spans)]) io.stdout.write(`${JSON.stringify(span)}\n`);
          return EXIT.ok;
        }
        const { traceTree } = await import('../../trace/tree.js');
        io.stdout.write(
          `run ${record.id} · ${record.status}${record.reason ? ` (${record.reason})` : ''} · ${terminalLine(record.model)} · trace ${spans[0]?.traceId ?? 'none'}\n`,
        );
        for (const line of traceTree(spans)) io.stdout.write(`${terminalLine(line)}\n`);
        for (const child of children) {
          const pad = '  '.repeat(child.depth);
          io.stdout.write(
            `${pad}┊ sub-agent run ${child.runId} · ${child.status} · for call ${child.parentToolCallId ?? '?'} of ${child.parentRunId ?? '?'}\n`,
          );
          for (const line of traceTree(child.spans)) io.stdout.write(`${pad}┊ ${terminalLine(line)}\n`);
        }
        return EXIT.ok;
      } finally {
        await store.close();
      }
    } catch (error) {
      // Its --json lines are spans, not run events: an error is said on stderr only.
      return reportSetupError(error, io, false);
    }
  },
};

/**
 * Operations as structured log lines: one per model request attempt and per tool call,
 * and per run start and end, retry, compaction, approval and permission decision. Every
 * line has `event`, `trace_id`, `span_id`, `run_id` (and `step`); a tool call's has `tool`,
 * `input`, `output` or `error`, `duration_ms`. Secrets are redacted (the run's redactor,
 * as the store's); large payloads are cut with a marker.
 */
import type { Redactor } from '../security/redact.js';
import { cut } from './content.js';
import type { Operation, OperationEvent, OperationSink } from './operations.js';
import { ATTR, REIN } from './semconv.js';
import type { Logger } from './types.js';

type Level = 'debug' | 'info' | 'warn' | 'error';

/** A field's value fit for a line: text cut to `max`, a larger JSON value as its text, cut. */
export function bounded(value: unknown, max: number): unknown {
  if (typeof value === 'string') return cut(value, max);
  if (value === undefined || value === null || typeof value !== 'object') return value;
  const text = JSON.stringify(value);
  return text.length <= max ? value : cut(text, max);
}

const num = (value: unknown): number | undefined => (typeof value === 'number' ? value : undefined);

/** The sink that writes log lines. */
export class LogSink implements OperationSink {
  private readonly announced = new WeakSet<Operation>();

  constructor(
    private readonly logger: Logger,
    private readonly redactor: Redactor,
    private readonly maxChars: number,
  ) {}

  annotated(op: Operation): void {
    // A run attempt is announced once its start event told what it runs (model, input).
    if (
      op.kind !== 'run' ||
      this.announced.has(op) ||
      (op.attributes[ATTR.requestModel] === undefined && op.attributes[REIN.resumedFrom] === undefined)
    )
      return;
    this.announced.add(op);
    const resumed = op.attributes[REIN.resumedFrom];
    const record: Record<string, unknown> = {
      event: resumed === undefined ? 'run_started' : 'run_resumed',
      model: op.attributes[ATTR.requestModel],
      attempt: op.attributes[REIN.attempt],
    };
    if (resumed !== undefined) record.resumed_from = resumed;
    if (op.input !== undefined) record.input = bounded(op.input, this.maxChars);
    this.write('info', op, record, resumed === undefined ? `run ${op.runId} started` : `run ${op.runId} resumed (was ${String(resumed)})`);
  }

  evented(op: Operation, event: OperationEvent): void {
    const a = event.attributes;
    const step = num(a[REIN.step]);
    if (event.name === 'rein.permission') {
      const decision = a[REIN.decision];
      const record: Record<string, unknown> = {
        event: 'permission',
        tool: a[ATTR.toolName],
        tool_call_id: a[ATTR.toolCallId],
        decision,
        ...(step === undefined ? {} : { step }),
      };
      if (a[REIN.rule] !== undefined) record.rule = a[REIN.rule];
      if (a[REIN.reason] !== undefined) record.reason = a[REIN.reason];
      this.write(
        decision === 'deny' ? 'warn' : 'info',
        op,
        record,
        `${String(a[ATTR.toolName])}: ${String(decision)}${a[REIN.rule] ? ` (${String(a[REIN.rule])})` : ''}`,
      );
    } else if (event.name === 'rein.approval.decided') {
      const record: Record<string, unknown> = {
        event: 'approval_decided',
        tool: a[ATTR.toolName],
        tool_call_id: a[ATTR.toolCallId],
        approved: a[REIN.approved],
      };
      if (a[REIN.approvalWaitMs] !== undefined) record.wait_ms = a[REIN.approvalWaitMs];
      if (a[REIN.reason] !== undefined) record.reason = a[REIN.reason];
      this.write('info', op, record, `${String(a[ATTR.toolName] ?? a[ATTR.toolCallId])}: ${a[REIN.approved] ? 'approved' : 'denied'}`);
    } else if (event.name === 'rein.message_injected') {
      this.write(
        'debug',
        op,
        { event: 'message_injected', kind: a[REIN.messageKind], ...(step === undefined ? {} : { step }) },
        `${String(a[REIN.messageKind])} message injected`,
      );
    }
  }

  ended(op: Operation): void {
    const a = op.attributes;
    const duration = Math.round(((op.end ?? op.start) - op.start) * 1000) / 1000;
    switch (op.kind) {
      case 'chat': {
        const record: Record<string, unknown> = {
          event: 'model_request',
          model: a[ATTR.requestModel],
          provider: a[ATTR.providerName],
          attempt: a[REIN.requestAttempt],
          duration_ms: duration,
        };
        if (a[ATTR.responseModel] !== undefined) record.response_model = a[ATTR.responseModel];
        if (a[ATTR.responseId] !== undefined) record.response_id = a[ATTR.responseId];
        if (a[ATTR.responseFinishReasons] !== undefined) record.finish_reason = (a[ATTR.responseFinishReasons] as string[])[0];
        if (a[ATTR.usageInputTokens] !== undefined) record.input_tokens = a[ATTR.usageInputTokens];
        if (a[ATTR.usageOutputTokens] !== undefined) record.output_tokens = a[ATTR.usageOutputTokens];
        if (a[REIN.costUsd] !== undefined) record.cost_usd = a[REIN.costUsd];
        if (op.input !== undefined) record.input = op.input;
        const delay = a[REIN.retryDelayMs];
        if (op.error) record.error = op.error;
        else if (op.output !== undefined) record.output = bounded(op.output, this.maxChars);
        const level: Level = !op.error
          ? 'info'
          : delay !== undefined || op.error.code === 'aborted' || op.error.code === 'context_length'
            ? 'warn'
            : 'error';
        this.write(
          level,
          op,
          record,
          `${String(a[ATTR.requestModel])} ${op.error ? `failed: ${op.error.code}` : `answered (${String(record.finish_reason)})`}`,
        );
        if (delay !== undefined) {
          this.write(
            'warn',
            op,
            { event: 'retry', attempt: a[REIN.requestAttempt], delay_ms: delay, error: op.error },
            `retrying in ${String(delay)} ms after ${op.error?.code ?? 'an error'}`,
          );
        }
        break;
      }
      case 'tool': {
        // The tool's own time, as the dispatcher measured it (the span also holds rein's write before it).
        const ran = a[REIN.toolDurationMs];
        const record: Record<string, unknown> = {
          event: 'tool_call',
          tool: a[ATTR.toolName],
          tool_call_id: a[ATTR.toolCallId],
          outcome: a[REIN.toolOutcome],
          duration_ms: typeof ran === 'number' ? ran : duration,
        };
        if (op.input !== undefined) record.input = bounded(op.input, this.maxChars);
        if (op.error) record.error = op.error;
        else record.output = bounded(op.output ?? '', this.maxChars);
        this.write(op.error ? 'warn' : 'info', op, record, `${String(a[ATTR.toolName])} ${String(a[REIN.toolOutcome])}`);
        break;
      }
      case 'approval': {
        const outcome = a[REIN.approvalOutcome];
        const record: Record<string, unknown> = {
          event: 'approval',
          tool: a[ATTR.toolName],
          tool_call_id: a[ATTR.toolCallId],
          outcome,
          duration_ms: duration,
        };
        if (op.input !== undefined) record.input = bounded(op.input, this.maxChars);
        if (a[REIN.reason] !== undefined) record.reason = a[REIN.reason];
        this.write('info', op, record, `${String(a[ATTR.toolName])}: approval ${String(outcome)}`);
        break;
      }
      case 'compaction': {
        const record: Record<string, unknown> = {
          event: 'compaction',
          reason: a[REIN.compactionReason],
          tokens_before: a[REIN.tokensBefore],
          tokens_after: a[REIN.tokensAfter],
          removed_messages: a[REIN.removedMessages],
          summarizer: a[REIN.summarizer],
          model: a[ATTR.requestModel],
          duration_ms: duration,
        };
        if (a[REIN.costUsd] !== undefined) record.cost_usd = a[REIN.costUsd];
        this.write('info', op, record, `history compacted: ${String(a[REIN.tokensBefore])} → ${String(a[REIN.tokensAfter])} tokens`);
        break;
      }
      case 'run': {
        const status = String(a[REIN.status] ?? 'interrupted');
        const record: Record<string, unknown> = {
          event: 'run_finished',
          status,
          reason: a[REIN.stopReason],
          steps: a[REIN.steps],
          tool_calls: a[REIN.toolCalls],
          input_tokens: a[ATTR.usageInputTokens],
          output_tokens: a[ATTR.usageOutputTokens],
          duration_ms: duration,
        };
        if (a[REIN.costUsd] !== undefined) record.cost_usd = a[REIN.costUsd];
        if (op.error) record.error = op.error;
        else if (op.output !== undefined) record.output = bounded((op.output as { text?: unknown }).text ?? '', this.maxChars);
        const level: Level = status === 'failed' ? 'error' : status === 'done' || status === 'paused' ? 'info' : 'warn';
        this.write(level, op, record, `run ${op.runId} ${status} (${String(a[REIN.stopReason] ?? 'no end logged')})`);
        break;
      }
    }
  }

  private write(level: Level, op: Operation, fields: Record<string, unknown>, message: string): void {
    const record: Record<string, unknown> = { trace_id: op.traceId, span_id: op.spanId, run_id: op.runId };
    if (op.step !== undefined) record.step = op.step;
    Object.assign(record, fields);
    this.logger[level](this.redactor.redactValue(record), this.redactor.redactText(message));
  }
}

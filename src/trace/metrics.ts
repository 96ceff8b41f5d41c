/**
 * Operations as metrics, through an OpenTelemetry `Meter`: the GenAI client metrics
 * (`gen_ai.client.token.usage`, `gen_ai.client.operation.duration`) for every model request
 * attempt, and rein's own — runs by status and stop reason, tool calls by name and outcome,
 * retries by error code, cost in USD, approval waits. Attributes are the conventions'
 * low-cardinality ones: never a run id or a call id.
 */
import type { Counter, Histogram, Meter } from '@opentelemetry/api';
import type { Attributes, Operation, OperationEvent, OperationSink } from './operations.js';
import type { SpanAttributeValue } from './types.js';
import { ATTR, DURATION_BUCKETS, METRIC, REIN, TOKEN_BUCKETS } from './semconv.js';

/** The instruments of one meter (made once per meter, shared by its runs). */
export interface Instruments {
  tokenUsage: Histogram;
  operationDuration: Histogram;
  runs: Counter;
  runDuration: Histogram;
  runCost: Histogram;
  cost: Counter;
  toolCalls: Counter;
  retries: Counter;
  approvalWait: Histogram;
}

/** Makes {@link Instruments} on `meter`. */
export function createInstruments(meter: Meter): Instruments {
  const seconds = { unit: 's', advice: { explicitBucketBoundaries: DURATION_BUCKETS } };
  return {
    tokenUsage: meter.createHistogram(METRIC.tokenUsage, {
      description: 'Number of input and output tokens used',
      unit: '{token}',
      advice: { explicitBucketBoundaries: TOKEN_BUCKETS },
    }),
    operationDuration: meter.createHistogram(METRIC.operationDuration, { description: 'GenAI operation duration', ...seconds }),
    runs: meter.createCounter(METRIC.runs, { description: 'Runs (attempts) that ended, by status and stop reason', unit: '{run}' }),
    runDuration: meter.createHistogram(METRIC.runDuration, { description: 'Duration of a run attempt in this process', ...seconds }),
    runCost: meter.createHistogram(METRIC.runCost, {
      description: 'What a run cost when it ended (catalog prices × usage)',
      unit: '{USD}',
    }),
    cost: meter.createCounter(METRIC.cost, { description: 'What model requests cost (catalog prices × usage)', unit: '{USD}' }),
    toolCalls: meter.createCounter(METRIC.toolCalls, { description: 'Tool calls, by tool and outcome', unit: '{call}' }),
    retries: meter.createCounter(METRIC.retries, { description: 'Model requests retried, by error code', unit: '{retry}' }),
    approvalWait: meter.createHistogram(METRIC.approvalWait, { description: "How long a call waited for a person's decision", unit: 's' }),
  };
}

const pick = (from: Attributes, keys: readonly string[]): Attributes => {
  const out: Attributes = {};
  for (const key of keys) {
    const value = from[key];
    if (value !== undefined) out[key] = value;
  }
  return out;
};

const CHAT_KEYS = [
  ATTR.operationName,
  ATTR.providerName,
  ATTR.requestModel,
  ATTR.responseModel,
  ATTR.serverAddress,
  ATTR.serverPort,
  ATTR.errorType,
] as const;
const COST_KEYS = [ATTR.providerName, ATTR.requestModel] as const;
const RETRY_KEYS = [ATTR.errorType, ATTR.providerName, ATTR.requestModel] as const;
const TOOL_KEYS = [ATTR.toolName, REIN.toolOutcome, ATTR.errorType] as const;
const RUN_KEYS = [REIN.status, REIN.stopReason, ATTR.requestModel, ATTR.providerName, ATTR.errorType] as const;

/** A chat attempt's metric attributes: for the duration, and for the input and output token counts. */
interface ChatAttributes {
  values: SpanAttributeValue[];
  duration: Attributes;
  input: Attributes;
  output: Attributes;
}

/** The sink that records metrics. */
export class MetricsSink implements OperationSink {
  /**
   * The last chat attempt's metric attributes: a run's attempts mostly share them (the
   * instruments keep, never change, what they are given), so they are made once, not
   * picked and copied three times per request.
   */
  private chatAttributes: ChatAttributes | undefined;

  constructor(
    private readonly instruments: Instruments,
    private readonly agentName: string | undefined,
  ) {}

  ended(op: Operation): void {
    const m = this.instruments;
    const a = op.attributes;
    const seconds = ((op.end ?? op.start) - op.start) / 1000;
    switch (op.kind) {
      case 'chat': {
        const attributes = this.chatAttributesOf(a);
        m.operationDuration.record(seconds, attributes.duration);
        const input = a[ATTR.usageInputTokens];
        const output = a[ATTR.usageOutputTokens];
        // A failed attempt reports no usage; the conventions record only what was reported.
        if (typeof input === 'number' && op.status.code !== 'error') m.tokenUsage.record(input, attributes.input);
        if (typeof output === 'number' && op.status.code !== 'error') m.tokenUsage.record(output, attributes.output);
        const cost = a[REIN.costUsd];
        if (typeof cost === 'number' && cost > 0) m.cost.add(cost, pick(a, COST_KEYS));
        if (a[REIN.retryDelayMs] !== undefined) m.retries.add(1, pick(a, RETRY_KEYS));
        break;
      }
      case 'tool':
        m.toolCalls.add(1, pick(a, TOOL_KEYS));
        break;
      case 'compaction': {
        const cost = a[REIN.costUsd];
        if (typeof cost === 'number' && cost > 0) m.cost.add(cost, pick(a, [ATTR.requestModel]));
        break;
      }
      case 'approval': {
        const outcome = a[REIN.approvalOutcome];
        if (outcome === 'approved' || outcome === 'denied')
          m.approvalWait.record(seconds, { ...pick(a, [ATTR.toolName]), [REIN.approved]: outcome === 'approved' });
        break;
      }
      case 'run': {
        const attributes = pick(a, RUN_KEYS);
        if (this.agentName) attributes[ATTR.agentName] = this.agentName;
        if (a[REIN.interrupted] === true) attributes[REIN.status] = 'interrupted';
        m.runs.add(1, attributes);
        m.runDuration.record(seconds, attributes);
        const cost = a[REIN.costUsd];
        // A paused run goes on later: its cost is counted once, when it ends for good.
        if (typeof cost === 'number' && a[REIN.status] !== 'paused')
          m.runCost.record(cost, pick(attributes, [ATTR.requestModel, REIN.status]));
        break;
      }
    }
  }

  /** The metric attributes of a chat attempt with attributes `a`: the last attempt's when they are the same. */
  private chatAttributesOf(a: Attributes): ChatAttributes {
    const last = this.chatAttributes;
    if (last && CHAT_KEYS.every((key, i) => a[key] === last.values[i])) return last;
    const duration = pick(a, CHAT_KEYS);
    const { [ATTR.errorType]: _error, ...usage } = duration;
    const made: ChatAttributes = {
      values: CHAT_KEYS.map((key) => a[key] as SpanAttributeValue),
      duration,
      input: { ...usage, [ATTR.tokenType]: 'input' },
      output: { ...usage, [ATTR.tokenType]: 'output' },
    };
    this.chatAttributes = made;
    return made;
  }

  evented(_op: Operation, event: OperationEvent): void {
    if (event.name !== 'rein.approval.decided') return;
    const wait = event.attributes[REIN.approvalWaitMs];
    if (typeof wait === 'number')
      this.instruments.approvalWait.record(wait / 1000, { ...pick(event.attributes, [ATTR.toolName, REIN.approved]) });
  }
}

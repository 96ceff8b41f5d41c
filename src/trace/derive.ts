/**
 * From a run's events to its operations (see `operations.ts`): the one derivation behind
 * the live spans, metrics and log lines and behind `rein trace` on a stored log, so both
 * tell the same story. Events come in log order; nothing here reads a clock unless the
 * live caller hands one in (then operations get the time they were seen, finer than the
 * events' milliseconds).
 *
 * Spans, in the GenAI conventions' terms: one `invoke_agent` per run attempt (a resumed
 * run is a new attempt in the same trace, linked to the one it continues), a `chat` per
 * model request attempt (a retried request is two spans, the failed one with the delay
 * before the next), an `execute_tool` per call, an `await_approval` while a person is
 * asked, a `compact_context` per compaction. Permission decisions, injected messages and
 * approvals decided while the run was paused are events of the attempt's span.
 */
import type { RunEvent } from '../events.js';
import { newTraceId } from '../ids.js';
import type { AssistantMessage, Message, Usage } from '../model/types.js';
import { toolResultText } from '../model/types.js';
import { contentAttribute, conventionMessage, cut, type ContentPolicy } from './content.js';
import type { Attributes, Operation, OperationKind, OperationSink } from './operations.js';
import type { SpanAttributeValue } from './types.js';
import { ATTR, finishReason, providerName, REIN, serverAttributes } from './semconv.js';
import { derivedSpanId, type ParentContext } from './trace-context.js';

/** What a derivation is told about the agent beyond its events. */
export interface DerivationOptions {
  runId: string;
  /** The run's trace id; empty to take it from `run_started` (a stored log) or from the first sink that makes ids. */
  traceId: string;
  agentName?: string;
  /** Request parameters the agent sends (`gen_ai.request.*`). */
  request?: { maxTokens?: number; temperature?: number; stream?: boolean };
  /** Present when message content is recorded. */
  content?: ContentPolicy;
  sinks: OperationSink[];
  /** The clock of a live run; absent: each event's own time (`at`). */
  now?: () => number;
  /** Cut of the `input` / `output` kept for log lines (default 4000 characters). */
  maxFieldChars?: number;
  /** Keep each operation's `input` / `output` (for log lines and records; default true). */
  keepIo?: boolean;
}

/** A decision taken while the run waited (by `rein approve`): told on the next attempt. */
interface Decided {
  toolCallId: string;
  name?: string;
  approved: boolean;
  reason?: string;
  requestedAt?: number;
  at: number;
}

/** Turns one run's events into operations for the sinks. */
export class RunDerivation {
  traceId: string;
  /** The open run attempt. */
  run: Operation | undefined;
  private chat: Operation | undefined;
  private readonly tools = new Map<string, Operation>();
  private readonly approvals = new Map<string, Operation>();
  private readonly requested = new Map<string, { at: number; name: string }>();
  private decided: Decided[] = [];
  private attempts = 0;
  private first: { spanId: string; sampled: boolean; parent?: ParentContext } | undefined;
  private last: { traceId: string; spanId: string } | undefined;
  private model: { provider: string; id: string; baseUrl: string } | undefined;
  /** The model's attributes, made once per run (a URL is parsed for them). */
  private modelAttrs: Attributes = {};
  /** The name of its model requests' spans (made once per run). */
  private chatName: string | undefined;
  private lastTime = 0;
  private muted = false;
  /** The history, kept only when content is recorded. */
  private readonly messages: Message[] | undefined;
  private readonly maxField: number;
  private readonly io: boolean;

  constructor(private readonly options: DerivationOptions) {
    this.traceId = options.traceId;
    this.messages = options.content ? [] : undefined;
    this.maxField = options.maxFieldChars ?? 4000;
    this.io = options.keepIo !== false;
  }

  /**
   * Starts a run attempt at event `seq`: the first one a child of `parent` (a caller's
   * span) when given; a later one (a resume) a child of the first attempt's parent, or of
   * the first attempt, linked to the attempt before it. `spanId` is the id its log recorded.
   */
  startAttempt(seq: number, time: number, options: { parent?: ParentContext; spanId?: string; traceId?: string } = {}): Operation {
    if (this.run) this.interrupt(this.lastTime || time);
    this.attempts++;
    const traceId = options.traceId ?? this.traceId ?? '';
    const op = this.op(
      'run',
      this.options.agentName ? `invoke_agent ${this.options.agentName}` : 'invoke_agent',
      'internal',
      seq,
      time,
      undefined,
    );
    op.traceId = traceId;
    let parent: ParentContext | undefined;
    if (this.first === undefined) parent = options.parent;
    else {
      parent = this.first.parent ?? { traceId, spanId: this.first.spanId, sampled: this.first.sampled };
      if (this.last)
        op.links.push({ traceId: this.last.traceId, spanId: this.last.spanId, attributes: { [REIN.linkType]: 'resumed_from' } });
    }
    if (parent) {
      op.parentSpanId = parent.spanId;
      op.sampled = parent.sampled;
      if (parent.traceState !== undefined) op.traceState = parent.traceState;
    }
    op.spanId = options.spanId ?? '';
    Object.assign(op.attributes, { [ATTR.operationName]: 'invoke_agent', [REIN.runId]: this.options.runId, [REIN.attempt]: this.attempts });
    if (this.options.agentName) op.attributes[ATTR.agentName] = this.options.agentName;
    Object.assign(op.attributes, this.modelAttrs);
    this.run = op;
    this.started(op);
    this.traceId = op.traceId;
    if (this.first === undefined) this.first = { spanId: op.spanId, sampled: op.sampled, ...(parent ? { parent } : {}) };
    this.last = { traceId: op.traceId, spanId: op.spanId };
    for (const d of this.decided.splice(0)) this.tellDecision(d);
    return op;
  }

  /** A resumed run's stored log, taken in without telling the sinks: the state its next attempt continues from. */
  absorb(events: readonly RunEvent[]): void {
    this.muted = true;
    try {
      for (const event of events) this.onEvent(event);
    } finally {
      this.muted = false;
    }
    // What was open belonged to a process that is gone; its spans (if any) died with it.
    this.run = undefined;
    this.chat = undefined;
    this.tools.clear();
    this.approvals.clear();
  }

  /** The operation a call runs inside (its `execute_tool`), else the open model request or run attempt. */
  current(toolCallId?: string): Operation | undefined {
    return (toolCallId === undefined ? undefined : this.tools.get(toolCallId)) ?? this.chat ?? this.run;
  }

  /** The end of a stored log that ended without `run_finished` (running, or its process died). */
  finish(): void {
    if (this.run) this.interrupt(this.lastTime);
  }

  onEvent(event: RunEvent): void {
    if (
      event.type === 'text_delta' ||
      event.type === 'thinking_delta' ||
      event.type === 'tool_call_delta' ||
      event.type === 'tool_progress'
    )
      return;
    if (event.type === 'state_changed') {
      // Starts and ends nothing: only marks when the next step began (a compaction's start).
      this.lastTime = event.at;
      return;
    }
    const time = this.options.now ? this.options.now() : event.at;
    switch (event.type) {
      case 'run_started': {
        this.model = { provider: event.model.provider, id: event.model.id, baseUrl: event.model.baseUrl };
        this.chatName = undefined;
        this.modelAttrs = {
          [ATTR.providerName]: providerName(event.model.provider),
          [ATTR.requestModel]: event.model.id,
          ...serverOf(event.model.baseUrl),
        };
        if (!this.traceId) this.traceId = event.traceId;
        const parent = event.parentSpanId ? { traceId: event.traceId, spanId: event.parentSpanId, sampled: true } : undefined;
        const run =
          this.run ??
          this.startAttempt(event.seq, time, {
            traceId: event.traceId,
            ...(event.spanId ? { spanId: event.spanId } : {}),
            ...(parent ? { parent } : {}),
          });
        this.messages?.push(...event.history, event.input);
        const content = this.options.content;
        this.annotate(run, this.modelAttrs);
        if (content) {
          if (event.system !== undefined) this.addContent(run, ATTR.systemInstructions, [{ type: 'text', content: event.system }]);
          this.addContent(run, ATTR.inputMessages, [conventionMessage(event.input)]);
        }
        if (this.io)
          run.input = cut(
            typeof event.input.content === 'string'
              ? event.input.content
              : toolResultText(event.input.content.filter((p) => p.type === 'text')),
            this.maxField,
          );
        break;
      }
      case 'run_resumed': {
        const run = this.run ?? this.startAttempt(event.seq, time, event.spanId ? { spanId: event.spanId } : {});
        this.annotate(run, { [REIN.resumedFrom]: event.from });
        break;
      }
      case 'model_request':
        this.onModelRequest(event, time);
        break;
      case 'retry_scheduled': {
        const chat = this.chat;
        if (!chat) break;
        chat.attributes[REIN.retryDelayMs] = event.delayMs;
        this.fail(chat, event.error.code, event.error.message, event.error.status);
        this.close(chat, time);
        this.chat = undefined;
        break;
      }
      case 'assistant_message':
        this.onAnswer(event.message, event.step, event.seq, time);
        break;
      case 'tool_started': {
        const op = this.child('tool', `execute_tool ${event.name}`, 'internal', event.seq, time, event.step);
        const a = op.attributes;
        a[ATTR.operationName] = 'execute_tool';
        a[ATTR.toolName] = event.name;
        a[ATTR.toolCallId] = event.toolCallId;
        a[ATTR.toolType] = 'function';
        a[REIN.idempotencyKey] = event.idempotencyKey;
        if (this.io) op.input = event.arguments;
        if (this.options.content) op.content = { [ATTR.toolCallArguments]: contentAttribute(event.arguments, this.options.content) };
        this.tools.set(event.toolCallId, op);
        this.started(op);
        break;
      }
      case 'tool_finished':
        this.onToolFinished(event, time);
        break;
      case 'approval_requested': {
        this.requested.set(event.toolCallId, { at: time, name: event.name });
        const within = this.tools.get(event.toolCallId);
        const op = this.child('approval', `await_approval ${event.name}`, 'internal', event.seq, time, event.step, within);
        Object.assign(op.attributes, { [ATTR.toolName]: event.name, [ATTR.toolCallId]: event.toolCallId });
        if (event.argumentsHash !== undefined) op.attributes[REIN.argumentsHash] = event.argumentsHash;
        op.input = event.arguments;
        if (this.options.content) op.content = { [ATTR.toolCallArguments]: contentAttribute(event.arguments, this.options.content) };
        this.approvals.set(event.toolCallId, op);
        this.started(op);
        break;
      }
      case 'approval_decided': {
        const op = this.approvals.get(event.toolCallId);
        if (op) {
          this.approvals.delete(event.toolCallId);
          Object.assign(op.attributes, { [REIN.approved]: event.approved, [REIN.approvalOutcome]: event.approved ? 'approved' : 'denied' });
          if (event.reason !== undefined) op.attributes[REIN.reason] = event.reason;
          op.output = { approved: event.approved, ...(event.reason === undefined ? {} : { reason: event.reason }) };
          this.close(op, time);
          break;
        }
        const asked = this.requested.get(event.toolCallId);
        const decided: Decided = {
          toolCallId: event.toolCallId,
          approved: event.approved,
          at: time,
          ...(event.reason === undefined ? {} : { reason: event.reason }),
          ...(asked ? { name: asked.name, requestedAt: asked.at } : {}),
        };
        if (this.run) this.tellDecision(decided);
        else this.decided.push(decided);
        break;
      }
      case 'permission_decided': {
        const attributes: Attributes = {
          [ATTR.toolName]: event.name,
          [ATTR.toolCallId]: event.toolCallId,
          [REIN.decision]: event.decision,
          [REIN.step]: event.step,
        };
        if (event.rule !== undefined) attributes[REIN.rule] = event.rule;
        if (event.reason !== undefined) attributes[REIN.reason] = event.reason;
        this.addEvent('rein.permission', time, attributes);
        break;
      }
      case 'message_injected':
        this.messages?.push(event.message);
        this.addEvent('rein.message_injected', time, { [REIN.messageKind]: event.kind, [REIN.step]: event.step });
        break;
      case 'context_compacted':
        this.onCompacted(event, time);
        break;
      case 'run_finished':
        this.onFinished(event, time);
        break;
      default:
        break;
    }
    this.lastTime = time;
  }

  private onModelRequest(event: Extract<RunEvent, { type: 'model_request' }>, time: number): void {
    if (this.chat) {
      // Only a recovery asks again without an answer or a retry first; say so rather than leave it open.
      this.fail(this.chat, 'superseded', 'asked again before this attempt answered');
      this.close(this.chat, time);
    }
    const model = this.model;
    const op = this.child('chat', (this.chatName ??= `chat ${model?.id ?? 'model'}`), 'client', event.seq, time, event.step);
    const a = op.attributes;
    a[ATTR.operationName] = 'chat';
    for (const key in this.modelAttrs) a[key] = this.modelAttrs[key] as SpanAttributeValue;
    a[REIN.requestAttempt] = event.attempt;
    const request = this.options.request;
    if (request?.maxTokens !== undefined) a[ATTR.requestMaxTokens] = request.maxTokens;
    if (request?.temperature !== undefined) a[ATTR.requestTemperature] = request.temperature;
    if (request?.stream !== undefined) a[ATTR.requestStream] = request.stream;
    if (this.io) op.input = { messages: event.messages };
    if (this.options.content && this.messages)
      op.content = { [ATTR.inputMessages]: contentAttribute(this.messages.map(conventionMessage), this.options.content) };
    this.chat = op;
    this.started(op);
  }

  private onAnswer(message: AssistantMessage, step: number, seq: number, time: number): void {
    let op = this.chat;
    if (!op) {
      op = this.child('chat', `chat ${this.model?.id ?? message.model}`, 'client', seq, time, step);
      op.attributes[ATTR.operationName] = 'chat';
      Object.assign(op.attributes, this.modelAttrs);
      this.started(op);
    }
    this.chat = undefined;
    const a = op.attributes;
    addUsage(a, message.usage);
    a[ATTR.responseModel] = message.model;
    a[ATTR.responseFinishReasons] = [finishReason(message.stopReason)];
    if (message.responseId !== undefined) op.attributes[ATTR.responseId] = message.responseId;
    if (message.stopReason === 'error' || message.stopReason === 'aborted') {
      this.fail(op, message.error?.code ?? message.stopReason, message.error?.message, message.error?.status);
    } else this.messages?.push(message);
    if (this.io) {
      let text = '';
      const calls: string[] = [];
      for (const block of message.content) {
        if (block.type === 'text') text += block.text;
        else if (block.type === 'tool_call') calls.push(block.name);
      }
      op.output = { text: cut(text, this.maxField), ...(calls.length > 0 ? { tool_calls: calls } : {}) };
    }
    if (this.options.content)
      (op.content ??= {})[ATTR.outputMessages] = contentAttribute([conventionMessage(message)], this.options.content);
    this.close(op, time);
  }

  private onToolFinished(event: Extract<RunEvent, { type: 'tool_finished' }>, time: number): void {
    let op = this.tools.get(event.toolCallId);
    if (!op) {
      // A call that never ran (denied, refused before it started): a span of no length, so it is counted.
      op = this.child('tool', `execute_tool ${event.name}`, 'internal', event.seq, time, event.step);
      Object.assign(op.attributes, {
        [ATTR.operationName]: 'execute_tool',
        [ATTR.toolName]: event.name,
        [ATTR.toolCallId]: event.toolCallId,
        [ATTR.toolType]: 'function',
      });
      this.started(op);
    }
    this.tools.delete(event.toolCallId);
    const text = this.io || this.options.content || event.result.isError ? toolResultText(event.result.content) : '';
    const outcome = event.outcome ?? (event.errorCode === 'tool_denied' ? 'denied' : event.result.isError ? 'error' : 'ok');
    op.attributes[REIN.toolOutcome] = outcome;
    // The tool's own time (the span also holds the durable write before it and a person's answer).
    op.attributes[REIN.toolDurationMs] = event.durationMs;
    if (event.result.isError || event.outcome === 'unknown') this.fail(op, event.errorCode ?? 'tool_error', cut(text, 500));
    else if (this.io) op.output = cut(text, this.maxField);
    if (this.options.content) (op.content ??= {})[ATTR.toolCallResult] = contentAttribute(text, this.options.content);
    this.messages?.push(event.result);
    this.close(op, time);
  }

  private onCompacted(event: Extract<RunEvent, { type: 'context_compacted' }>, time: number): void {
    if (this.chat && event.reason === 'context_length') {
      this.fail(
        this.chat,
        'context_length',
        'the provider refused the request as too long; the history was compacted and the request sent again',
      );
      this.close(this.chat, time);
      this.chat = undefined;
    }
    // The compaction ran since the event before it (the turn's start): that is its span.
    const op = this.child('compaction', 'compact_context', 'internal', event.seq, Math.min(this.lastTime || time, time), event.step);
    Object.assign(op.attributes, {
      [REIN.compactionReason]: event.reason,
      [REIN.tokensBefore]: event.tokensBefore,
      [REIN.tokensAfter]: event.tokensAfter,
      [REIN.removedMessages]: event.removedMessages,
      [REIN.keptMessages]: event.keptMessages,
      [REIN.summarizer]: event.summarizer,
      [ATTR.requestModel]: event.summaryModel,
      ...(event.usage ? usageAttributes(event.usage) : {}),
    });
    if (event.summaryError)
      op.events.push({
        name: 'rein.summary_failed',
        time,
        attributes: { [ATTR.errorType]: event.summaryError.code, [REIN.reason]: cut(event.summaryError.message, 500) },
      });
    op.output = { tokens_before: event.tokensBefore, tokens_after: event.tokensAfter, summarizer: event.summarizer };
    this.started(op);
    this.messages?.splice(0, event.removedMessages, event.summary);
    this.close(op, time);
  }

  private onFinished(event: Extract<RunEvent, { type: 'run_finished' }>, time: number): void {
    const run = this.run ?? this.startAttempt(event.seq, time, event.result.traceId ? { traceId: event.result.traceId } : {});
    const { result } = event;
    const paused = event.status === 'paused';
    if (this.chat) this.endOpen(this.chat, time, event.status === 'aborted' ? 'aborted' : 'interrupted');
    for (const op of this.tools.values()) this.endOpen(op, time, event.status === 'aborted' ? 'aborted' : 'interrupted');
    for (const op of this.approvals.values()) {
      op.attributes[REIN.approvalOutcome] = paused ? 'paused' : 'abandoned';
      this.close(op, time);
    }
    this.chat = undefined;
    this.tools.clear();
    this.approvals.clear();
    Object.assign(run.attributes, {
      [REIN.status]: event.status,
      [REIN.stopReason]: event.reason,
      [REIN.steps]: result.totals.steps,
      [REIN.toolCalls]: result.totals.toolCalls,
      ...usageAttributes(result.totals.usage),
    });
    if (event.status === 'failed') this.fail(run, result.error?.code ?? 'fatal_error', result.error?.message, result.error?.status);
    else if (event.status === 'aborted') this.fail(run, 'aborted', result.error?.message ?? 'the run was aborted');
    run.output = { status: event.status, reason: event.reason, text: cut(result.text, this.maxField) };
    this.close(run, time);
    this.run = undefined;
  }

  /** A decision taken while the run waited, as an event of the attempt that continues it. */
  private tellDecision(d: Decided): void {
    const attributes: Attributes = { [ATTR.toolCallId]: d.toolCallId, [REIN.approved]: d.approved };
    if (d.name !== undefined) attributes[ATTR.toolName] = d.name;
    if (d.reason !== undefined) attributes[REIN.reason] = d.reason;
    if (d.requestedAt !== undefined) attributes[REIN.approvalWaitMs] = Math.max(0, d.at - d.requestedAt);
    this.addEvent('rein.approval.decided', d.at, attributes);
  }

  /** Ends every open operation of an attempt whose process stopped without `run_finished`. */
  private interrupt(time: number): void {
    const run = this.run;
    if (!run) return;
    if (this.chat) this.endOpen(this.chat, time, 'interrupted');
    for (const op of [...this.tools.values(), ...this.approvals.values()]) this.endOpen(op, time, 'interrupted');
    this.chat = undefined;
    this.tools.clear();
    this.approvals.clear();
    run.attributes[REIN.interrupted] = true;
    this.close(run, time);
    this.run = undefined;
  }

  private endOpen(op: Operation, time: number, why: 'aborted' | 'interrupted'): void {
    if (why === 'aborted') this.fail(op, 'aborted', 'the run was aborted');
    else op.attributes[REIN.interrupted] = true;
    this.close(op, time);
  }

  private op(
    kind: OperationKind,
    name: string,
    spanKind: 'internal' | 'client',
    seq: number,
    time: number,
    step: number | undefined,
  ): Operation {
    const op: Operation = {
      kind,
      name,
      spanKind,
      runId: this.options.runId,
      seq,
      start: time,
      traceId: this.traceId,
      spanId: '',
      sampled: true,
      attributes: {},
      events: [],
      links: [],
      status: { code: 'unset' },
    };
    if (step !== undefined) {
      op.step = step;
      op.attributes[REIN.step] = step;
    }
    return op;
  }

  private child(
    kind: OperationKind,
    name: string,
    spanKind: 'internal' | 'client',
    seq: number,
    time: number,
    step: number,
    within?: Operation,
  ): Operation {
    // A log that starts without run_started (cut, or hand-made) still gets an attempt to hold its children.
    const parent = within ?? this.run ?? this.startAttempt(seq, time);
    const op = this.op(kind, name, spanKind, seq, time, step);
    op.parent = parent;
    op.traceId = parent.traceId;
    op.parentSpanId = parent.spanId;
    op.sampled = parent.sampled;
    if (parent.traceState !== undefined) op.traceState = parent.traceState;
    return op;
  }

  private fail(op: Operation, code: string, message?: string, status?: number): void {
    op.attributes[ATTR.errorType] = code;
    op.status = { code: 'error', ...(message === undefined ? {} : { message: cut(message, 500) }) };
    op.error = { code, message: message ?? code, ...(status === undefined ? {} : { status }) };
  }

  private addContent(op: Operation, key: string, value: unknown): void {
    const content = this.options.content;
    if (!content) return;
    const text = contentAttribute(value, content);
    (op.content ??= {})[key] = text;
    this.annotate(op, { [key]: text });
  }

  private addEvent(name: string, time: number, attributes: Attributes): void {
    const run = this.run;
    if (!run) return;
    const event = { name, time, attributes };
    run.events.push(event);
    if (this.muted) return;
    for (const sink of this.options.sinks) sink.evented?.(run, event);
  }

  private annotate(op: Operation, added: Attributes): void {
    Object.assign(op.attributes, added);
    if (this.muted) return;
    for (const sink of this.options.sinks) sink.annotated?.(op, added);
  }

  private started(op: Operation): void {
    const { sinks } = this.options;
    if (!this.muted) for (const sink of sinks) if (sink.assignsIds) sink.started?.(op);
    if (!op.traceId) op.traceId = this.traceId || newTraceId();
    if (!op.spanId) op.spanId = derivedSpanId(op.traceId, op.runId, op.seq, op.kind);
    if (!this.muted) for (const sink of sinks) if (!sink.assignsIds) sink.started?.(op);
  }

  private close(op: Operation, time: number): void {
    op.end = Math.max(time, op.start);
    if (this.muted) return;
    for (const sink of this.options.sinks) sink.ended?.(op);
  }
}

let lastServer: { baseUrl: string; attributes: Attributes } | undefined;
/** {@link serverAttributes}, the URL parsed once while runs go to the same server (the result is only ever copied). */
function serverOf(baseUrl: string): Attributes {
  if (lastServer?.baseUrl !== baseUrl) lastServer = { baseUrl, attributes: serverAttributes(baseUrl) };
  return lastServer.attributes;
}

/** Token counts in the conventions' terms: input tokens include the cached ones. */
export function usageAttributes(usage: Usage): Attributes {
  return addUsage({}, usage);
}

/** Adds {@link usageAttributes} to `out` in place (no object per model answer). */
function addUsage(out: Attributes, usage: Usage): Attributes {
  out[ATTR.usageInputTokens] = usage.input + usage.cacheRead + usage.cacheWrite;
  out[ATTR.usageOutputTokens] = usage.output;
  if (usage.cacheRead > 0) out[ATTR.usageCacheReadTokens] = usage.cacheRead;
  if (usage.cacheWrite > 0) out[ATTR.usageCacheCreationTokens] = usage.cacheWrite;
  if (usage.reasoning > 0) out[ATTR.usageReasoningTokens] = usage.reasoning;
  if (usage.cost !== undefined) out[REIN.costUsd] = usage.cost.total;
  return out;
}

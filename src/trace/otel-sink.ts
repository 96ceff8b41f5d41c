/**
 * Operations as OpenTelemetry spans, through `@opentelemetry/api`: whichever SDK the
 * program registered (or handed in) records and exports them. The span's ids become the
 * operation's, so log lines and propagated `traceparent`s name the spans the backend has.
 */
import type { AttributeValue as SpanAttributeValue, Context, Span, Tracer } from '@opentelemetry/api';
import type { Operation, OperationEvent, OperationSink, Attributes } from './operations.js';
import type { OtelApi } from './otel-api.js';

/** The sink that makes spans. */
export class OtelSpanSink implements OperationSink {
  readonly assignsIds = true;

  /**
   * @param callerContext the caller's active context, when its span is the parent of the run's first attempt.
   */
  constructor(
    private readonly api: OtelApi,
    private readonly tracer: Tracer,
    private readonly callerContext: Context | undefined,
  ) {}

  started(op: Operation): void {
    const { api } = this;
    const span = this.tracer.startSpan(
      op.name,
      {
        kind: op.spanKind === 'client' ? api.SpanKind.CLIENT : api.SpanKind.INTERNAL,
        attributes: op.attributes,
        startTime: op.start,
        ...(op.links.length > 0
          ? { links: op.links.map((l) => ({ context: { traceId: l.traceId, spanId: l.spanId, traceFlags: api.TraceFlags.SAMPLED, isRemote: true }, attributes: l.attributes })) }
          : {}),
      },
      this.parentOf(op),
    );
    op.handle = span;
    op.startedKeys = Object.keys(op.attributes).length;
    const context = span.spanContext();
    // An SDK's span always has valid ids; a no-op one has the invalid (all-zero) ones.
    if (context.spanId !== api.INVALID_SPANID && context.traceId !== api.INVALID_TRACEID) {
      op.traceId = context.traceId;
      op.spanId = context.spanId;
      op.sampled = (context.traceFlags & api.TraceFlags.SAMPLED) === api.TraceFlags.SAMPLED;
      const state = context.traceState?.serialize();
      if (state) op.traceState = state;
    }
  }

  annotated(op: Operation, added: Attributes): void {
    (op.handle as Span | undefined)?.setAttributes(added);
  }

  evented(op: Operation, event: OperationEvent): void {
    (op.handle as Span | undefined)?.addEvent(event.name, event.attributes, event.time);
  }

  ended(op: Operation): void {
    const span = op.handle as Span | undefined;
    if (!span) return;
    // Only what was added since the start: the span validates each attribute it is given.
    let index = 0;
    const skip = op.startedKeys ?? 0;
    for (const key in op.attributes) if (index++ >= skip) span.setAttribute(key, op.attributes[key] as SpanAttributeValue);
    if (op.content) span.setAttributes(op.content);
    for (const event of op.kind === 'run' ? [] : op.events) span.addEvent(event.name, event.attributes, event.time);
    if (op.status.code === 'error') span.setStatus({ code: this.api.SpanStatusCode.ERROR, ...(op.status.message === undefined ? {} : { message: op.status.message }) });
    span.end(op.end);
  }

  /** The context a span starts in: its operation's parent span, the caller's, a remote parent, or none (a new trace). */
  private parentOf(op: Operation): Context {
    const { api } = this;
    const parentSpan = op.parent?.handle as Span | undefined;
    if (parentSpan) return api.trace.setSpan(api.ROOT_CONTEXT, parentSpan);
    if (op.parentSpanId === undefined || !op.traceId) return api.ROOT_CONTEXT;
    const caller = this.callerContext && api.trace.getSpanContext(this.callerContext);
    if (caller && caller.spanId === op.parentSpanId && caller.traceId === op.traceId) return this.callerContext as Context;
    return api.trace.setSpanContext(api.ROOT_CONTEXT, {
      traceId: op.traceId,
      spanId: op.parentSpanId,
      traceFlags: op.sampled ? api.TraceFlags.SAMPLED : api.TraceFlags.NONE,
      isRemote: true,
      ...(op.traceState ? { traceState: api.createTraceState(op.traceState) } : {}),
    });
  }
}

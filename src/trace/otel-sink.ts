/**
 * Operations as OpenTelemetry spans, through `@opentelemetry/api`: whichever SDK the
 * program registered (or handed in) records and exports them. The span's ids become the
 * operation's, so log lines and propagated `traceparent`s name the spans the backend has.
 */
import type { AttributeValue as SpanAttributeValue, Context, Span, SpanOptions, Tracer } from '@opentelemetry/api';
import type { Operation, OperationEvent, OperationSink, Attributes } from './operations.js';
import type { OtelApi } from './otel-api.js';

/** The API's constants, read once: each is a getter on the API's CommonJS exports. */
interface Constants {
  client: number;
  internal: number;
  sampled: number;
  none: number;
  error: number;
  invalidSpan: string;
  invalidTrace: string;
  root: Context;
  trace: OtelApi['trace'];
}
const constants = new WeakMap<OtelApi, Constants>();

function constantsOf(api: OtelApi): Constants {
  let c = constants.get(api);
  if (!c) {
    c = {
      client: api.SpanKind.CLIENT,
      internal: api.SpanKind.INTERNAL,
      sampled: api.TraceFlags.SAMPLED,
      none: api.TraceFlags.NONE,
      error: api.SpanStatusCode.ERROR,
      invalidSpan: api.INVALID_SPANID,
      invalidTrace: api.INVALID_TRACEID,
      root: api.ROOT_CONTEXT,
      trace: api.trace,
    };
    constants.set(api, c);
  }
  return c;
}

/** The sink that makes spans. */
export class OtelSpanSink implements OperationSink {
  readonly assignsIds = true;
  private readonly c: Constants;
  /** The context of the last parent span a child started in. */
  private parentContext: { span: Span; context: Context } | undefined;

  /**
   * @param callerContext the caller's active context, when its span is the parent of the run's first attempt.
   */
  constructor(
    private readonly api: OtelApi,
    private readonly tracer: Tracer,
    private readonly callerContext: Context | undefined,
  ) {
    this.c = constantsOf(api);
  }

  started(op: Operation): void {
    const { c } = this;
    const options: SpanOptions = { kind: op.spanKind === 'client' ? c.client : c.internal, attributes: op.attributes, startTime: op.start };
    if (op.links.length > 0)
      options.links = op.links.map((l) => ({
        context: { traceId: l.traceId, spanId: l.spanId, traceFlags: c.sampled, isRemote: true },
        attributes: l.attributes,
      }));
    const span = this.tracer.startSpan(op.name, options, this.parentOf(op));
    op.handle = span;
    op.startedKeys = Object.keys(op.attributes).length;
    const context = span.spanContext();
    // An SDK's span always has valid ids; a no-op one has the invalid (all-zero) ones.
    if (context.spanId !== c.invalidSpan && context.traceId !== c.invalidTrace) {
      op.traceId = context.traceId;
      op.spanId = context.spanId;
      op.sampled = (context.traceFlags & c.sampled) === c.sampled;
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
    const { attributes } = op;
    const keys = Object.keys(attributes);
    for (let i = op.startedKeys ?? 0; i < keys.length; i++)
      span.setAttribute(keys[i] as string, attributes[keys[i] as string] as SpanAttributeValue);
    if (op.content) span.setAttributes(op.content);
    // A run attempt's events were added as they came (evented); the others' are added now.
    if (op.kind !== 'run') for (const event of op.events) span.addEvent(event.name, event.attributes, event.time);
    if (op.status.code === 'error')
      span.setStatus({ code: this.c.error, ...(op.status.message === undefined ? {} : { message: op.status.message }) });
    span.end(op.end);
  }

  /** The context a span starts in: its operation's parent span, the caller's, a remote parent, or none (a new trace). */
  private parentOf(op: Operation): Context {
    const { api, c } = this;
    const parentSpan = op.parent?.handle as Span | undefined;
    if (parentSpan) {
      // A run attempt's children all start in its context: made once, not once per child.
      if (this.parentContext?.span !== parentSpan) this.parentContext = { span: parentSpan, context: c.trace.setSpan(c.root, parentSpan) };
      return this.parentContext.context;
    }
    if (op.parentSpanId === undefined || !op.traceId) return c.root;
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

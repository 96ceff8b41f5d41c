/**
 * A run's spans as a tree for the terminal (`rein trace <run>`): each attempt, its turns,
 * the model request attempts with tokens, cost and duration, tool calls with duration and
 * outcome, retries and their waits, compactions, approvals and permission decisions.
 */
import { ATTR, REIN } from './semconv.js';
import type { SpanAttributeValue, SpanRecord } from './types.js';

/** `812 ms`, `2.3 s`, `3 m 12 s`, `2 h 5 m`. */
export function duration(ms: number): string {
  if (ms < 1) return `${ms.toFixed(ms < 0.1 ? 2 : 1)} ms`;
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  if (ms < 3_600_000) return `${Math.floor(ms / 60_000)} m ${Math.round((ms % 60_000) / 1000)} s`;
  return `${Math.floor(ms / 3_600_000)} h ${Math.round((ms % 3_600_000) / 60_000)} m`;
}

const count = (n: SpanAttributeValue | undefined): string => (typeof n === 'number' ? n.toLocaleString('en-US') : '?');
const usd = (n: SpanAttributeValue | undefined): string | undefined =>
  typeof n === 'number' && n > 0 ? `$${n < 0.01 ? n.toPrecision(2) : n.toFixed(4)}` : undefined;

/** A span's error message for a line: short, in parentheses. */
function message(span: SpanRecord): string {
  const text = span.status.message;
  if (!text) return '';
  return ` (${text.length > 160 ? `${text.slice(0, 160)}…` : text})`;
}

/** What a line says about one span, after its name. */
function describe(span: SpanRecord): string {
  const a = span.attributes;
  const parts: string[] = [duration(span.endTime - span.startTime)];
  const error = a[ATTR.errorType];
  switch (a[ATTR.operationName] ?? (span.name.startsWith('compact_context') ? 'compact' : span.name.split(' ')[0])) {
    case 'chat': {
      if (a[ATTR.usageInputTokens] !== undefined && error === undefined)
        parts.push(`${count(a[ATTR.usageInputTokens])} in / ${count(a[ATTR.usageOutputTokens])} out`);
      const cost = usd(a[REIN.costUsd]);
      if (cost) parts.push(cost);
      if (error !== undefined) parts.push(`failed: ${String(error)}${message(span)}`);
      else if (Array.isArray(a[ATTR.responseFinishReasons])) parts.push(String((a[ATTR.responseFinishReasons] as string[])[0]));
      if (a[REIN.retryDelayMs] !== undefined) parts.push(`retried after a ${duration(Number(a[REIN.retryDelayMs]))} wait`);
      break;
    }
    case 'execute_tool': {
      parts.push(
        error !== undefined
          ? `${String(a[REIN.toolOutcome] ?? 'error')}: ${String(error)}${message(span)}`
          : String(a[REIN.toolOutcome] ?? 'ok'),
      );
      // The tool's own time, when the span is much longer (a durable write, a person asked).
      const ran = a[REIN.toolDurationMs];
      const total = span.endTime - span.startTime;
      if (typeof ran === 'number' && total - ran >= 1 && total > ran * 1.1) parts.push(`ran ${duration(ran)}`);
      break;
    }
    case 'await_approval':
      parts[0] = `waited ${parts[0]}`;
      parts.push(String(a[REIN.approvalOutcome] ?? 'open'));
      break;
    case 'compact':
      parts.push(
        `${count(a[REIN.tokensBefore])} → ${count(a[REIN.tokensAfter])} tokens (${String(a[REIN.compactionReason])}, ${String(a[REIN.summarizer])} summary)`,
      );
      if (usd(a[REIN.costUsd])) parts.push(usd(a[REIN.costUsd]) as string);
      break;
    default:
      break;
  }
  if (a[REIN.interrupted] === true) parts.push('no end logged (the process stopped)');
  return parts.join(' · ');
}

/** The line of an attempt's event (a permission decision, an approval decided while the run was paused, a steer). */
function eventLine(event: SpanRecord['events'][number]): string | undefined {
  const a = event.attributes;
  if (event.name === 'rein.permission')
    return `permission ${String(a[ATTR.toolName])}: ${String(a[REIN.decision])}${a[REIN.rule] ? ` (${String(a[REIN.rule])})` : ''}`;
  if (event.name === 'rein.approval.decided') {
    const wait = a[REIN.approvalWaitMs] === undefined ? '' : ` after ${duration(Number(a[REIN.approvalWaitMs]))}`;
    return `approval ${String(a[ATTR.toolName] ?? a[ATTR.toolCallId])}: ${a[REIN.approved] ? 'approved' : 'denied'}${wait}${a[REIN.reason] ? ` (${String(a[REIN.reason])})` : ''}`;
  }
  if (event.name === 'rein.message_injected') return `${String(a[REIN.messageKind]).replace('_', '-')} message`;
  return undefined;
}

interface Item {
  time: number;
  /** A point event of the attempt, not a span. */
  event?: boolean;
  step?: number;
  text: string;
  children: Item[];
}

function itemOf(span: SpanRecord, all: SpanRecord[]): Item {
  const children = all.filter((s) => s.parentSpanId === span.spanId).map((s) => itemOf(s, all));
  const attempt = span.attributes[REIN.requestAttempt];
  const name = typeof attempt === 'number' && attempt > 1 ? `${span.name} (attempt ${attempt})` : span.name;
  const step = span.attributes[REIN.step];
  return { time: span.startTime, ...(typeof step === 'number' ? { step } : {}), text: `${name}  ${describe(span)}`, children };
}

function draw(items: Item[], prefix: string, out: string[]): void {
  items.forEach((item, i) => {
    const last = i === items.length - 1;
    out.push(`${prefix}${last ? '└─ ' : '├─ '}${item.text}`);
    draw(item.children, `${prefix}${last ? '   ' : '│  '}`, out);
  });
}

/**
 * The lines of the tree of a run's spans (from `spansOfLog`). Text from the run (tool
 * names, error messages) is as recorded: a terminal caller should make control
 * characters visible.
 */
export function traceTree(spans: SpanRecord[]): string[] {
  const out: string[] = [];
  const attempts = spans.filter((s) => s.attributes[ATTR.operationName] === 'invoke_agent');
  for (const run of attempts) {
    const a = run.attributes;
    const head = [
      `${run.name}${Number(a[REIN.attempt]) > 1 ? ` (attempt ${String(a[REIN.attempt])}, resumed from ${String(a[REIN.resumedFrom] ?? 'a stop')})` : ''}`,
      duration(run.endTime - run.startTime),
    ];
    if (a[REIN.status] !== undefined) head.push(`${String(a[REIN.status])} (${String(a[REIN.stopReason])})`);
    if (a[ATTR.errorType] !== undefined && a[ATTR.errorType] !== 'aborted') head.push(`${String(a[ATTR.errorType])}${message(run)}`);
    if (a[ATTR.usageInputTokens] !== undefined)
      head.push(`${count(a[ATTR.usageInputTokens])} in / ${count(a[ATTR.usageOutputTokens])} out tokens in all`);
    if (usd(a[REIN.costUsd])) head.push(usd(a[REIN.costUsd]) as string);
    if (a[REIN.interrupted] === true) head.push('no end logged (running, or its process stopped)');
    out.push(head.join(' · '));
    const items: Item[] = spans.filter((s) => s.parentSpanId === run.spanId && s !== run).map((s) => itemOf(s, spans));
    for (const event of run.events) {
      const text = eventLine(event);
      if (text !== undefined)
        items.push({
          time: event.time,
          event: true,
          ...(typeof event.attributes[REIN.step] === 'number' ? { step: event.attributes[REIN.step] as number } : {}),
          text,
          children: [],
        });
    }
    // At the same millisecond an event (a permission decision, an approval, a steer) goes
    // first: it is logged before the span it leads to starts.
    items.sort((x, y) => x.time - y.time || Number(y.event === true) - Number(x.event === true));
    // Grouped by turn: a step's items under `step N`, in time order.
    const grouped: Item[] = [];
    for (const item of items) {
      const group = grouped[grouped.length - 1];
      if (item.step === undefined) grouped.push(item);
      else if (group?.step === item.step && group.text === `step ${item.step}`) group.children.push(item);
      else grouped.push({ time: item.time, step: item.step, text: `step ${item.step}`, children: [item] });
    }
    draw(grouped, '', out);
  }
  return out;
}

/**
 * A run's timeline, grown one event at a time: its turns, each with its model request
 * (tokens, cost, duration, retries), its answer, its tool calls (arguments, result,
 * duration, error), permission decisions and approvals; compactions, injected messages,
 * resumes and the end. Deltas show the answer as it streams. A sub-agent's run is nested in
 * the tool call that started it (`nest`).
 */
import type { RunEvent } from '../../events.js';
import { brief, duration, h, usd, when } from './dom.js';

type Of<T extends RunEvent['type']> = Extract<RunEvent, { type: T }>;

/** The timeline of one run: `add` each event in order. */
export class Timeline {
  readonly element = h('ol', { class: 'timeline', 'aria-live': 'polite' });
  private readonly turns = new Map<
    number,
    { body: HTMLElement; request?: HTMLElement; requestAt?: number; retries: number; streaming?: HTMLElement }
  >();
  private readonly tools = new Map<string, { item: HTMLElement; startedAt: number }>();
  private readonly approvals = new Map<string, HTMLElement>();
  /** The seq of the last stored event added (the stream resumes after it). */
  lastSeq = -1;
  /** Stored events added, by type (for tests and the header). */
  readonly counts = new Map<string, number>();
  /** The last turn drawn (a call heard of before its `tool_started` waits there). */
  private lastTurn: HTMLElement | undefined;

  /**
   * Puts `element` (a sub-agent's run) inside the item of tool call `toolCallId`. The
   * child's start may be durable before the parent's `tool_started` is: the call's item is
   * then drawn at once, after the last turn, and moves to its turn when its start comes.
   */
  nest(toolCallId: string | null, element: HTMLElement, label: string): void {
    if (toolCallId === null) return void this.element.append(h('li', { class: 'event orphan-child' }, element));
    let tool = this.tools.get(toolCallId);
    if (!tool) {
      const item = h(
        'li',
        { class: 'event tool running', 'data-call': toolCallId },
        h('div', { class: 'head' }, h('span', { class: 'label' }, label), h('span', { class: 'status' }, 'running')),
      );
      tool = { item, startedAt: Date.now() };
      this.tools.set(toolCallId, tool);
      (this.lastTurn ?? this.element).append(item);
    }
    tool.item.append(element);
  }

  add(event: RunEvent): void {
    if (!isDelta(event)) {
      if (event.seq <= this.lastSeq) return;
      this.lastSeq = event.seq;
      this.counts.set(event.type, (this.counts.get(event.type) ?? 0) + 1);
    }
    switch (event.type) {
      case 'run_started':
        return this.item(
          'start',
          'Run started',
          event.at,
          h('p', { class: 'task' }, textOf(event.input.content)),
          h(
            'p',
            { class: 'meta' },
            `${event.model.provider}/${event.model.id} · tools: ${event.tools.join(', ') || 'none'} · at most ${event.limits.maxSteps} steps`,
          ),
        );
      case 'run_resumed':
        return this.item('resume', `Continued from its log (was ${event.from})`, event.at);
      case 'model_request':
        return this.request(event);
      case 'text_delta':
      case 'thinking_delta':
        return this.stream(event);
      case 'retry_scheduled': {
        const turn = this.turn(event.step);
        turn.retries++;
        turn.request?.querySelector('.retries')?.replaceChildren(`${turn.retries} ${turn.retries === 1 ? 'retry' : 'retries'}`);
        return void turn.body.append(
          h(
            'li',
            { class: 'event retry' },
            h('span', { class: 'label' }, `Retry ${event.attempt} in ${duration(event.delayMs)}`),
            h('span', { class: 'detail' }, `${event.error.code}: ${event.error.message}`),
          ),
        );
      }
      case 'assistant_message':
        return this.answer(event);
      case 'permission_decided':
        return void this.turn(event.step).body.append(
          h(
            'li',
            { class: `event permission ${event.decision}`, 'data-call': event.toolCallId },
            h('span', { class: 'label' }, `Permission: ${event.decision} ${event.name}`),
            h('span', { class: 'detail' }, [event.rule, event.reason].filter(Boolean).join(' — ')),
          ),
        );
      case 'approval_requested': {
        const item = h(
          'li',
          { class: 'event approval waiting', 'data-call': event.toolCallId },
          h('span', { class: 'label' }, `Waiting for approval: ${event.name}`),
          h('code', { class: 'args' }, brief(event.arguments, 400)),
        );
        this.approvals.set(event.toolCallId, item);
        return void this.turn(event.step).body.append(item);
      }
      case 'approval_decided': {
        const item = h(
          'li',
          { class: `event approval ${event.approved ? 'approved' : 'denied'}`, 'data-call': event.toolCallId },
          h('span', { class: 'label' }, event.approved ? 'Approved' : 'Denied'),
          h('span', { class: 'detail' }, event.reason ?? ''),
        );
        this.approvals.get(event.toolCallId)?.classList.remove('waiting');
        return void this.turn(event.step).body.append(item);
      }
      case 'tool_started':
        return this.toolStarted(event);
      case 'tool_progress': {
        const tool = this.tools.get(event.toolCallId);
        tool?.item
          .querySelector('.progress')
          ?.replaceChildren(`${event.progress}${event.total ? ` / ${event.total}` : ''}${event.message ? ` ${event.message}` : ''}`);
        return;
      }
      case 'tool_finished':
        return this.toolFinished(event);
      case 'context_compacted':
        return this.item(
          'compaction',
          `Context compacted (${event.reason})`,
          event.at,
          h(
            'p',
            { class: 'meta' },
            `${event.tokensBefore} → ${event.tokensAfter} tokens · ${event.removedMessages} messages summarized by ${event.summarizer === 'model' ? event.summaryModel : 'rein'}`,
          ),
        );
      case 'message_injected':
        return void this.turn(event.step).body.append(
          h(
            'li',
            { class: 'event injected' },
            h('span', { class: 'label' }, event.kind === 'steer' ? 'Steered' : 'Follow-up'),
            h('span', { class: 'detail' }, textOf(event.message.content)),
          ),
        );
      case 'run_finished': {
        const r = event.result;
        return this.item(
          `finish ${event.status}`,
          `Run ${event.status} (${event.reason})`,
          event.at,
          r.error ? h('p', { class: 'error' }, r.error.message) : null,
          h(
            'p',
            { class: 'meta' },
            `${r.totals.steps} steps · ${r.totals.toolCalls} tool calls · ${r.totals.usage.total} tokens · ${usd(r.totals.usage.cost?.total)} · ${duration(r.totals.durationMs)}`,
          ),
        );
      }
      default:
        return;
    }
  }

  private item(kind: string, title: string, at: number, ...children: Array<Node | null>): void {
    this.element.append(
      h(
        'li',
        { class: `event ${kind}` },
        h('div', { class: 'head' }, h('span', { class: 'label' }, title), h('time', {}, when(at))),
        ...children,
      ),
    );
  }

  private turn(step: number) {
    let turn = this.turns.get(step);
    if (!turn) {
      const body = h('ol', { class: 'turn-body' });
      this.element.append(
        h('li', { class: 'turn', 'data-step': step }, h('div', { class: 'head' }, h('span', { class: 'label' }, `Turn ${step}`)), body),
      );
      turn = { body, retries: 0 };
      this.turns.set(step, turn);
      this.lastTurn = body;
    }
    return turn;
  }

  private request(event: Of<'model_request'>): void {
    const turn = this.turn(event.step);
    if (turn.request && event.attempt > 1) return;
    turn.requestAt = event.at;
    turn.request = h(
      'li',
      { class: 'event request pending' },
      h('span', { class: 'label' }, 'Model request'),
      h('span', { class: 'detail usage' }, `${event.messages} messages · waiting…`),
      h('span', { class: 'retries' }),
    );
    turn.body.append(turn.request);
  }

  private stream(event: Of<'text_delta'> | Of<'thinking_delta'>): void {
    const turn = this.turn(event.step);
    if (!turn.streaming) {
      turn.streaming = h('pre', { class: 'streaming' });
      turn.body.append(h('li', { class: 'event answer live' }, turn.streaming));
    }
    turn.streaming.append(event.delta);
  }

  private answer(event: Of<'assistant_message'>): void {
    const turn = this.turn(event.step);
    const m = event.message;
    if (turn.request) {
      turn.request.classList.remove('pending');
      const tokens = `${m.usage.input} in · ${m.usage.output} out${m.usage.cacheRead ? ` · ${m.usage.cacheRead} cached` : ''}`;
      turn.request
        .querySelector('.usage')
        ?.replaceChildren(
          `${tokens} · ${usd(m.usage.cost?.total)} · ${duration(turn.requestAt === undefined ? undefined : event.at - turn.requestAt)}${m.stopReason === 'error' ? ` · failed: ${m.error?.message ?? ''}` : ''}`,
        );
    }
    turn.streaming?.parentElement?.remove();
    turn.streaming = undefined;
    const text = m.content.map((c) => (c.type === 'text' ? c.text : '')).join('');
    if (text) turn.body.append(h('li', { class: 'event answer' }, h('pre', { class: 'text' }, text)));
    if (m.refusal) turn.body.append(h('li', { class: 'event answer refusal' }, h('pre', { class: 'text' }, m.refusal)));
  }

  private toolStarted(event: Of<'tool_started'>): void {
    const early = this.tools.get(event.toolCallId);
    if (early) {
      // Drawn when its sub-agent started: it moves to its turn, with its arguments before the child.
      early.item.querySelector('.label')?.replaceChildren(`Tool ${event.name}`);
      early.item
        .querySelector('.head')
        ?.after(
          h('details', {}, h('summary', {}, brief(event.arguments)), h('pre', { class: 'args' }, JSON.stringify(event.arguments, null, 2))),
        );
      this.turn(event.step).body.append(early.item);
      return;
    }
    const item = h(
      'li',
      { class: 'event tool running', 'data-call': event.toolCallId },
      h(
        'div',
        { class: 'head' },
        h('span', { class: 'label' }, `Tool ${event.name}`),
        h('span', { class: 'status' }, 'running'),
        h('span', { class: 'progress' }),
      ),
      h('details', {}, h('summary', {}, brief(event.arguments)), h('pre', { class: 'args' }, JSON.stringify(event.arguments, null, 2))),
    );
    this.tools.set(event.toolCallId, { item, startedAt: event.at });
    this.turn(event.step).body.append(item);
  }

  private toolFinished(event: Of<'tool_finished'>): void {
    let tool = this.tools.get(event.toolCallId);
    if (!tool) {
      // Decided without running (denied, refused): no tool_started came.
      const item = h(
        'li',
        { class: 'event tool', 'data-call': event.toolCallId },
        h('div', { class: 'head' }, h('span', { class: 'label' }, `Tool ${event.name}`), h('span', { class: 'status' })),
      );
      tool = { item, startedAt: event.at };
      this.turn(event.step).body.append(item);
    }
    const failed = event.result.isError === true;
    tool.item.classList.remove('running');
    tool.item.classList.add(failed ? 'failed' : 'ok');
    const status =
      event.outcome === 'unknown' ? 'outcome unknown' : failed ? `error${event.errorCode ? ` (${event.errorCode})` : ''}` : 'done';
    tool.item.querySelector('.status')?.replaceChildren(`${status} · ${duration(event.durationMs)}`);
    const text = event.result.content.map((c) => (c.type === 'text' ? c.text : `[${c.type}]`)).join('\n');
    tool.item.append(
      h('details', { class: 'result', open: failed }, h('summary', {}, brief(text, 200) || '(no output)'), h('pre', {}, text)),
    );
  }
}

function isDelta(event: RunEvent): boolean {
  return (
    event.type === 'text_delta' || event.type === 'thinking_delta' || event.type === 'tool_call_delta' || event.type === 'tool_progress'
  );
}

function textOf(content: string | ReadonlyArray<{ type: string; text?: string }>): string {
  return typeof content === 'string' ? content : content.map((c) => (c.type === 'text' ? (c.text ?? '') : `[${c.type}]`)).join(' ');
}

/** The event types a run's stream sends that the page listens for (a timeline draws them). */
export const STREAM_EVENT_TYPES = [
  'run_started',
  'run_resumed',
  'state_changed',
  'model_request',
  'text_delta',
  'thinking_delta',
  'tool_call_delta',
  'assistant_message',
  'tool_started',
  'tool_progress',
  'tool_finished',
  'approval_requested',
  'permission_decided',
  'approval_decided',
  'retry_scheduled',
  'message_injected',
  'context_compacted',
  'run_finished',
] as const satisfies ReadonlyArray<RunEvent['type']>;

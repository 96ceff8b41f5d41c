/**
 * Sub-agent runs nested in their parent's timeline, each under the tool call that started
 * it: a collapsible block whose summary line (agent, status, steps, tokens, cost) stays
 * live, holding the child's own timeline, which holds its children in turn. A child is a
 * run of its own: its events come from its own stream, its past from its own log. A parent
 * hears of a child from its detail's `children` (the log) and from its stream's
 * `child_run` notices (live).
 */
import type { RunEvent } from '../../events.js';
import { api, type ChildRun, type RunDetail } from './api.js';
import { h, usd } from './dom.js';
import { STREAM_EVENT_TYPES, Timeline } from './timeline.js';

/** What a parent knows of a child when it hears of it. */
export interface ChildNotice {
  runId: string;
  parentToolCallId: string | null;
  agent: string | null;
  /** Its record's status, when it comes from a run's detail (a child that had ended is drawn folded). */
  status?: string;
}

/**
 * The child streams open at once. A browser opens at most six connections to one server
 * over HTTP/1.1: the parent's stream and the page's requests need theirs, so children past
 * this many wait for a slot (their summary says so) and follow once one ends.
 */
const MAX_CHILD_STREAMS = 3;
let open = 0;
const waiting: Array<() => void> = [];

function takeSlot(start: () => void): void {
  if (open < MAX_CHILD_STREAMS) {
    open++;
    start();
  } else waiting.push(start);
}

function giveSlot(): void {
  const next = waiting.shift();
  if (next) next();
  else open = Math.max(0, open - 1);
}

const ENDED = new Set(['done', 'failed', 'stopped', 'aborted']);

/** The children of one run, nested in its timeline. */
export class Children {
  private readonly views = new Map<string, ChildRunView>();

  constructor(private readonly timeline: Timeline) {}

  /** Nests a child (once: a child heard of twice, from the log and live, is one). */
  add(child: ChildNotice): void {
    if (this.views.has(child.runId)) return;
    const view = new ChildRunView(child);
    this.views.set(child.runId, view);
    this.timeline.nest(child.parentToolCallId, view.element, `Sub-agent ${child.agent ?? ''}`.trim());
    view.follow();
  }

  addAll(children: readonly ChildRun[]): void {
    for (const child of children)
      this.add({ runId: child.id, parentToolCallId: child.parentToolCallId, agent: child.agent, status: child.status });
  }

  /** Follows again every child that has not ended (the tree continues: a decision, a resume). */
  refollow(): void {
    for (const view of this.views.values()) view.refollow();
  }

  close(): void {
    for (const view of this.views.values()) view.close();
  }
}

/** One child run: its summary line and its timeline, following its stream. */
class ChildRunView {
  readonly element: HTMLDetailsElement;
  private readonly timeline = new Timeline();
  private readonly children = new Children(this.timeline);
  private readonly line = h('span', { class: 'child-line' });
  private readonly badge = h('span', { class: 'badge running' }, 'waiting');
  private source: EventSource | undefined;
  private holdsSlot = false;
  private closed = false;
  private agent: string | null;
  private status = 'running';
  private steps = 0;
  private tokens = 0;
  private cost: number | undefined;

  constructor(private readonly child: ChildNotice) {
    this.agent = child.agent;
    // Open while it works, so a live child is seen working; a finished one is one line until opened.
    this.element = h(
      'details',
      { class: 'child-run', 'data-run': child.runId, open: child.status === undefined || !ENDED.has(child.status) },
      h(
        'summary',
        {},
        h('span', { class: 'label' }, `↳ sub-agent ${child.agent ?? ''}`.trimEnd()),
        ' ',
        this.badge,
        ' ',
        this.line,
        ' ',
        h('a', { href: `#/runs/${encodeURIComponent(child.runId)}`, class: 'child-link' }, 'open'),
      ),
      this.timeline.element,
    );
    this.draw();
  }

  /** Reads the child's detail (its own children, from its log), then follows its stream from the start. */
  follow(): void {
    void api<RunDetail>(`v1/runs/${encodeURIComponent(this.child.runId)}`)
      .then((detail) => {
        if (this.closed) return;
        if (ENDED.has(detail.record.status) && this.timeline.lastSeq < 0) this.element.open = false;
        this.children.addAll(detail.children);
        this.stream();
      })
      .catch(() => {
        // Its record may not be readable yet (or any more): its stream says the same, or nothing.
        if (!this.closed) this.stream();
      });
  }

  refollow(): void {
    if (this.closed || ENDED.has(this.status) || this.source) return;
    this.stream();
    this.children.refollow();
  }

  close(): void {
    this.closed = true;
    this.children.close();
    this.stop();
  }

  private stream(): void {
    if (this.source || this.closed) return;
    takeSlot(() => {
      if (this.closed) return giveSlot();
      this.holdsSlot = true;
      const es = new EventSource(`v1/runs/${encodeURIComponent(this.child.runId)}/events?after=${this.timeline.lastSeq}`);
      this.source = es;
      this.draw();
      const onEvent = (message: MessageEvent<string>): void => this.add(JSON.parse(message.data) as RunEvent);
      for (const type of CHILD_EVENT_TYPES) es.addEventListener(type, onEvent as EventListener);
      es.addEventListener('child_run', ((message: MessageEvent<string>) =>
        this.children.add(JSON.parse(message.data) as ChildNotice)) as EventListener);
      es.onerror = () => {
        // Ended for good (204, or gone); otherwise the EventSource reconnects itself.
        if (es.readyState === EventSource.CLOSED) this.stop();
      };
    });
  }

  private add(event: RunEvent): void {
    const before = this.timeline.lastSeq;
    this.timeline.add(event);
    if (event.type === 'text_delta' || event.type === 'thinking_delta') return;
    if (this.timeline.lastSeq === before) return;
    if (event.type === 'run_started') {
      this.agent ??= event.agent ?? null;
      this.status = 'running';
    } else if (event.type === 'run_resumed') this.status = 'running';
    else if (event.type === 'assistant_message') {
      this.steps++;
      this.tokens += event.message.usage.total;
      const cost = event.message.usage.cost?.total;
      if (cost !== undefined) this.cost = (this.cost ?? 0) + cost;
    } else if (event.type === 'run_finished') {
      this.status = event.status;
      // The run's own totals also count what its children spent.
      this.steps = event.result.totals.steps;
      this.tokens = event.result.totals.usage.total;
      this.cost = event.result.totals.usage.cost?.total;
      this.stop();
    }
    this.draw();
  }

  private draw(): void {
    const waitingForSlot = this.source === undefined && this.timeline.lastSeq < 0;
    this.badge.className = `badge ${this.status}`;
    this.badge.textContent = waitingForSlot && this.status === 'running' ? 'waiting' : this.status;
    this.line.textContent = `${this.steps} ${this.steps === 1 ? 'step' : 'steps'} · ${this.tokens} tokens · ${usd(this.cost)}`;
    this.element.dataset.status = this.status;
  }

  private stop(): void {
    this.source?.close();
    this.source = undefined;
    if (this.holdsSlot) {
      this.holdsSlot = false;
      giveSlot();
    }
  }
}

/** The event types a child's stream sends that its timeline draws (not its states, nor the deltas of its calls). */
const CHILD_EVENT_TYPES = STREAM_EVENT_TYPES.filter((type) => type !== 'state_changed' && type !== 'tool_call_delta');

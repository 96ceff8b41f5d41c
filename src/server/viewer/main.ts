/**
 * The run viewer: `#/` lists the runs, `#/runs/<id>` draws one as a timeline, live while
 * it works (its server-sent events, over an EventSource that rides on the session cookie),
 * with approve / deny for a waiting call and a box to steer; its sub-agents' runs nested
 * in the calls that started them (child-run.ts). Routes live in the fragment,
 * so the server serves one page and the history holds run ids only.
 */
import type { RunEvent } from '../../events.js';
import { api, ApiFailure, type PendingApproval, type RunDetail, type RunSummary } from './api.js';
import { brief, duration, h, usd, when } from './dom.js';
import { Children, type ChildNotice } from './child-run.js';
import { STREAM_EVENT_TYPES, Timeline } from './timeline.js';

const STATUSES = ['running', 'paused', 'done', 'stopped', 'failed', 'aborted'];
const main = document.getElementById('main') as HTMLElement;
let leave: (() => void) | undefined;

function route(): void {
  leave?.();
  leave = undefined;
  const match = /^#\/runs\/([^/?]+)/.exec(location.hash);
  if (match) leave = runPage(decodeURIComponent(match[1] as string));
  else leave = listPage(new URLSearchParams(location.hash.split('?')[1] ?? '').get('status') ?? '');
}

/** The run list, filtered by status, refreshed every few seconds. */
function listPage(status: string): () => void {
  document.title = 'rein · runs';
  const filter = h(
    'select',
    { id: 'status-filter', 'aria-label': 'Filter by status' },
    h('option', { value: '' }, 'every status'),
    ...STATUSES.map((s) => h('option', { value: s, selected: s === status }, s)),
  );
  filter.addEventListener('change', () => (location.hash = filter.value ? `#/?status=${filter.value}` : '#/'));
  const body = h('tbody');
  const more = h('button', { type: 'button', class: 'more', hidden: true }, 'Older runs');
  const note = h('p', { class: 'note' });
  main.replaceChildren(
    h('div', { class: 'bar' }, h('h1', {}, 'Runs'), h('label', {}, 'Status ', filter)),
    h(
      'table',
      { class: 'runs' },
      h(
        'thead',
        {},
        h('tr', {}, ...['Status', 'Agent', 'Task', 'Model', 'Cost', 'Duration', 'Updated'].map((c) => h('th', { scope: 'col' }, c))),
      ),
      body,
    ),
    more,
    note,
  );
  let cursor: string | null = null;
  let stopped = false;
  const row = (run: RunSummary) =>
    h(
      'tr',
      { class: `run ${run.status}`, 'data-run': run.id },
      h(
        'td',
        { 'data-label': 'Status' },
        h('span', { class: `badge ${run.status}` }, run.status),
        run.live ? h('span', { class: 'live-dot', title: 'live' }) : null,
      ),
      h('td', { 'data-label': 'Agent' }, run.agent ?? '—'),
      h(
        'td',
        { 'data-label': 'Task', class: 'task' },
        // A sub-agent's run is listed too, marked as one (its parent's page nests it).
        run.parentRunId ? h('span', { class: 'sub-mark', title: `sub-agent of ${run.parentRunId}` }, '↳ ') : null,
        h('a', { href: `#/runs/${encodeURIComponent(run.id)}` }, run.task ?? run.id),
      ),
      h('td', { 'data-label': 'Model' }, run.model),
      h('td', { 'data-label': 'Cost' }, usd(run.cost)),
      h('td', { 'data-label': 'Duration' }, duration(run.durationMs)),
      h('td', { 'data-label': 'Updated' }, when(run.updatedAt)),
    );
  const load = async (append: boolean): Promise<void> => {
    const query = new URLSearchParams({ limit: '50' });
    if (status) query.set('status', status);
    if (append && cursor) query.set('cursor', cursor);
    try {
      const page = await api<{ runs: RunSummary[]; nextCursor: string | null }>(`v1/runs?${query}`);
      if (stopped) return;
      if (!append) body.replaceChildren();
      body.append(...page.runs.map(row));
      cursor = page.nextCursor;
      more.hidden = cursor === null;
      note.textContent = body.children.length === 0 ? 'No runs yet. Start one with POST /v1/runs (docs/server.md).' : '';
    } catch (error) {
      note.textContent = `Could not load the runs: ${(error as Error).message}`;
    }
  };
  more.addEventListener('click', () => void load(true));
  void load(false);
  // Refreshes the first page only: a reader paging back keeps what they loaded.
  const timer = setInterval(() => (cursor === null || body.children.length <= 50 ? void load(false) : undefined), 3000);
  return () => {
    stopped = true;
    clearInterval(timer);
  };
}

/** One run: its header, the calls waiting for a person, a steering box, and its timeline, live. */
function runPage(runId: string): () => void {
  document.title = `rein · ${runId}`;
  const timeline = new Timeline();
  const children = new Children(timeline);
  const header = h('div', { class: 'run-header' });
  const approvals = h('section', { class: 'approvals', hidden: true, 'aria-label': 'Waiting for approval' });
  const steerInput = h('textarea', {
    id: 'steer-text',
    rows: 2,
    placeholder: 'A message the agent reads before its next model call',
    'aria-label': 'Steer the run',
  });
  const steerButton = h('button', { type: 'submit' }, 'Steer');
  const steerNote = h('span', { class: 'note', role: 'status' });
  const steer = h('form', { class: 'steer', hidden: true }, steerInput, h('div', { class: 'row' }, steerButton, steerNote));
  const abortButton = h('button', { type: 'button', class: 'danger', hidden: true }, 'Abort');
  const status = h('p', { class: 'note', role: 'status' });
  // The log shows a step once it is durable (at the end of a model request or a tool call): meanwhile, say the run works.
  const working = h('p', { class: 'working', hidden: true }, 'Working…');
  const crumbs = h('p', { class: 'crumbs' }, h('a', { href: '#/' }, '← Runs'));
  main.replaceChildren(crumbs, header, approvals, h('div', { class: 'actions' }, abortButton), steer, status, timeline.element, working);

  let source: EventSource | undefined;
  let left = false;
  let detail: RunDetail | undefined;

  const refresh = async (): Promise<void> => {
    try {
      detail = await api<RunDetail>(`v1/runs/${encodeURIComponent(runId)}`);
    } catch (error) {
      status.textContent =
        error instanceof ApiFailure && error.status === 404
          ? `There is no run ${runId}.`
          : `Could not load the run: ${(error as Error).message}`;
      return;
    }
    if (left) return;
    const r = detail.record;
    children.addAll(detail.children);
    if (r.parentRunId && crumbs.childElementCount === 1)
      crumbs.append(' · ', h('a', { href: `#/runs/${encodeURIComponent(r.parentRunId)}`, class: 'parent-link' }, '↑ Parent run'));
    header.replaceChildren(
      h('h1', {}, r.task ?? r.id),
      h(
        'dl',
        { class: 'facts' },
        ...fact('Status', h('span', { class: `badge ${r.status}`, id: 'run-status' }, r.status), r.reason ? ` (${r.reason})` : ''),
        ...fact('Agent', r.agent ?? '—'),
        ...fact('Model', r.model),
        ...fact('Steps', String(detail.totals.steps)),
        ...fact('Tokens', String(detail.totals.usage.total)),
        ...fact('Cost', usd(detail.cost)),
        ...fact('Duration', duration(detail.totals.durationMs)),
        ...fact('Run', h('code', {}, r.id)),
      ),
      ...(detail.result?.error ? [h('p', { class: 'error' }, detail.result.error.message)] : []),
      ...(detail.recoveryError ? [h('p', { class: 'error' }, `Not continued after a restart: ${detail.recoveryError}`)] : []),
    );
    showApprovals(detail.pendingApprovals);
    const running = r.status === 'running' && r.live;
    steer.hidden = !running;
    working.hidden = !running;
    abortButton.hidden = !(running || r.status === 'paused');
  };

  const showApprovals = (pending: PendingApproval[]): void => {
    approvals.hidden = pending.length === 0;
    approvals.replaceChildren(
      h('h2', {}, 'Waiting for approval'),
      ...pending.map((call) => {
        const reason = h('input', {
          type: 'text',
          placeholder: "Reason (optional; a denial's reason reaches the model)",
          'aria-label': `Reason for ${call.name}`,
        });
        const decide = (approved: boolean) => async () => {
          buttons.forEach((b) => (b.disabled = true));
          try {
            await api(`v1/runs/${encodeURIComponent(runId)}/approvals`, {
              method: 'POST',
              body: {
                toolCallId: call.toolCallId,
                approved,
                argumentsHash: call.argumentsHash,
                ...(reason.value ? { reason: reason.value } : {}),
              },
            });
            approvals.hidden = true;
            follow();
          } catch (error) {
            status.textContent = `Could not decide: ${(error as Error).message}`;
            buttons.forEach((b) => (b.disabled = false));
          }
          void refresh();
        };
        const buttons = [
          h('button', { type: 'button', class: 'approve', onclick: decide(true) }, 'Approve'),
          h('button', { type: 'button', class: 'deny danger', onclick: decide(false) }, 'Deny'),
        ];
        return h(
          'article',
          { class: 'pending', 'data-call': call.toolCallId, 'data-run': call.runId ?? runId },
          h('h3', {}, call.name),
          call.runId ? h('p', { class: 'meta sub-call' }, `In sub-agent run ${call.runId}`) : null,
          call.rule ? h('p', { class: 'meta' }, `Asked by: ${call.rule}`) : null,
          h('pre', { class: 'args' }, JSON.stringify(call.arguments, null, 2)),
          reason,
          h('div', { class: 'row' }, ...buttons),
        );
      }),
    );
  };

  /** Opens (or reopens) the event stream after the last event drawn. */
  const follow = (): void => {
    source?.close();
    const es = new EventSource(`v1/runs/${encodeURIComponent(runId)}/events?after=${timeline.lastSeq}`);
    source = es;
    const onEvent = (message: MessageEvent<string>): void => {
      const event = JSON.parse(message.data) as RunEvent;
      timeline.add(event);
      if (event.type === 'run_finished') {
        // This drive has ended: the stream ends too (a decision or a resume opens a new one).
        es.close();
        working.hidden = true;
        void refresh();
      } else if (event.type === 'run_resumed' || event.type === 'run_started') void refresh();
    };
    for (const type of STREAM_EVENT_TYPES) es.addEventListener(type, onEvent as EventListener);
    // A sub-agent started: nested under its call, following its own stream.
    es.addEventListener('child_run', ((message: MessageEvent<string>) =>
      children.add(JSON.parse(message.data) as ChildNotice)) as EventListener);
    children.refollow();
    es.onerror = () => {
      // The server ended the stream for good (204) or is gone: EventSource says CLOSED; else it reconnects itself with Last-Event-ID.
      if (es.readyState === EventSource.CLOSED && source === es) status.textContent = 'Not live: the stream has ended.';
    };
  };

  steer.addEventListener('submit', (event) => {
    event.preventDefault();
    const text = steerInput.value.trim();
    if (!text) return;
    steerButton.disabled = true;
    api(`v1/runs/${encodeURIComponent(runId)}/messages`, { method: 'POST', body: { kind: 'steer', text } })
      .then(() => {
        steerInput.value = '';
        steerNote.textContent = `Queued: ${brief(text, 60)}`;
      })
      .catch((error: Error) => (steerNote.textContent = `Not sent: ${error.message}`))
      .finally(() => (steerButton.disabled = false));
  });
  abortButton.addEventListener('click', () => {
    abortButton.disabled = true;
    api(`v1/runs/${encodeURIComponent(runId)}/abort`, { method: 'POST' })
      .catch((error: Error) => (status.textContent = `Could not abort: ${error.message}`))
      .finally(() => {
        abortButton.disabled = false;
        void refresh();
      });
  });

  void refresh().then(() => {
    if (!left) follow();
  });
  return () => {
    left = true;
    source?.close();
    children.close();
  };
}

function fact(name: string, ...value: Array<Node | string>): Node[] {
  return [h('dt', {}, name), h('dd', {}, ...value)];
}

/** Every event type a stream sends (an EventSource hears named events only by name). */

document.getElementById('sign-out')?.addEventListener('click', () => {
  void fetch('v1/session', { method: 'DELETE', credentials: 'same-origin' }).finally(() => location.reload());
});
window.addEventListener('hashchange', route);
route();

/**
 * One client's server-sent event stream of a run: the stored events after `after` (each
 * with `id: <seq>` and `event: <type>`), then the live ones as they become durable, with
 * the deltas in between (no id); keep-alive comments while nothing happens; the end after
 * `run_finished`; a `child_run` notice when a sub-agent of the run starts. A catch-up from the log is read as the client takes it; what arrives
 * live waits in a bounded buffer, and a client that lets it fill is dropped (it may
 * reconnect with its Last-Event-ID): a slow client never slows the run.
 */
import { DELTA_EVENT_TYPES, type RunEvent } from '../events.js';
import type { RunStore } from '../store/types.js';
import type { ChildRunNotice, FeedListener, RunFeeds } from './feed.js';

/** Settings of every stream. */
export interface StreamSettings {
  /** Bytes of live events a client may have unread before it is dropped (default 1 MiB). */
  maxBufferBytes: number;
  /** How often a stream that sent nothing gets a comment, so proxies keep it open (ms, default 15 000). */
  keepAliveMs: number;
  /** How often the log of a run nobody here drives is read again for new events (ms, default 1000). */
  pollMs: number;
}

const encoder = new TextEncoder();

/** An event as one SSE frame: stored events carry their seq as the id, deltas none. */
export function sseFrame(event: RunEvent): Uint8Array {
  const id = DELTA_EVENT_TYPES.has(event.type) ? '' : `id: ${event.seq}\n`;
  return encoder.encode(`${id}event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`);
}

const KEEP_ALIVE = encoder.encode(': keep-alive\n\n');

/** The open streams of a server: kept to send keep-alives and to end them all when it stops. */
export class StreamRegistry {
  private readonly open = new Set<RunEventStream>();
  private timer: NodeJS.Timeout | undefined;

  constructor(readonly settings: StreamSettings) {}

  add(stream: RunEventStream): void {
    this.open.add(stream);
    if (!this.timer) {
      this.timer = setInterval(
        () => {
          for (const s of this.open) s.keepAlive();
        },
        Math.max(10, Math.floor(this.settings.keepAliveMs / 2)),
      );
      this.timer.unref();
    }
  }

  remove(stream: RunEventStream): void {
    this.open.delete(stream);
    if (this.open.size === 0 && this.timer) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
  }

  /** Ends every stream cleanly (the server stops): clients reconnect with their Last-Event-ID. */
  endAll(comment: string): void {
    for (const s of [...this.open]) s.end(comment);
  }

  get size(): number {
    return this.open.size;
  }
}

/** The stream of one client, from the event after `after`. */
export class RunEventStream implements FeedListener {
  readonly body: ReadableStream<Uint8Array>;
  /** The next stored seq this client has not been sent (or queued). */
  private next: number;
  /** Stored events read from the log, sent as the client takes them. */
  private replay: RunEvent[] = [];
  private replayAt = 0;
  /** Live frames (stored and deltas) waiting for the client. */
  private queue: Uint8Array[] = [];
  private queuedBytes = 0;
  /** Stored events heard while the log was being read (sorted out once it has been). */
  private held: RunEvent[] | undefined;
  private reading: Promise<void> | undefined;
  private wake: (() => void) | undefined;
  private controller!: ReadableStreamDefaultController<Uint8Array>;
  private state: 'open' | 'ending' | 'closed' = 'open';
  /** The last stored event queued was a run_finished and nothing newer is known. */
  private atEnd = false;
  private lastWrite = Date.now();
  private pollTimer: NodeJS.Timeout | undefined;
  private unlisten: (() => void) | undefined;

  constructor(
    private readonly runId: string,
    after: number,
    private readonly store: RunStore,
    private readonly feeds: RunFeeds,
    private readonly registry: StreamRegistry,
    /** Cuts the client's connection (the Node adapter's socket); absent: the body errors instead. */
    private readonly cut?: () => void,
  ) {
    this.next = after + 1;
    this.body = new ReadableStream<Uint8Array>(
      {
        start: (controller) => {
          this.controller = controller;
          // A first comment sends the headers at once and tells a proxy the stream is alive.
          controller.enqueue(encoder.encode(': stream of run events\n\n'));
        },
        pull: () => this.pull(),
        cancel: () => this.close(),
      },
      { highWaterMark: 0 },
    );
    registry.add(this);
    // Listening starts before the log is read: whatever becomes durable meanwhile is heard.
    this.unlisten = feeds.listen(runId, this);
    this.catchUp();
  }

  stored(events: readonly RunEvent[]): void {
    if (this.state !== 'open') return;
    if (this.held) {
      this.held.push(...events);
      return;
    }
    for (const event of events) {
      if (event.seq < this.next) continue;
      if (event.seq > this.next) {
        // Written by another process between two of ours: read the log again from here.
        this.catchUp();
        return;
      }
      this.enqueue(event);
    }
  }

  delta(event: RunEvent): void {
    if (this.state !== 'open' || this.held || this.replayAt < this.replay.length) return;
    this.push(sseFrame(event));
  }

  child(child: ChildRunNotice): void {
    // No id: it is no event of this run's log (a client reading the log later finds the child in the run's `children`).
    if (this.state === 'open') this.push(encoder.encode(`event: child_run\ndata: ${JSON.stringify(child)}\n\n`));
  }

  idle(): void {
    if (this.atEnd && this.replayAt >= this.replay.length) this.finish();
    else if (this.state === 'open') this.schedulePoll();
  }

  /** A keep-alive comment when the stream has been quiet. */
  keepAlive(): void {
    if (this.state !== 'open' || Date.now() - this.lastWrite < this.registry.settings.keepAliveMs) return;
    this.push(KEEP_ALIVE);
  }

  /** Ends the stream cleanly after `comment` (the server stops). */
  end(comment: string): void {
    if (this.state !== 'open') return;
    this.queue.push(encoder.encode(`: ${comment}\n\n`));
    this.finish();
  }

  /** Reads the log from `next`; stored events heard meanwhile are held and sorted out after. */
  private catchUp(): void {
    if (this.reading || this.state !== 'open') return;
    this.held ??= [];
    this.reading = this.store.loadEvents(this.runId, this.next).then(
      (events) => {
        if (this.state !== 'open') return;
        const fresh = events.filter((e) => e.seq >= this.next);
        if (fresh.length > 0) {
          this.replay = this.replayAt < this.replay.length ? [...this.replay.slice(this.replayAt), ...fresh] : fresh;
          this.replayAt = 0;
          this.next = (fresh.at(-1) as RunEvent).seq + 1;
          this.atEnd = fresh.at(-1)?.type === 'run_finished';
        }
        const held = this.held ?? [];
        this.held = undefined;
        this.reading = undefined;
        this.stored(held);
        this.afterRead();
      },
      () => {
        // The run's log cannot be read (the store closed as the server stops): end here.
        this.reading = undefined;
        this.held = undefined;
        this.finish();
      },
    );
  }

  private afterRead(): void {
    this.wake?.();
    if (this.feeds.isDriven(this.runId)) return;
    // The log ends with a run_finished and nobody continues the run: the stream ends once
    // the client has what was read. Otherwise (it crashed, another process drives it) look again later.
    if (this.atEnd) this.finish();
    else this.schedulePoll();
  }

  /** A run nobody here drives (it crashed, or another process drives it): its log is read again later. */
  private schedulePoll(): void {
    if (this.pollTimer || this.state !== 'open') return;
    this.pollTimer = setTimeout(() => {
      this.pollTimer = undefined;
      if (this.state === 'open' && !this.feeds.isDriven(this.runId)) this.catchUp();
    }, this.registry.settings.pollMs);
    this.pollTimer.unref();
  }

  private enqueue(event: RunEvent): void {
    this.next = event.seq + 1;
    this.atEnd = event.type === 'run_finished';
    this.push(sseFrame(event));
    // The end of a drive: nothing follows unless the run is continued, and then it is a new stream.
    if (this.atEnd && !this.feeds.isDriven(this.runId)) this.finish();
  }

  private push(frame: Uint8Array): void {
    if (this.state === 'closed') return;
    this.queue.push(frame);
    this.queuedBytes += frame.byteLength;
    if (this.queuedBytes > this.registry.settings.maxBufferBytes) {
      // The client does not keep up: dropped, it reconnects from its Last-Event-ID.
      this.drop();
      return;
    }
    this.wake?.();
  }

  private async pull(): Promise<void> {
    for (;;) {
      if (this.state === 'closed') return;
      if (this.replayAt < this.replay.length) {
        const event = this.replay[this.replayAt++] as RunEvent;
        if (this.replayAt === this.replay.length) this.replay = [];
        if (this.replay.length === 0) this.replayAt = 0;
        return this.write(sseFrame(event));
      }
      const frame = this.queue.shift();
      if (frame) {
        this.queuedBytes -= frame.byteLength;
        return this.write(frame);
      }
      if (this.state === 'ending') {
        this.close();
        this.controller.close();
        return;
      }
      await new Promise<void>((resolve) => (this.wake = resolve));
      this.wake = undefined;
    }
  }

  private write(frame: Uint8Array): void {
    this.lastWrite = Date.now();
    this.controller.enqueue(frame);
  }

  private finish(): void {
    if (this.state !== 'open') return;
    this.state = 'ending';
    this.wake?.();
  }

  private drop(): void {
    if (this.state === 'closed') return;
    this.close();
    if (this.cut) this.cut();
    else this.controller.error(new Error('the client did not keep up with the run'));
  }

  private close(): void {
    if (this.state === 'closed') return;
    this.state = 'closed';
    this.queue = [];
    this.replay = [];
    if (this.pollTimer) clearTimeout(this.pollTimer);
    this.unlisten?.();
    this.registry.remove(this);
    this.wake?.();
  }
}

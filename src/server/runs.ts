/**
 * The runs a server drives: starting them from a request, steering, aborting, approving
 * and resuming them, continuing those a crash or a stop left running, and stopping them
 * so that the next start continues them. The rules of a run are the library's (durable
 * runs, leases, approvals bound to a call and its arguments); this only connects them to
 * requests.
 */
import type { NumericLimit, RunEvent, RunLimits } from '../events.js';
import { newRunId } from '../ids.js';
import type { Agent } from '../loop/agent.js';
import type { RunHandle } from '../loop/handle.js';
import { checkedAnswer, waitingQuestionsInTree, type ElicitationAnswer, type WaitingQuestion } from '../loop/elicitation-answer.js';
import type { RunRecord, RunStore } from '../store/types.js';
import { DELTA_EVENT_TYPES } from '../events.js';
import { ApiError } from './api-error.js';
import type { GatedStore, RunFeeds } from './feed.js';
import { servedMetadata, type AgentCatalog, type QueueMode } from './types.js';

/** The longest task text a run's record keeps (for the run list). */
const TASK_PREVIEW = 200;

/** A run driven by this server. */
interface LiveRun {
  handle: RunHandle;
  settled: Promise<unknown>;
}

/** What `POST /v1/runs` asks for (validated by its schema). */
export interface StartRequest {
  agent?: string;
  input: string;
  limits?: Partial<RunLimits>;
}

export class RunService {
  private readonly live = new Map<string, LiveRun>();
  /** Runs this server could not continue after a restart, and why. */
  readonly recoveryErrors = new Map<string, string>();
  private accepting = true;

  constructor(
    /** What agents write to (its gate closes when the server stops). */
    private readonly store: GatedStore,
    /** What the server reads from (stays open until the very end). */
    readonly reader: RunStore,
    private readonly agents: AgentCatalog,
    private readonly feeds: RunFeeds,
    private readonly warn: (line: string) => void,
    /** Set when the server only queues runs for the workers (rein serve --no-execute). */
    private readonly queueMode?: QueueMode,
  ) {}

  /** Whether this server drives `runId` now. */
  isLive(runId: string): boolean {
    return this.live.has(runId);
  }

  /** Starts a run of an agent on disk; resolves once it is in the store. */
  async start(request: StartRequest): Promise<{ runId: string; status: string }> {
    this.checkAccepting();
    const name = request.agent ?? 'default';
    const agents = await this.agents.list();
    const served = agents.find((a) => a.name === name);
    if (!served) {
      throw new ApiError(
        400,
        'invalid_request',
        `agent: there is no agent "${name}"; the agents are ${agents.map((a) => a.name).join(', ')} (.rein/agents/<name>.md files; GET /v1/agents lists them)`,
        'agent',
      );
    }
    const limits = request.limits ?? {};
    for (const [key, value] of Object.entries(limits) as Array<[NumericLimit, number]>) {
      const ceiling = served.limits[key];
      if (ceiling !== undefined && value > ceiling) {
        throw new ApiError(
          400,
          'invalid_request',
          `limits.${key} ${value} is more than agent "${name}" allows (${ceiling}): a request may only lower its agent's limits (set them in its file)`,
          `limits.${key}`,
        );
      }
    }
    let agent: Agent;
    try {
      agent = await this.agents.forNewRun({ name, limits, task: request.input.slice(0, TASK_PREVIEW), store: this.store });
    } catch (error) {
      throw new ApiError(500, 'internal', `agent "${name}" cannot be built: ${(error as Error).message}`);
    }
    const runId = newRunId();
    if (this.queueMode) {
      // Stored (run_started) and queued in one transaction; a worker drives it, and its stream reads the log.
      try {
        await agent.submit(request.input, { runId, agent: name });
      } catch (error) {
        throw new ApiError(500, 'internal', `run of agent "${name}" cannot be queued: ${(error as Error).message}`);
      }
      return { runId, status: 'running' };
    }
    // The answer waits until the run's first event is durable: a run a client was told of
    // survives a crash right after (it is continued), and its stream can be read at once.
    const stored = this.firstStored(runId);
    const first = this.track(runId, agent.run(request.input, { runId }));
    const event = await Promise.race([stored.promise, first.then((e) => (e.type === 'run_finished' ? e : stored.promise))]);
    stored.cancel();
    return this.started(runId, event ?? (await first));
  }

  /** Resolves (with nothing) once the first event of `runId` is in the store. */
  private firstStored(runId: string): { promise: Promise<undefined>; cancel(): void } {
    let resolve!: (value: undefined) => void;
    const promise = new Promise<undefined>((r) => (resolve = r));
    const unlisten = this.feeds.listen(runId, {
      stored: () => {
        unlisten();
        resolve(undefined);
      },
      delta: () => undefined,
      idle: () => undefined,
    });
    return { promise, cancel: unlisten };
  }

  /** Queues a steering message or a follow-up for a run this server drives. */
  async message(runId: string, kind: 'steer' | 'follow_up', text: string): Promise<{ runId: string; status: string }> {
    const live = this.live.get(runId);
    if (!live) throw await this.notDriven(runId, 'takes messages');
    if (kind === 'steer') live.handle.steer(text);
    else live.handle.followUp(text);
    return { runId, status: 'running' };
  }

  /**
   * Aborts a run: one this server drives stops (its tools too) and is logged `aborted`; a
   * paused one is ended as aborted from its log. Resolves with its status once it has ended.
   */
  async abort(runId: string): Promise<{ runId: string; status: string }> {
    const live = this.live.get(runId);
    if (live) {
      live.handle.abort('aborted through the API');
      const result = await live.handle;
      return { runId, status: result.status };
    }
    const record = await this.record(runId);
    if (record.status !== 'paused') throw await this.notDriven(runId, 'can be aborted', record);
    // Its waiting calls are refused (they never run), and it goes on with its signal already
    // aborted: it ends at once, as aborted, with a valid history.
    const agent = await this.agentFor(record);
    const first = this.track(
      runId,
      agent.approve(runId, { approved: false, reason: 'the run was aborted', signal: AbortSignal.abort('aborted through the API') }),
    );
    const event = await first;
    if (event.type === 'run_finished' && event.result.error && event.result.traceId === '') throw errorOfStart(event);
    const result = await (this.live.get(runId)?.handle ?? Promise.resolve({ status: 'aborted' }));
    return { runId, status: result.status };
  }

  /** Decides one waiting call of a paused run and continues the run here (as `rein approve` does). */
  async approve(
    runId: string,
    decision: { toolCallId: string; approved: boolean; reason?: string; argumentsHash?: string },
  ): Promise<{ runId: string; status: string }> {
    this.checkAccepting();
    if (this.live.has(runId)) throw new ApiError(409, 'conflict', `run ${runId} is running: it waits for no decision`);
    const record = await this.record(runId);
    if (record.status !== 'paused') {
      throw new ApiError(
        409,
        'conflict',
        `run ${runId} is not waiting for approval (it is ${record.status}${record.reason ? `: ${record.reason}` : ''})`,
      );
    }
    if (this.queueMode?.isQueued(record)) {
      try {
        await this.queueMode.approve(runId, decision);
      } catch (error) {
        const code = (error as { code?: string }).code;
        throw new ApiError(code === 'conflict' ? 409 : 500, code === 'conflict' ? 'conflict' : 'internal', (error as Error).message);
      }
      return { runId, status: 'running' };
    }
    const agent = await this.agentFor(record);
    const handle = agent.approve(runId, {
      toolCallId: decision.toolCallId,
      approved: decision.approved,
      ...(decision.reason === undefined ? {} : { reason: decision.reason }),
      ...(decision.argumentsHash === undefined ? {} : { argumentsHash: decision.argumentsHash }),
    });
    return this.started(runId, await this.track(runId, handle));
  }

  /**
   * Answers the MCP server's question a paused run's call waits on (an elicitation asked
   * with nobody to answer it) and continues the run here (as `rein approve --accept` does).
   * An answer that matches no waiting call is a 409, a form that does not fit a 400; either
   * leaves the run paused.
   */
  async answerElicitation(runId: string, answer: ElicitationAnswer): Promise<{ runId: string; status: string }> {
    this.checkAccepting();
    if (this.live.has(runId)) throw new ApiError(409, 'conflict', `run ${runId} is running: it waits for no answer`);
    const record = await this.record(runId);
    if (record.status !== 'paused') {
      throw new ApiError(
        409,
        'conflict',
        `run ${runId} is not waiting for an answer (it is ${record.status}${record.reason ? `: ${record.reason}` : ''})`,
      );
    }
    if (this.queueMode?.isQueued(record))
      throw new ApiError(409, 'conflict', `run ${runId} is a run of the queue: its MCP server's question cannot be answered here yet`);
    // The root's own calls, or a sub-agent's of its tree (answered at the root, as approvals are).
    const asking = await waitingQuestionsInTree(this.reader, runId);
    const waiting = asking.filter((q) => answer.toolCallId === undefined || q.toolCallId === answer.toolCallId);
    if (waiting.length !== 1) {
      // Say what the run does wait on, so the client knows which request to make instead.
      const calls = asking.map((q) => q.toolCallId).join(', ');
      const what =
        asking.length === 0
          ? `it waits on no MCP server's question but on an approval: GET /v1/runs/${runId} lists its pendingApprovals, POST /v1/runs/${runId}/approvals decides them`
          : waiting.length === 0
            ? `no call ${answer.toolCallId} of it waits on a question; the calls that do: ${calls}`
            : `several calls wait on a question (${calls}): name one with toolCallId`;
      throw new ApiError(409, 'conflict', `run ${runId}: ${what}`);
    }
    try {
      await checkedAnswer(waiting[0] as WaitingQuestion, answer);
    } catch (error) {
      throw new ApiError(400, 'invalid_request', (error as Error).message);
    }
    const agent = await this.agentFor(record);
    const asked = waiting[0] as WaitingQuestion;
    const target = asked.runId === runId ? {} : { runId: asked.runId };
    return this.started(runId, await this.track(runId, agent.answerElicitation(runId, { ...answer, ...target })));
  }

  /** Continues a run that crashed, failed, was aborted or is paused, from its log. */
  async resume(runId: string, force: boolean): Promise<{ runId: string; status: string }> {
    this.checkAccepting();
    if (this.live.has(runId)) throw new ApiError(409, 'conflict', `run ${runId} is already running in this server`);
    const record = await this.record(runId);
    if (record.status === 'done' || record.status === 'stopped') {
      throw new ApiError(409, 'conflict', `run ${runId} is ${record.status} (${record.reason ?? 'no reason'}): there is nothing to resume`);
    }
    const agent = await this.agentFor(record);
    return this.started(runId, await this.track(runId, agent.resume(runId, force ? { force: true } : {})));
  }

  /**
   * Continues every run this server started that its log shows running (the server was
   * killed, or stopped): no completed tool call runs again, an `unsafe` one cut off ends
   * as `unknown`. A run whose agent cannot be rebuilt is reported and left as it is.
   */
  async recover(): Promise<string[]> {
    // Queued runs are the workers' to continue.
    if (this.queueMode) return [];
    const running = (await this.reader.listRuns({ status: 'running' })).filter((r) => servedMetadata(r).server && !this.live.has(r.id));
    const continued: string[] = [];
    await Promise.all(
      running.map(async (record) => {
        try {
          const agent = await this.agentFor(record);
          const event = await this.track(record.id, agent.resume(record.id));
          if (event.type === 'run_finished' && event.result.error && event.result.traceId === '')
            throw new Error(event.result.error.message);
          continued.push(record.id);
        } catch (error) {
          const why = error instanceof Error ? error.message : String(error);
          this.recoveryErrors.set(record.id, why);
          this.warn(`run ${record.id} cannot be continued: ${why}`);
        }
      }),
    );
    return continued;
  }

  /**
   * Stops the server's runs without ending them in the log: writes are refused from now
   * on, then each run is aborted (its tools and model requests stop). Each keeps its log
   * as the last write left it, `running`, and the next start continues it. Resolves once
   * every run has settled; returns how many there were.
   */
  async stop(): Promise<number> {
    this.accepting = false;
    this.store.closeGate();
    const runs = [...this.live.values()];
    for (const run of runs) run.handle.abort('the server is stopping');
    await Promise.all(runs.map((run) => run.settled));
    return runs.length;
  }

  /** Refuses new work once the server stops. */
  private checkAccepting(): void {
    if (!this.accepting) throw new ApiError(503, 'unavailable', 'the server is stopping: it takes no new work; try again once it is back');
  }

  /**
   * Drives `handle` here: its deltas go to whoever listens, it is live until it settles.
   * Resolves with its first event (after which its record is in the store), or its
   * `run_finished` when it could not start.
   */
  private track(runId: string, handle: RunHandle): Promise<RunEvent> {
    let resolveFirst!: (event: RunEvent) => void;
    const first = new Promise<RunEvent>((resolve) => (resolveFirst = resolve));
    const unsubscribeFirst = handle.subscribe((event) => {
      unsubscribeFirst();
      resolveFirst(event);
    });
    const endDrive = this.feeds.drive(runId, (onDelta) =>
      handle.subscribe((event) => DELTA_EVENT_TYPES.has(event.type) && event.depth === undefined && onDelta(event)),
    );
    const settled = Promise.resolve(handle).then(
      (result) => {
        // A run that could not start emits its run_finished only if someone listened: the result says it too.
        resolveFirst({
          type: 'run_finished',
          runId,
          seq: 0,
          at: Date.now(),
          status: result.status,
          reason: result.reason,
          result,
        } as RunEvent);
      },
      () => undefined,
    );
    const live: LiveRun = {
      handle,
      settled: settled.finally(() => {
        if (this.live.get(runId) === live) this.live.delete(runId);
        endDrive();
      }),
    };
    this.live.set(runId, live);
    return first;
  }

  /** The answer to a request that started (or continued) a run, from its first event. */
  private started(runId: string, first: RunEvent): { runId: string; status: string } {
    // A run that could not begin (refused, or its store failed) ends with a result of no trace.
    if (first.type === 'run_finished' && first.result.error && first.result.traceId === '') throw errorOfStart(first);
    return { runId, status: first.type === 'run_finished' ? first.status : 'running' };
  }

  private async record(runId: string): Promise<RunRecord> {
    const record = await this.reader.getRun(runId);
    if (!record) throw new ApiError(404, 'not_found', `there is no run ${runId}`);
    return record;
  }

  private async agentFor(record: RunRecord): Promise<Agent> {
    try {
      return await this.agents.forStoredRun(record, this.store);
    } catch (error) {
      throw new ApiError(409, 'conflict', `run ${record.id} cannot be continued by this server: ${(error as Error).message}`);
    }
  }

  /** Why a run this server does not drive cannot take what was asked (or 404). */
  private async notDriven(runId: string, what: string, known?: RunRecord): Promise<ApiError> {
    const record = known ?? (await this.record(runId));
    if (record.status === 'running') {
      return new ApiError(
        409,
        'conflict',
        `run ${runId} is not driven by this server (another process drives it, or it awaits recovery): it ${what} only where it runs`,
      );
    }
    return new ApiError(
      409,
      'conflict',
      `run ${runId} is ${record.status}${record.reason ? ` (${record.reason})` : ''}: it ${what} only while it runs`,
    );
  }
}

/** A run that could not start (or be continued), as an API error: by its error's code. */
function errorOfStart(event: Extract<RunEvent, { type: 'run_finished' }>): ApiError {
  const error = event.result.error;
  const message = error?.message ?? 'the run could not start';
  if (error?.code === 'not_found') return new ApiError(404, 'not_found', message);
  if (error?.code === 'conflict' || error?.code === 'lease_lost') return new ApiError(409, 'conflict', message);
  return new ApiError(500, 'internal', message);
}

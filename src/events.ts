/**
 * The events of a run. A run's state is a fold over these (see DESIGN.md); a store that
 * keeps every event except the deltas can rebuild the run, its messages and its result.
 * All events are plain JSON.
 */
import type { ErrorInfo } from './errors.js';
import type { AssistantMessage, Message, ToolResultMessage, Usage, UserMessage } from './model/types.js';

/** States of the loop's state machine. */
export type LoopState = 'idle' | 'planning' | 'tool_calling' | 'observing' | 'paused' | 'done' | 'failed' | 'aborted';

/** Why a run ended. */
export type StopReasonCode =
  | 'final_answer'
  | 'terminate'
  | 'done_signal'
  | 'max_steps'
  | 'timeout'
  | 'aborted'
  | 'no_progress'
  | 'budget'
  | 'tool_errors'
  | 'fatal_error'
  | 'awaiting_approval'
  | 'hook'
  /** One answer passed the size limit: the stream was cut, the text so far kept. */
  | 'answer_too_long';

/** Final status of a run: `done` (its goal reached), `stopped` (a limit), `failed`, `aborted`, `paused`. */
export type RunStatus = 'done' | 'stopped' | 'failed' | 'aborted' | 'paused';

/** The limits a run was started with (all optional; defaults applied by the loop). */
export interface RunLimits {
  maxSteps: number;
  timeoutMs?: number;
  maxTokens?: number;
  /** Stop once the run's cost (catalog prices × usage) reaches this many US dollars. */
  maxCostUsd?: number;
  noProgressRepeats: number;
  maxConsecutiveToolErrors: number;
  /**
   * A run stopped by `max_steps`, the budget, the timeout or `no_progress` makes one last
   * model request with no tools for the best answer from what was done (off by default).
   */
  finalAnswerOnStop?: boolean;
}

/** The limits that are numbers (agent files and run requests set these). */
export type NumericLimit = Exclude<keyof RunLimits, 'finalAnswerOnStop'>;

/** Totals of a run. */
export interface RunTotals {
  steps: number;
  toolCalls: number;
  usage: Usage;
  durationMs: number;
}

/** What a run produced: always returned, also when a limit or an error stopped it. */
export interface RunResult<O = unknown> {
  runId: string;
  traceId: string;
  status: RunStatus;
  reason: StopReasonCode;
  /** Text of the last assistant message ('' when there was none). */
  text: string;
  /**
   * The validated output, when the run finished through the final-answer tool: the JSON the
   * model sent, checked against `outputSchema` (typed from it by `Agent`; see `OutputOf`).
   */
  output?: O;
  /** The full history, valid to send to a model again (no dangling tool call). */
  messages: Message[];
  totals: RunTotals;
  /** Set for `fatal_error` (and for other reasons when an error caused them). */
  error?: ErrorInfo;
  /** The hook's own words when a `shouldStopAfterTurn` hook stopped the run. */
  detail?: string;
  /** The name of the agent that finished the run (after handoffs, the last one's), when agents are named. */
  agent?: string;
}

/**
 * Fields every event carries. `seq` numbers the stored events of a run from 0 without gaps;
 * a delta (streamed, never stored) carries the seq of the stored event that follows it.
 * `at` is epoch ms.
 */
export interface EventBase {
  runId: string;
  seq: number;
  at: number;
  /**
   * Set on an event of a sub-agent's run as its ancestors' listeners receive it: the run's
   * depth in the tree (the root is 0; its children 1). Never stored: each run's log holds
   * its own events, without it.
   */
  depth?: number;
}

/** Distributes `EventBase` over each member so narrowing on `type` keeps working. */
type WithBase<T> = T extends unknown ? T & EventBase : never;

/** The body of an event, before the loop stamps `runId`, `seq` and `at` on it. */
export type RunEventBody =
  | {
      type: 'run_started';
      traceId: string;
      input: UserMessage;
      /** History the run continued from (e.g. a chat session's earlier turns). */
      history: Message[];
      model: { provider: string; id: string; api: string; baseUrl: string };
      system?: string;
      /** The agent's name (`AgentOptions.name`), when it has one. */
      agent?: string;
      /** A sub-agent's run: the run whose tool call started it, that call, and its depth (1 for a child of the root). */
      parentRunId?: string;
      parentToolCallId?: string;
      depth?: number;
      tools: string[];
      limits: RunLimits;
      /**
       * The span of this run attempt, when telemetry made one (an OpenTelemetry SDK's id, or
       * rein's own for log lines): a resumed attempt links to it.
       */
      spanId?: string;
      /** The caller's span the run is a child of (a `traceparent`, or the caller's active span). */
      parentSpanId?: string;
    }
  | {
      type: 'run_resumed';
      /** The lease the resuming process holds. */
      epoch: number;
      /** What the run was doing when it stopped: its last status in the log. */
      from: RunStatus | 'running';
      /** The span of this attempt, when telemetry made one (see `run_started.spanId`). */
      spanId?: string;
    }
  | { type: 'state_changed'; from: LoopState; to: LoopState; step: number }
  | { type: 'model_request'; step: number; attempt: number; messages: number }
  | { type: 'text_delta'; step: number; delta: string }
  | { type: 'thinking_delta'; step: number; delta: string }
  | { type: 'tool_call_delta'; step: number; index: number; id?: string; name?: string; delta: string }
  | { type: 'assistant_message'; step: number; message: AssistantMessage }
  | {
      type: 'tool_started';
      step: number;
      toolCallId: string;
      name: string;
      /** What the tool receives: repaired, validated, defaults filled (the model's own when they fail validation). */
      arguments: Record<string, unknown>;
      /** The model's argument text, when `arguments` are not simply what it says (repaired, coerced, completed). */
      rawArguments?: string;
      /** What repair fixed in the model's text (code fence, trailing commas, single quotes, …), when it needed fixing. */
      repairs?: string[];
      /** The JSON text the repaired arguments parsed from, beside `repairs`. */
      repairedArguments?: string;
      idempotencyKey: string;
    }
  | {
      type: 'tool_finished';
      step: number;
      toolCallId: string;
      name: string;
      result: ToolResultMessage;
      durationMs: number;
      errorCode?: string;
      terminate?: boolean;
      /**
       * `unknown` when the process died while the call ran and its effect cannot tell
       * whether it happened (an `unsafe` tool is never run twice); `reconciled` when the
       * tool's `reconcile` said it had; absent for a call that simply ran.
       */
      outcome?: 'unknown' | 'reconciled';
      /** What a sub-agent's run spent for this call; it counts in this run's totals. */
      usage?: Usage;
    }
  | {
      type: 'approval_requested';
      step: number;
      toolCallId: string;
      name: string;
      arguments: Record<string, unknown>;
      /** Set when the run pauses for the decision: the hash a decision must match. */
      argumentsHash?: string;
    }
  | {
      type: 'permission_decided';
      step: number;
      toolCallId: string;
      name: string;
      decision: 'allow' | 'ask' | 'deny';
      /** The rule that decided (e.g. `deny bash(rm *)`, `default: risk write asks`). */
      rule?: string;
      reason?: string;
    }
  | { type: 'approval_decided'; step: number; toolCallId: string; approved: boolean; reason?: string; argumentsHash?: string }
  | {
      /**
       * A tool call's MCP server asked a person something (`elicitation/create`) and nobody
       * here could answer: the call waits, unfinished, and the run pauses with reason
       * `awaiting_approval` until `elicitation_answered` (`agent.answerElicitation`,
       * `rein approve --accept|--decline|--cancel`); a resume then makes the call again.
       */
      type: 'elicitation_requested';
      step: number;
      toolCallId: string;
      server: string;
      /** `form` or `url`: an elicitation; `sampling`: a sampling request the permission policy asks a person about (`message` summarizes it). */
      mode: 'form' | 'url' | 'sampling';
      message: string;
      requestedSchema?: { type: 'object'; properties: Record<string, Record<string, unknown>>; required?: string[] };
      url?: string;
      elicitationId?: string;
      /** What identifies the question when the server asks it again (server, mode, message, schema, URL). */
      requestHash: string;
    }
  | {
      /** A person's answer to an `elicitation_requested` (an accepted form: checked, its defaults filled in). */
      type: 'elicitation_answered';
      step: number;
      toolCallId: string;
      requestHash: string;
      action: 'accept' | 'decline' | 'cancel';
      content?: Record<string, string | number | boolean | string[]>;
    }
  | {
      /**
       * A tool call's MCP server asked for a model's answer (`sampling/createMessage`);
       * logged before the call's `tool_finished`, whose `usage` includes what it spent.
       * Never the conversation's text.
       */
      type: 'mcp_sampling';
      step: number;
      toolCallId: string;
      server: string;
      /** `allow`: answered; `deny`: refused by the decision or a person; `error`: the model failed; `paused`: waits for a person (`elicitation_requested`, mode `sampling`). */
      decision: 'allow' | 'deny' | 'error' | 'paused';
      /** The permission rule that decided (`allow mcp_sampling(docs)`, `default: sampling asks`, `person: approved`). */
      rule?: string;
      model?: string;
      usage?: Usage;
      stopReason?: string;
      reason?: string;
    }
  | { type: 'tool_progress'; step: number; toolCallId: string; name: string; progress: number; total?: number; message?: string }
  | { type: 'retry_scheduled'; step: number; attempt: number; delayMs: number; error: ErrorInfo }
  | { type: 'message_injected'; step: number; kind: 'steer' | 'follow_up'; message: UserMessage }
  | {
      /**
       * The history was compacted before the request of `step`: its first
       * `removedMessages` messages were replaced by `summary` (the fold does the same
       * splice). The replaced messages stay in the log as the events that added them.
       */
      type: 'context_compacted';
      step: number;
      /** `threshold`: the request would have reached the compaction threshold; `context_length`: the provider refused it. */
      reason: 'threshold' | 'context_length';
      /** Estimated tokens of the request before and after. */
      tokensBefore: number;
      tokensAfter: number;
      removedMessages: number;
      /** Messages and turns kept verbatim after the summary. */
      keptMessages: number;
      keptTurns: number;
      summary: UserMessage;
      /** `model`: written by the summary model; `mechanical`: by rein from its task record, because the summary model failed. */
      summarizer: 'model' | 'mechanical';
      /** `provider/model` asked for the summary. */
      summaryModel: string;
      /** What the summary request used (added to the run's totals). */
      usage?: Usage;
      /** Why the summary model's answer was not used, when `summarizer` is `mechanical`. */
      summaryError?: ErrorInfo;
    }
  | {
      /**
       * A handoff tool transferred the conversation to another agent (issue 23): from the
       * next turn on, the run goes on with `to`'s instructions, tools and `model`. Logged
       * right after the call's `tool_finished`.
       */
      type: 'handoff';
      step: number;
      toolCallId: string;
      /** The agent that handed over (absent when it has no name). */
      from?: string;
      to: string;
      model: { provider: string; id: string; api: string };
    }
  | { type: 'run_finished'; status: RunStatus; reason: StopReasonCode; result: Omit<RunResult, 'messages'> };

/** Every event of a run, as streamed to listeners and stored. */
export type RunEvent = WithBase<RunEventBody>;

/** The `type` of each event. */
export type RunEventType = RunEvent['type'];

/** Events that are streamed to listeners but need not be stored to rebuild a run. */
export const DELTA_EVENT_TYPES: ReadonlySet<RunEventType> = new Set(['text_delta', 'thinking_delta', 'tool_call_delta', 'tool_progress']);

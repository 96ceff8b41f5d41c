/**
 * Human rendering of run events: the answer goes to stdout; tool calls, retries, notes and
 * the summary line go to stderr so `rein run "…" > answer.txt` keeps only the answer.
 *
 * The answer streams as it arrives (to a terminal, a file or a pipe alike); text of an
 * attempt that fails and is retried has then been written, and a note on stderr says it
 * is discarded. With `stream: false` (`rein run --no-stream`) each answer is written once
 * its model response is final, so a retried attempt's text never reaches stdout.
 */
import type { RunEvent, RunResult } from '../events.js';
import { ReinError, type ErrorInfo } from '../errors.js';
import { baseUrlEnvName } from '../model/resolve.js';
import { DEFAULT_RETRY_POLICY } from '../model/retry.js';
import type { AssistantMessage, ToolResultMessage } from '../model/types.js';
import type { CliIO } from './io.js';
import { Spinner } from './spinner.js';
import { TerminalAnswer, terminalLine } from './terminal-text.js';

/** Part of a note on stderr: text, or text in one colour (an SGR code). */
type NotePart = string | { sgr: number; text: string };

/** Options of the human renderer. */
export interface RenderOptions {
  /** Show model requests and state changes too (the demo's full trace). */
  verbose?: boolean;
  /** Characters of a tool result shown before it is shortened. */
  resultChars?: number;
  /**
   * The provider of the run's model, for error hints; a new run's `run_started` says it, a
   * resumed run's log may not.
   */
  provider?: string;
  /**
   * Write the answer as it arrives (default). `false`: write each model response's text
   * once the response is final, leaving out what a failed (retried) attempt streamed.
   */
  stream?: boolean;
  /**
   * How a sub-agent's events are shown (`--children`): `summary` (default) one line per
   * child when it ends, live on the spinner while it works; `full` every event, indented
   * under the parent's call; `none` nothing of them. A child's call that waits for a person
   * is always shown.
   */
  children?: ChildrenView;
  /**
   * The agents of sub-agent runs by run id, for children a resume or an approval continues
   * (their `run_started`, which names the agent, was in an earlier process).
   */
  childNames?: ReadonlyMap<string, string>;
}

/** The values of `--children`. */
export const CHILDREN_VIEWS = ['summary', 'full', 'none'] as const;
export type ChildrenView = (typeof CHILDREN_VIEWS)[number];

/** `--children <view>`: the view, `fallback` when not given; anything else is refused. */
export function childrenViewOf(value: string | undefined, fallback: ChildrenView = 'summary'): ChildrenView {
  if (value === undefined) return fallback;
  if ((CHILDREN_VIEWS as readonly string[]).includes(value)) return value as ChildrenView;
  throw new ReinError('config', 'fatal', `--children expects one of ${CHILDREN_VIEWS.join(', ')}, got "${value}"`);
}

/** What the summary view keeps of a sub-agent that works. */
interface ChildProgress {
  name: string;
  steps: number;
  tokens: number;
  /** The tool it runs now, if any. */
  tool?: string;
}

/**
 * Renders one run's events; feed every event to `onEvent`.
 *
 * What the model, its tools and its server say can hold terminal control sequences
 * (terminal-text.ts): every note on stderr shows them as visible escapes, at a terminal or
 * not (a log is read at a terminal too), with URL passwords redacted; the answer on stdout
 * is shown so at a terminal only, and is written byte for byte to a file or a pipe.
 */
export class HumanRenderer {
  private readonly spinner: Spinner;
  private readonly color: boolean;
  /** The answer's control characters made visible: stdout is a terminal. */
  private readonly terminalAnswer: TerminalAnswer | undefined;
  /** Stream the answer as it arrives, or write each answer once final (`stream: false`). */
  private readonly live: boolean;
  private atLineStart = true;
  /** Text of the current attempt already on stdout (live only). */
  private streamedText = false;
  private readonly toolStarted = new Map<string, number>();
  private provider: string | undefined;
  /** The attempt number of the last model request: the retries its failure came after. */
  private attempt = 1;
  /** How long the server last asked to wait, from the error of a failed response. */
  private retryAfterMs: number | undefined;
  /** The sub-agents working now, by run id (the summary view's live line). */
  private readonly children = new Map<string, ChildProgress>();

  constructor(
    private readonly io: CliIO,
    private readonly options: RenderOptions = {},
  ) {
    // A terminal that says it is dumb (TERM=dumb: Emacs shells, some CI logs) shows escape
    // codes as garbage: no colours, no spinner there.
    const dumb = io.env.TERM === 'dumb';
    this.spinner = new Spinner(io.stderr, { enabled: !dumb });
    this.color = Boolean(io.stderr.isTTY) && !io.env.NO_COLOR && !dumb;
    this.terminalAnswer = io.stdout.isTTY ? new TerminalAnswer() : undefined;
    this.live = options.stream !== false;
    this.provider = options.provider;
  }

  onEvent(event: RunEvent): void {
    // A sub-agent's events (issue 23): notes on stderr, indented by depth; its answer is not the run's.
    if (event.depth !== undefined && event.depth > 0) {
      const view = this.options.children ?? 'summary';
      if (view === 'full') this.onChildEvent(event, event.depth);
      else this.onChildSummary(event, event.depth, view);
      return;
    }
    switch (event.type) {
      case 'run_started':
        this.provider = event.model.provider;
        this.note(this.dim(`rein · ${event.model.provider}/${event.model.id} · ${event.runId}`));
        break;
      case 'run_resumed':
        this.note(this.dim(`↻ resumed (${event.from}) · lease ${event.epoch}`));
        break;
      case 'model_request':
        if (this.options.verbose)
          this.note(this.dim(`· step ${event.step}: asking the model (attempt ${event.attempt}, ${event.messages} messages)`));
        // A request asked again without a retry (after compaction) voids the text before it too.
        this.discardAttempt();
        this.attempt = event.attempt;
        this.spinner.start('waiting for the model…');
        break;
      case 'text_delta':
        if (!this.live) {
          // Held until the response is final: the spinner says the answer is coming.
          this.spinner.start('writing the answer…');
          break;
        }
        this.spinner.stop();
        this.writeAnswer(event.delta);
        this.streamedText = true;
        break;
      case 'thinking_delta':
        // The thinking text is not shown, so the spinner is what tells the model is at work;
        // never over a half-written line of the answer (the spinner clears its line).
        if (this.atLineStart || !this.live) this.spinner.start('thinking…');
        break;
      case 'tool_call_delta':
        if (event.name !== undefined) {
          if (this.live) this.endTextLine();
          this.spinner.start(`writing a call to ${event.name}…`);
        }
        break;
      case 'assistant_message':
        this.spinner.stop();
        // What rein changed in how it asked (tools moved into the prompt), once the answer is final.
        if (event.message.notes !== undefined) {
          this.endTextLine();
          for (const note of event.message.notes) this.note(this.yellow(`note: ${note}`));
        }
        this.onAnswer(event.message);
        break;
      case 'tool_started':
        this.spinner.stop();
        this.endTextLine();
        this.toolStarted.set(event.toolCallId, event.at);
        this.note(this.cyan('→'), ` ${event.name} ${shorten(JSON.stringify(event.arguments), 200)}`);
        break;
      case 'tool_finished': {
        const mark = event.outcome === 'unknown' ? this.yellow('?') : event.result.isError ? this.red('✗') : this.green('←');
        const text = shorten(resultText(event.result), this.options.resultChars ?? 160);
        this.note('  ', mark, ` ${text} `, this.dim(`(${formatMs(event.durationMs)})`));
        break;
      }
      case 'approval_decided':
        if (!event.approved) this.note(this.yellow(`  denied${event.reason ? `: ${event.reason}` : ''}`));
        break;
      case 'permission_decided':
        if (event.decision === 'deny') {
          this.spinner.stop();
          this.endTextLine();
          this.note(this.yellow(`⊘ ${event.name} refused by the permission policy${event.rule ? ` (${event.rule})` : ''}`));
        }
        break;
      case 'context_compacted':
        this.spinner.stop();
        this.endTextLine();
        this.note(
          this.dim(
            `⇣ context compacted (${event.reason === 'context_length' ? 'the model refused the request as too long' : 'near the window'}): ` +
              `${event.tokensBefore} → ${event.tokensAfter} tokens, ${event.removedMessages} messages summarized ` +
              `by ${event.summarizer === 'model' ? event.summaryModel : 'rein (the summary model failed)'}`,
          ),
        );
        break;
      case 'tool_progress': {
        const of = event.total === undefined ? '' : `/${event.total}`;
        this.spinner.start(`${event.name}: ${event.progress}${of}${event.message ? ` ${shorten(event.message, 60)}` : ''}`);
        break;
      }
      case 'retry_scheduled':
        this.spinner.stop();
        this.endTextLine();
        this.note(this.yellow(`↻ retry ${event.attempt} in ${formatMs(event.delayMs)}: ${event.error.code}: ${event.error.message}`));
        this.discardAttempt();
        break;
      case 'handoff':
        this.spinner.stop();
        this.endTextLine();
        this.note(this.cyan('⇄'), ` handed to ${event.to} · ${event.model.provider}/${event.model.id}`);
        break;
      case 'message_injected':
        this.note(this.dim(`↳ ${event.kind === 'steer' ? 'steering' : 'follow-up'}: ${userText(event.message.content)}`));
        break;
      case 'state_changed':
        if (this.options.verbose) this.note(this.dim(`· ${event.from} → ${event.to}`));
        break;
      case 'run_finished':
        this.spinner.stop();
        this.endTextLine();
        break;
      default:
        break;
    }
  }

  /**
   * One event of a sub-agent's run, as a line indented by its depth: its start, its tool
   * calls and their results, its answers and its end. Deltas only move the spinner.
   */
  private onChildEvent(event: RunEvent, depth: number): void {
    const pad = '  '.repeat(depth);
    const line = (...parts: NotePart[]): void => {
      this.spinner.stop();
      this.endTextLine();
      this.note(this.dim(`${pad}┊ `), ...parts);
    };
    switch (event.type) {
      case 'run_started':
        line(this.cyan('↳'), ` sub-agent ${event.agent ?? ''} · ${event.model.provider}/${event.model.id} · ${event.runId}`);
        break;
      case 'run_resumed': {
        const name = this.options.childNames?.get(event.runId);
        line(this.dim(`↻ sub-agent ${name ? `${name} (${event.runId})` : event.runId} resumed (${event.from})`));
        break;
      }
      case 'tool_started':
        line(this.cyan('→'), ` ${event.name} ${shorten(JSON.stringify(event.arguments), 160)}`);
        break;
      case 'tool_finished': {
        const mark = event.outcome === 'unknown' ? this.yellow('?') : event.result.isError ? this.red('✗') : this.green('←');
        line('  ', mark, ` ${shorten(resultText(event.result), this.options.resultChars ?? 120)}`);
        break;
      }
      case 'assistant_message': {
        const text = event.message.content.map((c) => (c.type === 'text' ? c.text : '')).join('');
        if (text) line(this.dim(shorten(text.replace(/\s+/g, ' '), 160)));
        break;
      }
      case 'approval_requested':
        if (event.argumentsHash !== undefined)
          line(this.yellow(`⏸ ${event.name} waits for approval (rein approve <root run> --call ${event.toolCallId})`));
        break;
      case 'permission_decided':
        if (event.decision === 'deny')
          line(this.yellow(`⊘ ${event.name} refused by the permission policy${event.rule ? ` (${event.rule})` : ''}`));
        break;
      case 'handoff':
        line(this.cyan('⇄'), ` handed to ${event.to}`);
        break;
      case 'run_finished': {
        const ok = event.status === 'done';
        line(
          ok ? this.green('✓') : this.red('■'),
          ` sub-agent ${event.status} (${event.reason}) · ${event.result.totals.usage.total} tokens`,
        );
        break;
      }
      case 'model_request':
        this.spinner.start(`sub-agent ${event.runId}: waiting for the model…`);
        break;
      default:
        break;
    }
  }

  /**
   * A sub-agent folded to one line: while it works the spinner says what it does (its
   * name, step, tokens, the tool it runs; all working children at once), and when it ends
   * one line says how (status, steps, tool calls, tokens, time, run id). `none` keeps only
   * what a person must act on: a call waiting for approval.
   */
  private onChildSummary(event: RunEvent, depth: number, view: 'summary' | 'none'): void {
    const pad = '  '.repeat(depth);
    if (event.type === 'approval_requested' && event.argumentsHash !== undefined) {
      this.spinner.stop();
      this.endTextLine();
      this.note(
        this.dim(`${pad}┊ `),
        this.yellow(`⏸ ${event.name} waits for approval (rein approve <root run> --call ${event.toolCallId})`),
      );
      return;
    }
    if (view === 'none') return;
    let child = this.children.get(event.runId);
    if (!child) {
      const name = event.type === 'run_started' && event.agent ? event.agent : (this.options.childNames?.get(event.runId) ?? event.runId);
      child = { name, steps: 0, tokens: 0 };
      this.children.set(event.runId, child);
    }
    switch (event.type) {
      case 'model_request':
        child.tool = undefined;
        break;
      case 'assistant_message':
        child.steps++;
        child.tokens += event.message.usage.total;
        break;
      case 'tool_started':
        child.tool = event.name;
        break;
      case 'tool_finished':
        child.tool = undefined;
        break;
      case 'run_finished': {
        this.children.delete(event.runId);
        this.spinner.stop();
        this.endTextLine();
        const t = event.result.totals;
        const mark = event.status === 'done' ? this.green('✓') : event.status === 'paused' ? this.yellow('⏸') : this.red('■');
        const line = [
          `${event.status} (${event.reason})`,
          `${t.steps} step${t.steps === 1 ? '' : 's'}`,
          `${t.toolCalls} tool call${t.toolCalls === 1 ? '' : 's'}`,
          `${t.usage.estimated ? '~' : ''}${t.usage.total} tokens`,
          formatMs(t.durationMs),
          event.runId,
        ].join(' · ');
        this.note(this.dim(`${pad}┊ `), mark, ` sub-agent ${child.name} · ${line}`);
        if (event.result.error) this.note(this.dim(`${pad}┊   `), this.red(shorten(event.result.error.message, 200)));
        break;
      }
      default:
        // Deltas, state changes, resumes: nothing to tell on the line.
        break;
    }
    if (this.children.size > 0) this.spinner.start(this.childrenLabel());
  }

  /** The spinner's words for the sub-agents working now. */
  private childrenLabel(): string {
    const all = [...this.children.values()];
    const one = (c: ChildProgress): string =>
      `${c.name} · step ${c.steps + 1} · ${c.tokens} tokens${c.tool === undefined ? '' : ` · → ${c.tool}`}`;
    if (all.length === 1) return `sub-agent ${one(all[0] as ChildProgress)}`;
    return `${all.length} sub-agents: ${all.map(one).join('; ')}`;
  }

  /** The one summary line that ends a run, plus what to fix when it failed. */
  summary(result: RunResult): void {
    const t = result.totals;
    const ok = result.status === 'done';
    const line = [
      result.reason,
      `${t.steps} step${t.steps === 1 ? '' : 's'}`,
      `${t.toolCalls} tool call${t.toolCalls === 1 ? '' : 's'}`,
      // "~": the server reported no usage and these are rein's estimate.
      `${t.usage.estimated ? '~' : ''}${t.usage.total} tokens`,
      ...(t.usage.cost ? [`${t.usage.estimated ? '~' : ''}${formatUsd(t.usage.cost.total)}`] : []),
      formatMs(t.durationMs),
    ].join(' · ');
    this.note(ok ? this.green('✓') : this.red('■'), ` ${line}${result.detail ? ` (${result.detail})` : ''}`);
    if (result.error) {
      const context: ErrorContext = { retries: this.attempt - 1 };
      if (this.provider !== undefined) context.provider = this.provider;
      if (this.retryAfterMs !== undefined) context.retryAfterMs = this.retryAfterMs;
      this.note(this.red(describeError(result.error, context)));
    }
  }

  /** Stops the spinner (on abort or error paths). */
  close(): void {
    this.spinner.stop();
  }

  /**
   * A final model response: its text (unless streamed already), then what to know about
   * how it ended. A failed response's partial text is no answer: it is not written.
   */
  private onAnswer(message: AssistantMessage): void {
    if (!this.streamedText && message.stopReason !== 'error') {
      // Held text, or a stored log (which has no deltas): the text of the message itself.
      const text = message.content.map((c) => (c.type === 'text' ? c.text : '')).join('');
      if (text) this.writeAnswer(text);
    }
    this.streamedText = false;
    this.endTextLine();
    if (message.error?.retryAfterMs !== undefined) this.retryAfterMs = message.error.retryAfterMs;
    if (message.refusal) this.note(this.yellow(`model refused: ${message.refusal}`));
    const cut = cutNote(message);
    if (cut) this.note(this.yellow(cut));
  }

  /**
   * The attempt in progress failed and is asked again. Held text was never written; text
   * streamed to the terminal cannot be taken back reliably (wrapped lines, wide characters,
   * lines scrolled off the screen), so a note says it does not count.
   */
  private discardAttempt(): void {
    if (!this.streamedText) return;
    this.streamedText = false;
    this.endTextLine();
    this.note(this.dim('  (the text above came from the failed attempt and is discarded; the model is asked again)'));
  }

  /**
   * One line on stderr. Every part's text is shown safely (control characters visible, URL
   * passwords redacted); only the colours are escape codes of rein's own.
   */
  private note(...parts: NotePart[]): void {
    const line = parts.map((part) => {
      if (typeof part === 'string') return terminalLine(part);
      const text = terminalLine(part.text);
      return this.color ? `\x1b[${part.sgr}m${text}\x1b[0m` : text;
    });
    this.io.stderr.write(`${line.join('')}\n`);
  }

  /** Text of the answer to stdout: as it is, or with visible control characters at a terminal. */
  private writeAnswer(text: string): void {
    this.io.stdout.write(this.terminalAnswer ? this.terminalAnswer.write(text) : text);
    this.atLineStart = text.endsWith('\n');
  }

  private endTextLine(): void {
    // A CR the answer ended with was held back (it might have begun a CRLF): it was bare.
    const held = this.terminalAnswer?.flush();
    if (held) this.io.stdout.write(held);
    if (!this.atLineStart) {
      this.io.stdout.write('\n');
      this.atLineStart = true;
    }
  }

  private dim(text: string): NotePart {
    return { sgr: 2, text };
  }
  private red(text: string): NotePart {
    return { sgr: 31, text };
  }
  private green(text: string): NotePart {
    return { sgr: 32, text };
  }
  private yellow(text: string): NotePart {
    return { sgr: 33, text };
  }
  private cyan(text: string): NotePart {
    return { sgr: 36, text };
  }
}

/**
 * Why a response that ended early ended, with what to do about it: it still counts as the
 * answer (the stop reason decides the exit code), so the cut must be said.
 */
function cutNote(message: AssistantMessage): string | undefined {
  // A cut tool call is refused by the dispatcher as invalid: say what was cut either way.
  const call = message.content.find((c) => c.type === 'tool_call');
  const what = call ? `the model's call to ${call.name} is incomplete` : 'the answer is incomplete';
  if (message.stopReason === 'length') {
    const tokens = `${message.usage.estimated ? '~' : ''}${message.usage.output}`;
    return (
      `⚠ ${what}: the model reached its output limit after ${tokens} tokens (finish reason "length"). ` +
      'Raise the limit with --max-output-tokens <n>; a model whose context window is full stops this way too.'
    );
  }
  if (message.stopReason === 'content_filter') {
    return `⚠ ${what}: the provider's content filter stopped it (finish reason "content_filter"); only what came before the cut is shown.`;
  }
  return undefined;
}

/** What is known of the run an error ended, so the hint fits it. */
export interface ErrorContext {
  /** The provider of the run's model: its base-URL variable is the one to check. */
  provider?: string;
  /** Retries made of the request that failed (absent: not known). */
  retries?: number;
  /** How long the server asked to wait before the last try, when it said. */
  retryAfterMs?: number;
}

/** The variable that sets `provider`'s base URL (OpenAI's when the provider is not known). */
export function baseUrlVariable(provider: string | undefined): string {
  return (provider === undefined ? undefined : baseUrlEnvName(provider)) ?? 'OPENAI_BASE_URL';
}

/** The hint for a rate limit: it depends on whether rein retried at all. */
function rateLimitHint(context: ErrorContext): string {
  const { retries, retryAfterMs } = context;
  if (retries === undefined) return 'The provider is rate-limiting; wait, or lower the request rate.';
  if (retries > 0)
    return `The provider kept rate-limiting after ${retries} ${retries === 1 ? 'retry' : 'retries'}; wait, or lower the request rate.`;
  // Not retried: the server asked for a longer wait than rein's retries allow.
  if (retryAfterMs !== undefined && retryAfterMs > DEFAULT_RETRY_POLICY.maxDelayMs) {
    return `The request was not retried: try again after the wait the provider asked for (${formatMs(retryAfterMs)}).`;
  }
  return 'The provider is rate-limiting (the request was not retried); wait, then try again.';
}

/**
 * An error line that says what to fix, by error code (never by message text); `context`
 * (what the renderer saw of the run) makes the hint name the right variable and say
 * whether retries were made.
 */
export function describeError(error: ErrorInfo, context: ErrorContext = {}): string {
  const hint: Partial<Record<string, string>> = {
    auth: 'Check the API key (OPENAI_API_KEY, or the key variable of your provider).',
    network: `Is the server running and reachable? Check ${baseUrlVariable(context.provider)} or --base-url.`,
    stream_cut: 'The server closed the stream early; check the server, then retry.',
    model_not_found: 'Check the model id given with --model (provider/model, e.g. openai/gpt-4o-mini).',
    context_length:
      error.status === 413
        ? 'The request is larger than the provider accepts for this model or account; shorten the task or lower --max-output-tokens.'
        : 'The conversation is longer than the model accepts; shorten the task or use a model with a larger window.',
    // A fatal rate_limited is a used-up quota or credit (HTTP 402, insufficient_quota): waiting does not cure it.
    rate_limited:
      error.kind === 'fatal'
        ? 'The credit or quota of the API key is used up; add credit or change the plan (retrying will not help).'
        : rateLimitHint(context),
    timeout: 'The server stopped sending data; check that it is alive (retries were tried).',
    bad_request:
      error.status === 413
        ? 'The request is larger than the server or a proxy in front of it accepts; shorten the task or raise its body size limit.'
        : 'The server rejected the request. If it says the model does not support tools, run with --no-tools, or with --tool-calling prompt to describe the tools in the prompt.',
    content_filter: "The provider's content filter refused the prompt; rephrase the task.",
  };
  // No hint for not_found: a model server's 404 already names the base URL to check, and a
  // run missing from the store says where to look; a generic base-URL hint would mislead it.
  const extra = hint[error.code];
  // The message is the server's or a tool's words: shown safely wherever it is printed.
  return `error (${terminalLine(error.code)}): ${terminalLine(error.message)}${extra ? `\n${extra}` : ''}`;
}

function resultText(result: ToolResultMessage): string {
  return result.content.map((c) => (c.type === 'text' ? c.text : `[${c.mimeType} image]`)).join(' ');
}

function userText(content: string | Array<{ type: string; text?: string }>): string {
  return typeof content === 'string' ? content : content.map((c) => c.text ?? `[${c.type}]`).join(' ');
}

/** Collapses whitespace and cuts to `max` characters with an ellipsis. */
export function shorten(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= max ? flat : `${flat.slice(0, max - 1)}…`;
}

/** `$0.0123` (four decimals below a dollar, two above). */
export function formatUsd(usd: number): string {
  return `$${usd < 1 ? usd.toFixed(4) : usd.toFixed(2)}`;
}

/** `850 ms`, `1.2 s`, `2 m 5 s`. */
export function formatMs(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  return `${Math.floor(ms / 60_000)} m ${Math.round((ms % 60_000) / 1000)} s`;
}

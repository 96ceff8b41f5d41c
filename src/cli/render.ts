/**
 * Human rendering of run events: the answer streams to stdout as it arrives; tool calls,
 * retries and the summary line go to stderr so `rein run "…" > answer.txt` keeps only the
 * answer.
 */
import type { RunEvent, RunResult } from '../events.js';
import type { ErrorInfo } from '../errors.js';
import type { ToolResultMessage } from '../model/types.js';
import type { CliIO } from './io.js';
import { Spinner } from './spinner.js';

/** Options of the human renderer. */
export interface RenderOptions {
  /** Show model requests and state changes too (the demo's full trace). */
  verbose?: boolean;
  /** Characters of a tool result shown before it is shortened. */
  resultChars?: number;
}

/** Renders one run's events; feed every event to `onEvent`. */
export class HumanRenderer {
  private readonly spinner: Spinner;
  private readonly color: boolean;
  private atLineStart = true;
  private streamedText = false;
  private readonly toolStarted = new Map<string, number>();

  constructor(
    private readonly io: CliIO,
    private readonly options: RenderOptions = {},
  ) {
    this.spinner = new Spinner(io.stderr);
    this.color = Boolean(io.stderr.isTTY) && !io.env.NO_COLOR;
  }

  onEvent(event: RunEvent): void {
    switch (event.type) {
      case 'run_started':
        this.note(this.dim(`rein · ${event.model.provider}/${event.model.id} · ${event.runId}`));
        break;
      case 'run_resumed':
        this.note(this.dim(`↻ resumed (${event.from}) · lease ${event.epoch}`));
        break;
      case 'model_request':
        if (this.options.verbose) this.note(this.dim(`· step ${event.step}: asking the model (attempt ${event.attempt}, ${event.messages} messages)`));
        this.spinner.start('waiting for the model…');
        break;
      case 'text_delta':
        this.spinner.stop();
        this.io.stdout.write(event.delta);
        this.atLineStart = event.delta.endsWith('\n');
        this.streamedText = true;
        break;
      case 'thinking_delta':
        this.spinner.stop();
        break;
      case 'assistant_message':
        this.spinner.stop();
        // A stored log has no deltas: show the answer's text from the message itself.
        if (!this.streamedText) {
          const text = event.message.content.map((c) => (c.type === 'text' ? c.text : '')).join('');
          if (text) {
            this.io.stdout.write(text);
            this.atLineStart = text.endsWith('\n');
          }
        }
        this.streamedText = false;
        this.endTextLine();
        if (event.message.refusal) this.note(this.yellow(`model refused: ${event.message.refusal}`));
        break;
      case 'tool_started':
        this.spinner.stop();
        this.endTextLine();
        this.toolStarted.set(event.toolCallId, event.at);
        this.note(`${this.cyan('→')} ${event.name} ${shorten(JSON.stringify(event.arguments), 200)}`);
        break;
      case 'tool_finished': {
        const mark = event.outcome === 'unknown' ? this.yellow('?') : event.result.isError ? this.red('✗') : this.green('←');
        const text = shorten(resultText(event.result), this.options.resultChars ?? 160);
        this.note(`  ${mark} ${text} ${this.dim(`(${formatMs(event.durationMs)})`)}`);
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

  /** The one summary line that ends a run, plus what to fix when it failed. */
  summary(result: RunResult): void {
    const t = result.totals;
    const ok = result.status === 'done';
    const line = [
      `${ok ? this.green('✓') : this.red('■')} ${result.reason}`,
      `${t.steps} step${t.steps === 1 ? '' : 's'}`,
      `${t.toolCalls} tool call${t.toolCalls === 1 ? '' : 's'}`,
      // "~": the server reported no usage and these are rein's estimate.
      `${t.usage.estimated ? '~' : ''}${t.usage.total} tokens`,
      ...(t.usage.cost ? [`${t.usage.estimated ? '~' : ''}${formatUsd(t.usage.cost.total)}`] : []),
      formatMs(t.durationMs),
    ].join(' · ');
    this.note(line + (result.detail ? ` (${result.detail})` : ''));
    if (result.error) this.note(this.red(describeError(result.error)));
  }

  /** Stops the spinner (on abort or error paths). */
  close(): void {
    this.spinner.stop();
  }

  private note(line: string): void {
    this.io.stderr.write(`${line}\n`);
  }

  private endTextLine(): void {
    if (!this.atLineStart) {
      this.io.stdout.write('\n');
      this.atLineStart = true;
    }
  }

  private paint(code: number, text: string): string {
    return this.color ? `\x1b[${code}m${text}\x1b[0m` : text;
  }
  private dim(t: string): string {
    return this.paint(2, t);
  }
  private red(t: string): string {
    return this.paint(31, t);
  }
  private green(t: string): string {
    return this.paint(32, t);
  }
  private yellow(t: string): string {
    return this.paint(33, t);
  }
  private cyan(t: string): string {
    return this.paint(36, t);
  }
}

/** An error line that says what to fix, by error code (never by message text). */
export function describeError(error: ErrorInfo): string {
  const hint: Partial<Record<string, string>> = {
    auth: 'Check the API key (OPENAI_API_KEY, or the key variable of your provider).',
    network: 'Is the server running and reachable? Check OPENAI_BASE_URL or --base-url.',
    stream_cut: 'The server closed the stream early; check the server, then retry.',
    model_not_found: 'Check the model id given with --model (provider/model, e.g. openai/gpt-4o-mini).',
    context_length: 'The conversation is longer than the model accepts; shorten the task or use a model with a larger window.',
    rate_limited: 'The provider kept rate-limiting after all retries; wait, or lower the request rate.',
    timeout: 'The server stopped sending data; check that it is alive (retries were tried).',
    bad_request: 'The server rejected the request. If it says the model does not support tools, run with --no-tools.',
  };
  // No hint for not_found: a model server's 404 already names the base URL to check, and a
  // run missing from the store says where to look; a generic base-URL hint would mislead it.
  const extra = hint[error.code];
  return `error (${error.code}): ${error.message}${extra ? `\n${extra}` : ''}`;
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

import { Writable } from 'node:stream';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { RunEvent, RunEventBody, RunResult } from '../../src/events.js';
import type { ErrorInfo } from '../../src/errors.js';
import { emptyUsage, type AssistantMessage, type StopReason } from '../../src/model/types.js';
import { KNOWN_PROVIDERS, resolveModel } from '../../src/model/resolve.js';
import type { CliIO } from '../../src/cli/io.js';
import { HumanRenderer, baseUrlVariable, describeError } from '../../src/cli/render.js';

/** A stream that keeps what is written, a terminal or not. */
class Capture extends Writable {
  text = '';
  constructor(readonly isTTY: boolean) {
    super();
  }
  override _write(chunk: Buffer, _encoding: string, done: () => void): void {
    this.text += chunk.toString();
    done();
  }
}

function io(tty: { stdout?: boolean; stderr?: boolean } = {}): CliIO & { out: Capture; err: Capture } {
  const out = new Capture(tty.stdout ?? false);
  const err = new Capture(tty.stderr ?? false);
  return { stdout: out, stderr: err, stdin: process.stdin, env: { NO_COLOR: '1' }, signal: new AbortController().signal, out, err };
}

let seq = 0;
function ev(body: RunEventBody): RunEvent {
  return { ...body, runId: 'run_1', seq: seq++, at: Date.now() } as RunEvent;
}

function answer(text: string, stopReason: StopReason = 'stop', extra: Partial<AssistantMessage> = {}): RunEvent {
  const message: AssistantMessage = { role: 'assistant', content: text ? [{ type: 'text', text }] : [], stopReason, usage: { ...emptyUsage(), output: 42 }, provider: 'openai', model: 'm', ...extra };
  return ev({ type: 'assistant_message', step: 1, message });
}

const started = (provider = 'openai'): RunEvent =>
  ev({
    type: 'run_started',
    traceId: 't',
    input: { role: 'user', content: 'hi' },
    history: [],
    model: { provider, id: 'm', api: 'openai-chat', baseUrl: 'http://127.0.0.1:9/v1' },
    tools: [],
    limits: { maxSteps: 15, noProgressRepeats: 3, maxConsecutiveToolErrors: 5 },
  });
const request = (attempt = 1): RunEvent => ev({ type: 'model_request', step: 1, attempt, messages: 1 });
const text = (delta: string): RunEvent => ev({ type: 'text_delta', step: 1, delta });
const retry = (error: Partial<ErrorInfo> = {}): RunEvent =>
  ev({ type: 'retry_scheduled', step: 1, attempt: 1, delayMs: 1000, error: { name: 'ReinError', code: 'stream_cut', kind: 'transient', message: 'cut', ...error } });

/** Feeds a cut first attempt, its retry and the real answer. */
function retriedAnswer(renderer: HumanRenderer): void {
  for (const e of [started(), request(), text('PARTIAL-'), text('ATTEMPT '), retry(), request(2), text('Real '), text('answer.'), answer('Real answer.')]) renderer.onEvent(e);
}

function failedResult(error: ErrorInfo): RunResult {
  return {
    runId: 'run_1',
    traceId: 't',
    status: 'failed',
    reason: 'fatal_error',
    text: '',
    messages: [],
    totals: { steps: 1, toolCalls: 0, usage: emptyUsage(), durationMs: 5 },
    error,
  };
}

afterEach(() => {
  vi.useRealTimers();
});

describe('HumanRenderer: the text of a failed attempt', () => {
  it('with stream: false (--no-stream), writes each answer once final: a retried attempt never reaches stdout', () => {
    const cli = io();
    retriedAnswer(new HumanRenderer(cli, { stream: false }));
    expect(cli.out.text).toBe('Real answer.\n');
    expect(cli.err.text).toMatch(/↻ retry 1 in 1.0 s: stream_cut: cut/);
    // Nothing was shown, so there is nothing to call discarded.
    expect(cli.err.text).not.toMatch(/discarded/);
  });

  it('with stream: false, leaves out the partial text of a response that failed', () => {
    const cli = io();
    const renderer = new HumanRenderer(cli, { stream: false });
    for (const e of [started(), request(), text('Let me'), answer('Let me', 'error', { error: { name: 'ReinError', code: 'server_error', kind: 'transient', message: 'boom' } })]) renderer.onEvent(e);
    expect(cli.out.text).toBe('');
  });

  it('by default (a terminal, a file or a pipe alike), streams as it arrives and says on stderr that the failed attempt\'s text is discarded', () => {
    const cli = io();
    retriedAnswer(new HumanRenderer(cli));
    expect(cli.out.text).toBe('PARTIAL-ATTEMPT \nReal answer.\n');
    expect(cli.err.text).toMatch(/↻ retry 1[^\n]*\n {2}\(the text above came from the failed attempt and is discarded; the model is asked again\)\n/);
  });

  it('a retry before any text says nothing about discarded text', () => {
    const cli = io();
    const renderer = new HumanRenderer(cli);
    for (const e of [started(), request(), retry(), request(2), text('Fine.'), answer('Fine.')]) renderer.onEvent(e);
    expect(cli.out.text).toBe('Fine.\n');
    expect(cli.err.text).not.toMatch(/discarded/);
  });
});

describe('HumanRenderer: the spinner while a reasoning model thinks', () => {
  it('keeps spinning, labelled "thinking", until the answer\'s text arrives', () => {
    vi.useFakeTimers();
    const cli = io({ stdout: true, stderr: true });
    const renderer = new HumanRenderer(cli);
    renderer.onEvent(request());
    renderer.onEvent(ev({ type: 'thinking_delta', step: 1, delta: 'hmm' }));
    const frames = (): number => (cli.err.text.match(/thinking…/g) ?? []).length;
    const before = frames();
    expect(before).toBeGreaterThan(0);
    vi.advanceTimersByTime(3000);
    // Drawn all along (every 80 ms), not one frame and then nothing.
    expect(frames()).toBeGreaterThan(before + 30);
    renderer.onEvent(text('Hello.'));
    const stopped = frames();
    vi.advanceTimersByTime(1000);
    expect(frames()).toBe(stopped);
    expect(cli.err.text.endsWith('\r\x1b[2K')).toBe(true);
    renderer.close();
  });

  it('names the tool whose call the model is writing', () => {
    const cli = io({ stdout: true, stderr: true });
    const renderer = new HumanRenderer(cli);
    renderer.onEvent(request());
    renderer.onEvent(ev({ type: 'tool_call_delta', step: 1, index: 0, id: 'c1', name: 'write_file', delta: '' }));
    expect(cli.err.text).toMatch(/writing a call to write_file…$/);
    renderer.close();
  });
});

describe('HumanRenderer: answers cut short', () => {
  it('an answer cut by the output limit is shown, with a note that says so and how to raise the limit', () => {
    const cli = io();
    const renderer = new HumanRenderer(cli);
    for (const e of [started(), request(), text('17 * 23 = 391. Also, the'), answer('17 * 23 = 391. Also, the', 'length')]) renderer.onEvent(e);
    expect(cli.out.text).toBe('17 * 23 = 391. Also, the\n');
    expect(cli.err.text).toMatch(/⚠ the answer is incomplete: the model reached its output limit after 42 tokens \(finish reason "length"\)\. Raise the limit with --max-output-tokens <n>/);
  });

  it('an answer cut by a content filter is shown, with a note that says so', () => {
    const cli = io();
    const renderer = new HumanRenderer(cli);
    for (const e of [started(), request(), answer('Here is how to ', 'content_filter')]) renderer.onEvent(e);
    expect(cli.out.text).toBe('Here is how to \n');
    expect(cli.err.text).toMatch(/⚠ the answer is incomplete: the provider's content filter stopped it \(finish reason "content_filter"\)/);
  });

  it('a tool call cut by the output limit is named as such', () => {
    const cli = io();
    const renderer = new HumanRenderer(cli);
    const call = { type: 'tool_call' as const, id: 'c1', name: 'calculate', arguments: {}, rawArguments: '{"expression":"17*' };
    renderer.onEvent(ev({ type: 'assistant_message', step: 1, message: { role: 'assistant', content: [call], stopReason: 'length', usage: emptyUsage(), provider: 'openai', model: 'm' } }));
    expect(cli.err.text).toMatch(/⚠ the model's call to calculate is incomplete: the model reached its output limit/);
  });
});

describe('describeError', () => {
  const network: ErrorInfo = { name: 'ReinError', code: 'network', kind: 'transient', message: 'connect ECONNREFUSED 127.0.0.1:11434' };

  it('names the base-URL variable of the model\'s provider for an unreachable server', () => {
    expect(describeError(network, { provider: 'ollama' })).toMatch(/Check OLLAMA_BASE_URL or --base-url\./);
    expect(describeError(network, { provider: 'lmstudio' })).toMatch(/Check LMSTUDIO_BASE_URL or --base-url\./);
    expect(describeError(network)).toMatch(/Check OPENAI_BASE_URL or --base-url\./);
  });

  it('names the variable resolveModel reads, for every built-in provider', () => {
    for (const provider of KNOWN_PROVIDERS) {
      const variable = baseUrlVariable(provider);
      const env = { [variable]: 'http://example.test:1234/v1' };
      expect(resolveModel(`${provider}/m`, {}, env).baseUrl, `${provider} reads ${variable}`).toBe('http://example.test:1234/v1');
    }
  });

  it('says a rate limit was retried only when it was', () => {
    const limited: ErrorInfo = { name: 'ReinError', code: 'rate_limited', kind: 'transient', message: 'HTTP 429' };
    expect(describeError(limited, { retries: 3 })).toMatch(/kept rate-limiting after 3 retries/);
    const notRetried = describeError(limited, { retries: 0, retryAfterMs: 120_000 });
    expect(notRetried).toMatch(/not retried: try again after the wait the provider asked for \(2 m 0 s\)/);
    expect(notRetried).not.toMatch(/after .*retries/);
    expect(describeError(limited, { retries: 0 })).toMatch(/not retried/);
  });

  it('the summary of a run takes the provider and the retries from the run\'s events', () => {
    const cli = io();
    const renderer = new HumanRenderer(cli);
    const error: ErrorInfo = { name: 'ReinError', code: 'rate_limited', kind: 'transient', message: 'HTTP 429', retryAfterMs: 120_000 };
    for (const e of [started('ollama'), request(), answer('', 'error', { error })]) renderer.onEvent(e);
    // The result's error loses retryAfterMs on its way through the loop; the message kept it.
    const { retryAfterMs: _dropped, ...lost } = error;
    renderer.summary(failedResult(lost));
    expect(cli.err.text).toMatch(/error \(rate_limited\): HTTP 429\nThe request was not retried: try again after the wait the provider asked for \(2 m 0 s\)\./);

    const unreachable = io();
    const again = new HumanRenderer(unreachable);
    for (const e of [started('ollama'), request(), retry({ code: 'network' }), request(2)]) again.onEvent(e);
    again.summary(failedResult(network));
    expect(unreachable.err.text).toMatch(/Check OLLAMA_BASE_URL or --base-url\./);
  });
});

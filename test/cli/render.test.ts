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

function io(
  tty: { stdout?: boolean; stderr?: boolean } = {},
  env: NodeJS.ProcessEnv = { NO_COLOR: '1' },
): CliIO & { out: Capture; err: Capture } {
  const out = new Capture(tty.stdout ?? false);
  const err = new Capture(tty.stderr ?? false);
  return { stdout: out, stderr: err, stdin: process.stdin, env, signal: new AbortController().signal, out, err };
}

let seq = 0;
function ev(body: RunEventBody): RunEvent {
  return { ...body, runId: 'run_1', seq: seq++, at: Date.now() } as RunEvent;
}

function answer(text: string, stopReason: StopReason = 'stop', extra: Partial<AssistantMessage> = {}): RunEvent {
  const message: AssistantMessage = {
    role: 'assistant',
    content: text ? [{ type: 'text', text }] : [],
    stopReason,
    usage: { ...emptyUsage(), output: 42 },
    provider: 'openai',
    model: 'm',
    ...extra,
  };
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
  ev({
    type: 'retry_scheduled',
    step: 1,
    attempt: 1,
    delayMs: 1000,
    error: { name: 'ReinError', code: 'stream_cut', kind: 'transient', message: 'cut', ...error },
  });

/** Feeds a cut first attempt, its retry and the real answer. */
function retriedAnswer(renderer: HumanRenderer): void {
  for (const e of [
    started(),
    request(),
    text('PARTIAL-'),
    text('ATTEMPT '),
    retry(),
    request(2),
    text('Real '),
    text('answer.'),
    answer('Real answer.'),
  ])
    renderer.onEvent(e);
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
    for (const e of [
      started(),
      request(),
      text('Let me'),
      answer('Let me', 'error', { error: { name: 'ReinError', code: 'server_error', kind: 'transient', message: 'boom' } }),
    ])
      renderer.onEvent(e);
    expect(cli.out.text).toBe('');
  });

  it("by default (a terminal, a file or a pipe alike), streams as it arrives and says on stderr that the failed attempt's text is discarded", () => {
    const cli = io();
    retriedAnswer(new HumanRenderer(cli));
    expect(cli.out.text).toBe('PARTIAL-ATTEMPT \nReal answer.\n');
    expect(cli.err.text).toMatch(
      /↻ retry 1[^\n]*\n {2}\(the text above came from the failed attempt and is discarded; the model is asked again\)\n/,
    );
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
    for (const e of [started(), request(), text('17 * 23 = 391. Also, the'), answer('17 * 23 = 391. Also, the', 'length')])
      renderer.onEvent(e);
    expect(cli.out.text).toBe('17 * 23 = 391. Also, the\n');
    expect(cli.err.text).toMatch(
      /⚠ the answer is incomplete: the model reached its output limit after 42 tokens \(finish reason "length"\)\. Raise the limit with --max-output-tokens <n>/,
    );
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
    renderer.onEvent(
      ev({
        type: 'assistant_message',
        step: 1,
        message: { role: 'assistant', content: [call], stopReason: 'length', usage: emptyUsage(), provider: 'openai', model: 'm' },
      }),
    );
    expect(cli.err.text).toMatch(/⚠ the model's call to calculate is incomplete: the model reached its output limit/);
  });
});

describe('describeError', () => {
  const network: ErrorInfo = { name: 'ReinError', code: 'network', kind: 'transient', message: 'connect ECONNREFUSED 127.0.0.1:11434' };

  it("names the base-URL variable of the model's provider for an unreachable server", () => {
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

  it("the summary of a run takes the provider and the retries from the run's events", () => {
    const cli = io();
    const renderer = new HumanRenderer(cli);
    const error: ErrorInfo = { name: 'ReinError', code: 'rate_limited', kind: 'transient', message: 'HTTP 429', retryAfterMs: 120_000 };
    for (const e of [started('ollama'), request(), answer('', 'error', { error })]) renderer.onEvent(e);
    // The result's error loses retryAfterMs on its way through the loop; the message kept it.
    const { retryAfterMs: _dropped, ...lost } = error;
    renderer.summary(failedResult(lost));
    expect(cli.err.text).toMatch(
      /error \(rate_limited\): HTTP 429\nThe request was not retried: try again after the wait the provider asked for \(2 m 0 s\)\./,
    );

    const unreachable = io();
    const again = new HumanRenderer(unreachable);
    for (const e of [started('ollama'), request(), retry({ code: 'network' }), request(2)]) again.onEvent(e);
    again.summary(failedResult(network));
    expect(unreachable.err.text).toMatch(/Check OLLAMA_BASE_URL or --base-url\./);
  });
});

describe('HumanRenderer: control sequences from the model and its tools', () => {
  const ESC = '\x1b';
  const toolStarted = (name: string): RunEvent =>
    ev({ type: 'tool_started', step: 1, toolCallId: 'c1', name, arguments: { x: 1 }, idempotencyKey: 'k' });
  const toolFinished = (output: string): RunEvent =>
    ev({
      type: 'tool_finished',
      step: 1,
      toolCallId: 'c1',
      name: 'read_file',
      durationMs: 5,
      result: { role: 'tool', toolCallId: 'c1', toolName: 'read_file', content: [{ type: 'text', text: output }], isError: false },
    });

  it('at a terminal, the streamed answer shows them as symbols, even a sequence split across deltas; a bare CR too', () => {
    const cli = io({ stdout: true, stderr: true });
    const renderer = new HumanRenderer(cli);
    for (const e of [
      started(),
      request(),
      text('before'),
      text(ESC),
      text('[2J'),
      text(`${ESC}]0;title\x07 line1\r`),
      text('\nover\rwritten\r'),
      answer('…'),
    ])
      renderer.onEvent(e);
    renderer.close();
    expect(cli.out.text).toBe('before␛[2J␛]0;title␇ line1\r\nover␍written␍\n');
    expect(cli.out.text).not.toContain(ESC);
  });

  it('to a file or a pipe, the answer stays byte for byte what the model sent', () => {
    const cli = io();
    const renderer = new HumanRenderer(cli);
    const sent = `before${ESC}[2J${ESC}]52;c;aGk=\x07 over\rwritten`;
    for (const e of [started(), request(), text(sent.slice(0, 7)), text(sent.slice(7)), answer(sent)]) renderer.onEvent(e);
    expect(cli.out.text).toBe(`${sent}\n`);
    // A held (--no-stream) answer too.
    const held = io();
    const again = new HumanRenderer(held, { stream: false });
    for (const e of [started(), request(), text(sent), answer(sent)]) again.onEvent(e);
    expect(held.out.text).toBe(`${sent}\n`);
  });

  it('a held (--no-stream) answer at a terminal shows them as symbols too', () => {
    const cli = io({ stdout: true });
    const renderer = new HumanRenderer(cli, { stream: false });
    for (const e of [started(), request(), text('x'), answer(`a${ESC}[31mb\r`)]) renderer.onEvent(e);
    expect(cli.out.text).toBe('a␛[31mb␍\n');
  });

  it('on stderr, a terminal or not, tool names, tool results, refusals and error messages show them as symbols', () => {
    for (const tty of [false, true]) {
      const cli = io({ stderr: tty, stdout: tty });
      const renderer = new HumanRenderer(cli);
      const name = `x${ESC}]0;TITLE\x07${ESC}[2J`;
      for (const e of [
        started(),
        request(),
        ev({ type: 'tool_call_delta', step: 1, index: 0, id: 'c1', name, delta: '' }),
        toolStarted(name),
        toolFinished(`line ${ESC}[2J${ESC}[H\x9b31m red`),
        retry({ message: `proxy said ${ESC}]52;c;aGk=\x07` }),
        request(2),
        answer('', 'stop', { refusal: `no${ESC}[5m` }),
      ]) {
        renderer.onEvent(e);
      }
      renderer.summary(failedResult({ name: 'ReinError', code: 'server_error', kind: 'fatal', message: `boom${ESC}[2J\rgone` }));
      renderer.close();
      // The only escape codes left are the spinner's own line clearing (at a terminal).
      expect(cli.err.text.replaceAll('\r\x1b[2K', '')).not.toMatch(/[\x00-\x08\x0b-\x1f\x7f-\x9f]/);
      expect(cli.err.text).toContain('→ x␛]0;TITLE␇␛[2J {"x":1}');
      expect(cli.err.text).toContain('← line ␛[2J␛[H␛[31m red');
      expect(cli.err.text).toContain('proxy said ␛]52;c;aGk=␇');
      expect(cli.err.text).toContain('model refused: no␛[5m');
      expect(cli.err.text).toContain('error (server_error): boom␛[2J␍gone');
      if (tty) expect(cli.err.text).toContain('writing a call to x␛]0;TITLE␇␛[2J…');
    }
  });

  it("keeps rein's own colours at a terminal", () => {
    const cli = io({ stderr: true }, {});
    const renderer = new HumanRenderer(cli);
    renderer.onEvent(toolStarted(`x${ESC}[2J`));
    expect(cli.err.text).toBe('\x1b[36m→\x1b[0m x␛[2J {"x":1}\n');
  });
});

describe('HumanRenderer: URL passwords', () => {
  it('error messages and retry notes print a URL password redacted, as the store logs it', () => {
    const cli = io();
    const renderer = new HumanRenderer(cli);
    for (const e of [started(), request(), retry({ code: 'network', message: 'cannot reach http://alice:s3cret@127.0.0.1:9/v1' })])
      renderer.onEvent(e);
    renderer.summary(
      failedResult({ name: 'ReinError', code: 'network', kind: 'fatal', message: 'cannot reach http://alice:s3cret@127.0.0.1:9/v1' }),
    );
    expect(cli.err.text).not.toContain('s3cret');
    expect(cli.err.text.match(/alice:\[REDACTED:url_password\]@/g)).toHaveLength(2);
    expect(describeError({ name: 'ReinError', code: 'config', kind: 'fatal', message: 'bad http://a:b1c2d3@h/v1' })).toBe(
      'error (config): bad http://a:[REDACTED:url_password]@h/v1',
    );
  });
});

describe('HumanRenderer: TERM=dumb', () => {
  it('no colours and no spinner at a terminal that says it is dumb; both otherwise', () => {
    const feed = (env: NodeJS.ProcessEnv): string => {
      const cli = io({ stdout: true, stderr: true }, env);
      const renderer = new HumanRenderer(cli);
      for (const e of [started(), request(), text('Hi.'), answer('Hi.')]) renderer.onEvent(e);
      renderer.summary({ ...failedResult({ name: 'ReinError', code: 'auth', kind: 'fatal', message: 'no' }) });
      renderer.close();
      return cli.err.text;
    };
    const dumb = feed({ TERM: 'dumb' });
    expect(dumb).not.toContain('\x1b');
    expect(dumb).not.toContain('waiting for the model');
    expect(dumb).toMatch(/^rein · openai\/m · run_1\n■ fatal_error/);
    const smart = feed({ TERM: 'xterm-256color' });
    expect(smart).toContain('\x1b[2m');
    expect(smart).toContain('waiting for the model…');
  });
});

describe('sub-agents folded to a line (--children summary)', () => {
  const child = (runId: string, body: RunEventBody): RunEvent => ({ ...body, runId, seq: seq++, at: Date.now(), depth: 1 }) as RunEvent;
  const childStart = (runId: string, agent: string): RunEvent =>
    child(runId, {
      type: 'run_started',
      traceId: 't',
      input: { role: 'user', content: 'sub task' },
      history: [],
      model: { provider: 'openai', id: 'm', api: 'openai-chat', baseUrl: 'http://127.0.0.1:9/v1' },
      agent,
      tools: ['calculate'],
      limits: { maxSteps: 15, noProgressRepeats: 3, maxConsecutiveToolErrors: 5 },
    });

  it('at a terminal the spinner tells what each working child does; its end is one line', () => {
    const out = io({ stderr: true });
    const r = new HumanRenderer(out);
    r.onEvent(childStart('run_1.2.0', 'reviewer'));
    r.onEvent(child('run_1.2.0', { type: 'model_request', step: 1, attempt: 1, messages: 1 }));
    expect(out.err.text).toContain('sub-agent reviewer · step 1 · 0 tokens');
    r.onEvent(
      child('run_1.2.0', {
        type: 'assistant_message',
        step: 1,
        message: {
          role: 'assistant',
          content: [],
          stopReason: 'tool_use',
          usage: { ...emptyUsage(), total: 120 },
          provider: 'openai',
          model: 'm',
        },
      }),
    );
    r.onEvent(
      child('run_1.2.0', { type: 'tool_started', step: 1, toolCallId: 'c1', name: 'read_file', arguments: {}, idempotencyKey: 'k' }),
    );
    expect(out.err.text).toContain('sub-agent reviewer · step 2 · 120 tokens · → read_file');
    r.onEvent(childStart('run_1.2.1', 'researcher'));
    r.onEvent(child('run_1.2.1', { type: 'model_request', step: 1, attempt: 1, messages: 1 }));
    expect(out.err.text).toContain('2 sub-agents: reviewer · step 2 · 120 tokens · → read_file; researcher · step 1 · 0 tokens');
    const totals = { steps: 2, toolCalls: 1, usage: { ...emptyUsage(), total: 300 }, durationMs: 1500 };
    r.onEvent(
      child('run_1.2.0', {
        type: 'run_finished',
        status: 'stopped',
        reason: 'max_steps',
        result: { status: 'stopped', reason: 'max_steps', text: '', totals, messages: [] },
      } as unknown as RunEventBody),
    );
    r.close();
    expect(out.err.text).toContain(
      '  ┊ ■ sub-agent reviewer · stopped (max_steps) · 2 steps · 1 tool call · 300 tokens · 1.5 s · run_1.2.0\n',
    );
    // Nothing of the child's own events was printed as a line of its own.
    expect(out.err.text).not.toContain('┊ →');
    expect(out.out.text).toBe('');
  });
});

import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { startScriptedServer, type Script, type ScriptedServer } from '../../src/testing/index.js';
import { sseBody, startServer } from '../model/fixture-server.js';
import { cleanEnv, isGone, rein, spawned, startRein } from './spawn.js';

const servers: ScriptedServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function server(script: Script): Promise<ScriptedServer> {
  const s = await startScriptedServer({ script });
  servers.push(s);
  return s;
}

describe('rein run', () => {
  it('--json prints one JSON event per line and nothing else, ending with run_finished', async () => {
    const s = await server([{ toolCalls: [{ name: 'calculate', arguments: { expression: '6 * 7' } }] }, { text: 'It is 42.' }]);
    const out = await rein(['run', '--json', '--model', 'openai/scripted', 'what is 6*7?'], { env: cleanEnv({ OPENAI_BASE_URL: s.url }) });
    expect(out.code).toBe(0);
    const lines = out.stdout.trim().split('\n');
    const events = lines.map((l) => JSON.parse(l) as { type: string; reason?: string; result?: { text: string } });
    expect(events[0]!.type).toBe('run_started');
    expect(events.at(-1)).toMatchObject({ type: 'run_finished', reason: 'final_answer', result: { text: 'It is 42.' } });
    const finished = events.find((e) => e.type === 'tool_finished') as unknown as { result: { content: Array<{ text: string }> } };
    expect(finished.result.content[0]!.text).toBe('42');
  });

  it('streams the answer to stdout and the trace and summary line to stderr', async () => {
    const s = await server([{ toolCalls: [{ name: 'roll_dice', arguments: { sides: 6 } }] }, { text: 'You rolled a die.' }]);
    const out = await rein(['run', '--base-url', s.url, 'roll a die'], { env: cleanEnv() });
    expect(out.code).toBe(0);
    expect(out.stdout.trim()).toBe('You rolled a die.');
    expect(out.stderr).toMatch(/→ roll_dice \{"sides":6,"count":1\}/);
    expect(out.stderr).toMatch(/← .*\(\d+ ms\)/);
    expect(out.stderr).toMatch(/final_answer · 2 steps · 1 tool call · \d+ tokens · /);
  });

  it('works with a server that refuses stream_options and reports no usage: asked again, tokens estimated', async () => {
    const strict = await startServer((request) =>
      'stream_options' in (request.json as Record<string, unknown>)
        ? {
            status: 400,
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ error: { message: "Unknown parameter: 'stream_options'.", param: 'stream_options' } }),
          }
        : {
            headers: { 'content-type': 'text/event-stream' },
            body: sseBody([{ id: 'c', choices: [{ index: 0, delta: { content: 'Hello from a strict server.' }, finish_reason: 'stop' }] }]),
          },
    );
    try {
      const out = await rein(['run', '--base-url', strict.baseUrl, 'say hello'], { env: cleanEnv() });
      expect(out.code).toBe(0);
      expect(out.stdout.trim()).toBe('Hello from a strict server.');
      expect(out.stderr).toMatch(/final_answer · 1 step · 0 tool calls · ~\d+ tokens · /);
      expect(strict.requests.map((r) => 'stream_options' in (r.json as Record<string, unknown>))).toEqual([true, false]);
    } finally {
      await strict.close();
    }
  });

  it('reads the task from stdin when it is "-" or missing, and says so when stdin was empty', async () => {
    const s = await server([{ text: 'From a pipe.' }, { text: 'From a dash.' }]);
    const piped = await rein(['run', '--base-url', s.url], { env: cleanEnv(), stdin: 'summarize\nthis file\n' });
    expect(piped.code).toBe(0);
    expect(piped.stdout.trim()).toBe('From a pipe.');
    const dashed = await rein(['run', '--base-url', s.url, '-'], { env: cleanEnv(), stdin: 'the task after a dash' });
    expect(dashed.stdout.trim()).toBe('From a dash.');
    const users = s.requests.map((r) => r.messages.find((m) => m.role === 'user')?.content);
    expect(users).toEqual(['summarize\nthis file', 'the task after a dash']);
    const empty = await rein(['run', '--base-url', s.url], { env: cleanEnv(), stdin: '' });
    expect(empty.code).toBe(2);
    expect(empty.stderr).toContain('no task given');
    expect(empty.stderr).toContain('stdin was empty');
  });

  it('exits 3 when a limit stops the run', async () => {
    let n = 0;
    const s = await server(() => ({ toolCalls: [{ name: 'calculate', arguments: { expression: `${n++} + 1` } }] }));
    const out = await rein(['run', '--max-steps', '2', '--base-url', s.url, 'loop'], { env: cleanEnv() });
    expect(out.code).toBe(3);
    expect(out.stderr).toMatch(/max_steps/);
  });

  it('answers at the limit: one last request with no tools, its answer on stdout, still exit 3; --no-final-answer skips it', async () => {
    let n = 0;
    const s = await server((request) =>
      request.toolNames.length === 0
        ? { text: 'Best so far: 2.' }
        : { toolCalls: [{ name: 'calculate', arguments: { expression: `${n++} + 1` } }] },
    );
    const out = await rein(['run', '--no-store', '--max-steps', '2', '--base-url', s.url, 'loop'], { env: cleanEnv() });
    expect(out.code).toBe(3);
    expect(out.stdout.trim()).toBe('Best so far: 2.');
    expect(out.stderr).toMatch(/max_steps/);
    expect(s.requests).toHaveLength(3);
    const off = await rein(['run', '--no-store', '--no-final-answer', '--max-steps', '2', '--base-url', s.url, 'loop'], {
      env: cleanEnv(),
    });
    expect(off.code).toBe(3);
    expect(off.stdout.trim()).toBe('');
    expect(s.requests).toHaveLength(5);
  });

  it('exits 1 and says what to set when the key is rejected', async () => {
    const s = await server([{ fault: { type: 'status', status: 401 } }]);
    const out = await rein(['run', '--base-url', s.url, 'hi'], { env: cleanEnv() });
    expect(out.code).toBe(1);
    expect(out.stderr).toMatch(/auth/);
    expect(out.stderr).toMatch(/OPENAI_API_KEY/);
  });

  it('an unknown model says to check --model', async () => {
    const body = {
      error: {
        message: 'The model `nope` does not exist or you do not have access to it.',
        type: 'invalid_request_error',
        param: null,
        code: 'model_not_found',
      },
    };
    const s = await server([{ fault: { type: 'status', status: 404, body } }]);
    const out = await rein(['run', '--base-url', s.url, '--model', 'openai/nope', 'hi'], { env: cleanEnv() });
    expect(out.code).toBe(1);
    expect(out.stderr).toMatch(/model_not_found/);
    expect(out.stderr).toMatch(/--model/);
  });

  it('a model without tool support: the hint says --no-tools, and --no-tools sends none', async () => {
    const body = {
      error: { message: 'registry.ollama.ai/library/gemma:2b does not support tools', type: 'api_error', param: null, code: null },
    };
    const s = await server([{ fault: { type: 'status', status: 400, body } }, { text: 'Plain answer.' }]);
    // Native tool calling asked for: the refusal is not answered by moving the tools into
    // the prompt (which is what happens without the flag: test/cli/tool-calling.test.ts).
    const refused = await rein(['run', '--tool-calling', 'native', '--base-url', s.url, 'hi'], { env: cleanEnv() });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/does not support tools/);
    expect(refused.stderr).toMatch(/--no-tools/);
    const plain = await rein(['run', '--no-tools', '--base-url', s.url, 'hi'], { env: cleanEnv() });
    expect(plain.code).toBe(0);
    expect(s.requests[1]!.tools).toBeUndefined();
    // By default: the seed tools, the workspace tools, and paging of cut results.
    expect(s.requests[0]!.tools!.map((t) => t.function.name).sort()).toEqual(
      [
        'bash',
        'calculate',
        'edit_file',
        'get_current_time',
        'glob',
        'grep',
        'list_dir',
        'read_file',
        'read_tool_output',
        'roll_dice',
        'write_file',
      ].sort(),
    );
  });

  it('a missing key ends with a message that says what to set (exit 2)', async () => {
    const out = await rein(['run', 'hi'], { env: cleanEnv() });
    expect(out.code).toBe(2);
    expect(out.stderr).toMatch(/OPENAI_API_KEY/);
  });

  it('--json still ends with a run_finished line when the run cannot start', async () => {
    const out = await rein(['run', '--json', 'hi'], { env: cleanEnv() });
    expect(out.code).toBe(2);
    const last = JSON.parse(out.stdout.trim().split('\n').at(-1)!) as { type: string; error: { code: string } };
    // A whole event of its type: no run, so empty ids, seq 0 and nothing spent.
    expect(last).toMatchObject({
      type: 'run_finished',
      runId: '',
      seq: 0,
      status: 'failed',
      reason: 'fatal_error',
      result: {
        runId: '',
        traceId: '',
        status: 'failed',
        reason: 'fatal_error',
        text: '',
        totals: { steps: 0, toolCalls: 0 },
        error: { code: 'config' },
      },
    });
    expect(last).not.toHaveProperty('error');
  });

  it("an unreachable server ends with a message naming it and the base-URL variable of the model's provider", async () => {
    const s = await startScriptedServer({ script: [] });
    const url = s.url;
    await s.close(); // nothing listens on this port any more
    const out = await rein(['run', '--model', 'ollama/llama3.1', 'hi'], { env: cleanEnv({ OLLAMA_BASE_URL: url }), timeoutMs: 60_000 });
    expect(out.code).toBe(1);
    expect(out.stderr).toContain(url.replace(/\/v1$/, ''));
    // ollama/ reads OLLAMA_BASE_URL: naming OPENAI_BASE_URL would send the user to the wrong setting.
    expect(out.stderr).toMatch(/Check OLLAMA_BASE_URL or --base-url\./);
    expect(out.stderr).not.toMatch(/OPENAI_BASE_URL/);
  }, 90_000);

  it('a rate limit with a longer wait than rein retries for: one request, and the hint does not claim retries', async () => {
    const s = await server([{ fault: { type: 'status', status: 429, retryAfter: 120 } }]);
    const out = await rein(['run', '--base-url', s.url, 'hi'], { env: cleanEnv() });
    expect(out.code).toBe(1);
    expect(s.requests).toHaveLength(1);
    expect(out.stderr).toMatch(/error \(rate_limited\)/);
    expect(out.stderr).toMatch(/The request was not retried: try again after the wait the provider asked for \(2 m 0 s\)\./);
    expect(out.stderr).not.toMatch(/after all retries|kept rate-limiting/);
  });

  it('streams to a pipe; with --no-stream stdout gets only the text of the attempt that succeeded, not that of a retried one', async () => {
    // Even requests are cut after a few events of text, odd ones answer.
    const s = await server((_request, { index }) =>
      index % 2 === 0
        ? { text: 'PARTIAL-ATTEMPT that the server cuts short', fault: { type: 'cut', afterChunks: 3 } }
        : { text: 'The real answer.' },
    );
    // --json shows the cut attempt did stream text before the retry...
    const json = await rein(['run', '--json', '--no-tools', '--base-url', s.url, 'hi'], { env: cleanEnv() });
    const events = json.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string; delta?: string });
    const firstRetry = events.findIndex((e) => e.type === 'retry_scheduled');
    expect(firstRetry).toBeGreaterThan(0);
    expect(events.slice(0, firstRetry).some((e) => e.type === 'text_delta' && e.delta!.includes('PARTIAL'))).toBe(true);
    // ...which streaming wrote too, with a note on stderr that it is discarded...
    const streamed = await rein(['run', '--no-tools', '--base-url', s.url, 'hi'], { env: cleanEnv() });
    expect(streamed.code).toBe(0);
    expect(streamed.stdout).toMatch(/^PARTIAL[^\n]*\nThe real answer\.\n$/);
    expect(streamed.stderr).toMatch(/the text above came from the failed attempt and is discarded/);
    // ...and --no-stream leaves out.
    const out = await rein(['run', '--no-stream', '--no-tools', '--base-url', s.url, 'hi'], { env: cleanEnv() });
    expect(out.code).toBe(0);
    expect(out.stdout).toBe('The real answer.\n');
    expect(out.stderr).toMatch(/↻ retry 1 in [^\n]*stream_cut/);
    expect(s.requests).toHaveLength(6);
  });

  it('an answer cut by the output limit or a content filter exits 0 with a note saying so; --max-output-tokens sets the limit', async () => {
    const s = await server([
      { text: 'Cut by the limit', finishReason: 'length' },
      { text: 'Cut by the filter', finishReason: 'content_filter' },
    ]);
    const limited = await rein(['run', '--no-tools', '--max-output-tokens', '64', '--base-url', s.url, 'hi'], { env: cleanEnv() });
    expect(limited.code).toBe(0);
    expect(limited.stdout).toBe('Cut by the limit\n');
    expect(limited.stderr).toMatch(
      /⚠ the answer is incomplete: the model reached its output limit after \d+ tokens \(finish reason "length"\)\. Raise the limit with --max-output-tokens <n>/,
    );
    expect(limited.stderr).toMatch(/✓ final_answer/);
    expect(s.requests[0]!.max_tokens).toBe(64);
    const filtered = await rein(['run', '--no-tools', '--base-url', s.url, 'hi'], { env: cleanEnv() });
    expect(filtered.code).toBe(0);
    expect(filtered.stdout).toBe('Cut by the filter\n');
    expect(filtered.stderr).toMatch(
      /⚠ the answer is incomplete: the provider's content filter stopped it \(finish reason "content_filter"\)/,
    );
    expect(s.requests[1]!.max_tokens).toBeUndefined();
    const bad = await rein(['run', '--max-output-tokens', '1.5', '--base-url', s.url, 'hi'], { env: cleanEnv() });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--max-output-tokens [^\n]*whole number[^\n]*got "1.5"/);
  });

  it('--json prints the password of a base URL redacted, as the run store logs it', async () => {
    const s = await server([{ text: 'Fine.' }]);
    const withPassword = s.url.replace('http://', 'http://alice:s3cret@');
    const out = await rein(['run', '--json', '--no-store', '--no-tools', '--base-url', withPassword, 'hi'], { env: cleanEnv() });
    expect(out.stdout + out.stderr).not.toContain('s3cret');
    const started = JSON.parse(out.stdout.split('\n')[0]!) as { type: string; model: { baseUrl: string } };
    expect(started).toMatchObject({ type: 'run_started', model: { baseUrl: withPassword.replace('s3cret', '[REDACTED:url_password]') } });
  });

  it('a bad flag is a usage error that says what to fix', async () => {
    const out = await rein(['run', '--max-steps', 'lots', 'hi'], { env: cleanEnv({ OPENAI_BASE_URL: 'http://127.0.0.1:9/v1' }) });
    expect(out.code).toBe(2);
    expect(out.stderr).toMatch(/--max-steps [^\n]*got "lots"/);
  });
});

describe('rein run when its reader goes away', () => {
  it('--json: the run is aborted quietly (exit 130, no stack trace) once stdout is closed', async () => {
    // A long, slow answer: the run would take about 10 s if nothing stopped it.
    const s = await startScriptedServer({ script: [{ text: 'word '.repeat(2000) }], tokenDelayMs: 5, chunkSize: 5 });
    servers.push(s);
    const run = startRein(['run', '--json', '--no-tools', '--base-url', s.url, 'hi']);
    try {
      await run.waitFor(/"type":"text_delta"/);
      run.closeStdout();
      const out = await run.done;
      expect(out.code).toBe(130);
      expect(out.stderr).not.toMatch(/EPIPE|Error|\n\s+at /);
    } finally {
      run.kill();
    }
  });

  for (const closed of ['stdout', 'stderr'] as const) {
    it(`the run is aborted at the next write once ${closed} is closed: no further model request is answered`, async () => {
      let release!: () => void;
      const gate = new Promise<void>((r) => (release = r));
      const s = await server(async (_request, { index }) => {
        if (index === 0) return { text: 'First part.', toolCalls: [{ name: 'calculate', arguments: { expression: '1 + 1' } }] };
        await gate; // until the test has closed the stream
        if (index === 1) return { text: 'Second part.', toolCalls: [{ name: 'calculate', arguments: { expression: '2 + 2' } }] };
        return { text: 'A run that was not stopped ends here.' };
      });
      const run = startRein(['run', '--base-url', s.url, 'add up']);
      try {
        await run.waitFor(/First part\./);
        await run.waitFor(/← 2 /);
        if (closed === 'stdout') run.closeStdout();
        else run.closeStderr();
        release();
        const out = await run.done;
        expect(out.code).toBe(130);
        expect(out.stderr).not.toMatch(/EPIPE|\n\s+at /);
        expect(out.stdout).not.toMatch(/not stopped/);
      } finally {
        run.kill();
      }
    });
  }
});

describe('rein run on the other wire APIs', () => {
  it('--model anthropic/… talks Anthropic Messages, --thinking high maps to a thinking budget, the summary shows the cost', async () => {
    const s = await server([{ toolCalls: [{ name: 'calculate', arguments: { expression: '6 * 7' } }] }, { text: 'It is 42.' }]);
    const env = cleanEnv({ ANTHROPIC_BASE_URL: s.origin, ANTHROPIC_API_KEY: 'sk-ant-test' });
    const out = await rein(['run', '--model', 'anthropic/claude-sonnet-4-5', '--thinking', 'high', 'what is 6*7?'], { env });
    expect(out.code).toBe(0);
    expect(out.stdout.trim()).toBe('It is 42.');
    expect(s.received.map((r) => r.api)).toEqual(['anthropic-messages', 'anthropic-messages']);
    expect(s.received[0]!.body).toMatchObject({
      model: 'claude-sonnet-4-5',
      thinking: { type: 'enabled', budget_tokens: expect.any(Number) },
    });
    // claude-sonnet-4-5 is in the catalog, so the run has a price.
    expect(out.stderr).toMatch(/final_answer · 2 steps · 1 tool call · \d+ tokens · \$\d+\.\d{4} · /);
  });

  it('--model gemini/… and openai-responses/… work end to end', async () => {
    const s = await server([{ text: 'Gemini here.' }, { text: 'Responses here.' }]);
    const gemini = await rein(['run', '--model', 'gemini/gemini-2.5-flash', 'hi'], {
      env: cleanEnv({ GEMINI_BASE_URL: s.origin, GEMINI_API_KEY: 'k' }),
    });
    expect([gemini.code, gemini.stdout.trim()]).toEqual([0, 'Gemini here.']);
    const responses = await rein(['run', '--model', 'openai-responses/gpt-4.1', 'hi'], {
      env: cleanEnv({ OPENAI_BASE_URL: s.url, OPENAI_API_KEY: 'k' }),
    });
    expect([responses.code, responses.stdout.trim()]).toEqual([0, 'Responses here.']);
    expect(s.received.map((r) => r.api)).toEqual(['gemini', 'openai-responses']);
  });

  it('a bad --thinking level and a --max-cost without a known price are usage errors that say what to fix', async () => {
    const bad = await rein(['run', '--thinking', 'extreme', '--base-url', 'http://127.0.0.1:9/v1', 'hi']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--thinking expects one of off, low, medium, high, got "extreme"/);
    const unpriced = await rein(['run', '--max-cost', '0.5', '--model', 'ollama/llama3.1', 'hi']);
    expect(unpriced.code).toBe(2);
    expect(unpriced.stderr).toMatch(/no price for ollama\/llama3.1/);
  });
});

describe('rein demo', () => {
  it('runs both example tasks offline and shows the whole trace', async () => {
    const out = await rein(['demo'], { env: cleanEnv() });
    expect(out.code).toBe(0);
    expect(out.stderr).toMatch(/SCRIPTED OFFLINE MODEL/);
    expect(out.stderr).toMatch(/→ get_current_time/);
    expect(out.stderr.match(/→ roll_dice/g)).toHaveLength(2);
    expect(out.stderr).toMatch(/→ calculate \{"expression":"\d \+ \d"\}/);
    expect(out.stdout).toMatch(/It is \w+day, \d{4}-\d\d-\d\d \d\d:\d\d/);
    const sum = /You rolled (\d) and (\d); together that makes (\d+)\./.exec(out.stdout);
    expect(sum).not.toBeNull();
    expect(Number(sum![1]) + Number(sum![2])).toBe(Number(sum![3]));
  });
});

describe('rein demo flags', () => {
  it('an unknown flag or an argument is a usage error (exit 2); --json gives JSON lines', async () => {
    const bogus = await rein(['demo', '--no-store', '--bogus'], { env: cleanEnv() });
    expect(bogus.code).toBe(2);
    expect(bogus.stderr).toMatch(/Unknown option '--bogus'/);
    const extra = await rein(['demo', '--no-store', 'extra'], { env: cleanEnv() });
    expect(extra.code).toBe(2);
    expect(extra.stderr).toMatch(/'extra'/);
    // rein run's flags are not the demo's: its model and limits are fixed.
    expect((await rein(['demo', '--no-store', '--max-steps', '0'], { env: cleanEnv() })).code).toBe(2);
    const json = await rein(['demo', '--json', '--no-store'], { env: cleanEnv() });
    expect(json.code).toBe(0);
    const types = json.stdout
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as { type: string }).type);
    expect(types.filter((t) => t === 'run_finished')).toHaveLength(2);
  });
});

describe('rein demo with a bad store setting', () => {
  it('is a usage error naming the setting, with no stack trace, and ends', async () => {
    const out = await rein(['demo'], { env: cleanEnv({ REIN_DATABASE_URL: 'ftp://x/y' }) });
    expect(out.code).toBe(2);
    expect(out.stderr).toMatch(/rein: error \(config\): cannot open the run store ftp:\/\/x\/y: unsupported store location/);
    expect(out.stderr).not.toMatch(/\n\s+at /);
  });
});

describe('rein chat', () => {
  it('keeps the conversation across prompts, takes a line typed during a run as steering, and ends on exit', async () => {
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let seen!: () => void;
    const askedAboutTime = new Promise<void>((r) => (seen = r));
    const s = await server(async (request) => {
      const last = request.messages.at(-1)!;
      if (last.content === 'hello') return { text: 'First answer.' };
      if (last.content === 'what time is it?') {
        seen();
        await held; // the model "thinks" until the test has typed its steering line
        return { toolCalls: [{ name: 'get_current_time', arguments: {} }] };
      }
      if (last.role === 'tool') return { text: 'Second answer.' };
      return { text: `Steered: ${String(last.content)}` };
    });
    const chat = startRein(['chat', '--base-url', s.url], { env: cleanEnv() });
    try {
      await chat.waitFor(/> $/m);
      chat.write('hello');
      await chat.waitFor(/final_answer[^\n]*\n> $/);
      chat.write('what time is it?');
      await askedAboutTime;
      chat.write('also say hi');
      await chat.waitFor(/queued to steer the run: also say hi/);
      release();
      // The steering line enters after the tool batch, before the next model call.
      await chat.waitFor(/Steered: also say hi/);
      chat.write('exit');
      const out = await chat.done;
      expect(out.code).toBe(0);
      expect(out.stderr).toMatch(/→ get_current_time[\s\S]*↳ steering: also say hi/);
      // The second prompt's request carries the first exchange: the history is kept.
      expect(s.requests[1]!.messages.map((m) => m.content)).toEqual(['hello', 'First answer.', 'what time is it?']);
      expect(s.requests[2]!.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant', 'tool', 'user']);
    } finally {
      chat.kill();
    }
  });
});

describe('rein chat arguments', () => {
  it('a task on the command line is refused with a usage error saying where to type it (exit 2)', async () => {
    const out = await rein(['chat', '--no-store', '--base-url', 'http://127.0.0.1:9/v1', 'what is 2+2'], { env: cleanEnv() });
    expect(out.code).toBe(2);
    expect(out.stderr).toMatch(
      /rein chat takes no task on the command line \("what is 2\+2"\): type it at the > prompt, or use rein run "<task>"/,
    );
  });
});

describe('rein', () => {
  it('--help lists every command and the variables of the other providers', async () => {
    const out = await rein(['--help']);
    expect(out.code).toBe(0);
    expect(out.stdout).toMatch(/^ {2}scripted-server {2}a scripted model server/m);
    for (const name of ['ANTHROPIC_API_KEY', 'GEMINI_API_KEY', 'OPENROUTER_API_KEY', 'OLLAMA_BASE_URL']) expect(out.stdout).toContain(name);
  });

  it("chat --help leaves out the flags only rein run takes; --base-url is the server of the model's provider", async () => {
    const chat = await rein(['chat', '--help']);
    const run = await rein(['run', '--help']);
    expect([chat.code, run.code]).toEqual([0, 0]);
    expect(chat.stdout).not.toMatch(/--json|--no-stream/);
    expect(run.stdout).toMatch(/--json {2}/);
    expect(run.stdout).toMatch(/--no-stream {2}/);
    for (const help of [chat.stdout, run.stdout])
      expect(help).toMatch(/--base-url <url> +the server of the model's provider \(for openai\/… any\n\s+OpenAI-compatible server\)/);
  });

  it('an unknown command lists the commands (exit 2)', async () => {
    const out = await rein(['frobnicate']);
    expect(out.code).toBe(2);
    expect(out.stderr).toMatch(/unknown command "frobnicate".*run, chat, demo/);
  });
});

afterAll(() => {
  // Every child this file started has been reaped.
  for (const child of spawned) expect(isGone(child.pid)).toBe(true);
});

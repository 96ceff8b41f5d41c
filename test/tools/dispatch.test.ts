import { describe, expect, it, vi } from 'vitest';
import type { ToolCall } from '../../src/model/types.js';
import { defineTool } from '../../src/tools/define.js';
import { createDispatcher } from '../../src/tools/dispatch.js';
import { ToolRegistry } from '../../src/tools/registry.js';
import { compileValidator } from '../../src/tools/validate.js';
import type { DispatchContext, DispatcherOptions, Tool, ToolContext, ToolOutput } from '../../src/tools/types.js';
import { seedTools } from '../../src/tools/builtin/index.js';

function call(name: string, rawArguments: string, args: Record<string, unknown> = {}): ToolCall {
  return { type: 'tool_call', id: 'call-1', name, arguments: args, rawArguments };
}

function context(signal: AbortSignal = new AbortController().signal): DispatchContext {
  return { signal, runId: 'run-1', idempotencyKey: 'run-1:0:0' };
}

const textOf = (outcome: { result: { content: Array<{ type: string; text?: string }> } }): string =>
  outcome.result.content.map((p) => p.text ?? '').join('');

/** A dice-like tool whose execute is a spy. */
function spyTool(
  execute: (args: Record<string, unknown>, ctx: ToolContext) => ToolOutput | Promise<ToolOutput> = () => 'ok',
  extra: Partial<Tool> = {},
) {
  const spy = vi.fn(execute);
  const tool = defineTool({
    name: 'roll',
    description: 'Roll dice.',
    parameters: {
      type: 'object',
      properties: { sides: { type: 'integer', minimum: 1, default: 6 }, label: { type: 'string' } },
      additionalProperties: false,
    },
    execute: spy,
    ...extra,
  });
  return { tool, spy };
}

function setup(tool: Tool, options: DispatcherOptions = {}) {
  return createDispatcher(new ToolRegistry([tool, ...seedTools()]), options);
}

describe('dispatcher: stage order', () => {
  it('runs validate → beforeToolCall → permission → execute → afterToolCall, in that order', async () => {
    const order: string[] = [];
    const { tool } = spyTool(() => {
      order.push('execute');
      return 'done';
    });
    const dispatcher = setup(tool, {
      beforeToolCall: (_call, args) => {
        order.push(`before:${JSON.stringify(args)}`);
      },
      onConfirm: () => {
        order.push('confirm');
        return true;
      },
      afterToolCall: () => {
        order.push('after');
      },
    });
    const outcome = await dispatcher.dispatch(call('roll', '{"sides": "20"}'), context());
    expect(order).toEqual(['before:{"sides":20}', 'confirm', 'execute', 'after']);
    expect(outcome).toMatchObject({
      result: { role: 'tool', toolCallId: 'call-1', toolName: 'roll', content: [{ type: 'text', text: 'done' }], isError: false },
      terminate: false,
      arguments: { sides: 20 },
    });
    expect(outcome.errorCode).toBeUndefined();
    expect(outcome.durationMs).toBeGreaterThanOrEqual(0);
  });

  it('answers an unknown tool with the available tools and a suggestion, before parsing anything', async () => {
    const before = vi.fn();
    const dispatcher = setup(spyTool().tool, { beforeToolCall: before });
    const outcome = await dispatcher.dispatch(call('rol', 'not json at all'), context());
    expect(outcome.errorCode).toBe('unknown_tool');
    expect(outcome.result.isError).toBe(true);
    expect(textOf(outcome)).toBe('unknown tool "rol". Did you mean "roll"? Available tools: calculate, get_current_time, roll, roll_dice');
    expect(before).not.toHaveBeenCalled();
  });

  it.each([
    ['serach', 'search'],
    ['getCurrentTime', 'get_current_time'],
    ['functions.calculate', 'calculate'],
  ])('suggests the right name for %s', async (wrong, right) => {
    const search = defineTool({ name: 'search', description: 'Search.', parameters: { type: 'object' }, execute: () => '' });
    const dispatcher = setup(search);
    expect(textOf(await dispatcher.dispatch(call(wrong, '{}'), context()))).toContain(`Did you mean "${right}"?`);
  });

  it('does not suggest a name that is far off', async () => {
    const dispatcher = setup(spyTool().tool);
    expect(textOf(await dispatcher.dispatch(call('send_email', '{}'), context()))).not.toContain('Did you mean');
  });

  it('never lets unparseable arguments past parsing', async () => {
    const { tool, spy } = spyTool();
    const onConfirm = vi.fn(() => true);
    const dispatcher = setup(tool, { onConfirm });
    const broken = await dispatcher.dispatch(call('roll', '{"sides": 6 + 2}'), context());
    expect(broken.errorCode).toBe('invalid_arguments');
    expect(textOf(broken)).toMatch(
      /^invalid arguments for tool "roll": arguments are not valid JSON: .+ Send the arguments as one JSON object\.$/,
    );
    // Cut off mid-object (the output token limit): the model is told so, and what to do.
    const cut = await dispatcher.dispatch(call('roll', '{"sides": 6'), context());
    expect(cut.errorCode).toBe('invalid_arguments');
    expect(textOf(cut)).toMatch(
      /they stop before the object is complete .+ output token limit\. Send the call again, complete; if its arguments are long, do the work in smaller parts\.$/,
    );
    expect(onConfirm).not.toHaveBeenCalled();
    expect(spy).not.toHaveBeenCalled();
  });

  it('never asks permission for arguments that fail validation', async () => {
    const { tool, spy } = spyTool();
    const before = vi.fn();
    const onConfirm = vi.fn(() => true);
    const outcome = await setup(tool, { beforeToolCall: before, onConfirm }).dispatch(
      call('roll', '{"sides": "30s", "extra": 1}'),
      context(),
    );
    expect(outcome.errorCode).toBe('invalid_arguments');
    expect(textOf(outcome)).toBe(
      'invalid arguments for tool "roll":\n' +
        '- unexpected parameter "extra" (this tool accepts: sides, label)\n' +
        '- parameter "sides" expects an integer, got the string "30s"\n' +
        'Fix these and call "roll" again.',
    );
    expect(before).not.toHaveBeenCalled();
    expect(onConfirm).not.toHaveBeenCalled();
    expect(spy).not.toHaveBeenCalled();
  });

  it('repairs fenced arguments and fills defaults before executing', async () => {
    const { tool, spy } = spyTool();
    await setup(tool).dispatch(call('roll', '```json\n{"label": "x",}\n```'), context());
    expect(spy).toHaveBeenCalledWith({ label: 'x', sides: 6 }, expect.anything());
  });

  it('falls back to parsed arguments when the raw text is empty, without mutating them', async () => {
    const { tool, spy } = spyTool();
    const args = { sides: '8' };
    const outcome = await setup(tool).dispatch(call('roll', '', args), context());
    expect(spy).toHaveBeenCalledWith({ sides: 8 }, expect.anything());
    expect(outcome.arguments).toEqual({ sides: 8 });
    expect(args).toEqual({ sides: '8' });
  });
});

describe('dispatcher: hooks and permission', () => {
  it('a blocking beforeToolCall stops the call with its reason', async () => {
    const { tool, spy } = spyTool();
    const onConfirm = vi.fn(() => true);
    const outcome = await setup(tool, { beforeToolCall: () => ({ block: true, reason: 'no dice on Sundays' }), onConfirm }).dispatch(
      call('roll', '{}'),
      context(),
    );
    expect(outcome.errorCode).toBe('tool_denied');
    expect(textOf(outcome)).toBe('tool "roll" was blocked: no dice on Sundays');
    expect(onConfirm).not.toHaveBeenCalled();
    expect(spy).not.toHaveBeenCalled();
  });

  it('patched arguments are validated again', async () => {
    const { tool, spy } = spyTool();
    const good = await setup(tool, { beforeToolCall: () => ({ arguments: { sides: '12' } }) }).dispatch(call('roll', '{}'), context());
    expect(spy).toHaveBeenCalledWith({ sides: 12 }, expect.anything());
    expect(good.arguments).toEqual({ sides: 12 });

    spy.mockClear();
    const bad = await setup(tool, { beforeToolCall: () => ({ arguments: { sides: 0 } }) }).dispatch(call('roll', '{}'), context());
    expect(bad.errorCode).toBe('invalid_arguments');
    expect(textOf(bad)).toContain('parameter "sides" must be >= 1, got 0');
    expect(textOf(bad)).toContain('changed by the beforeToolCall hook');
    expect(spy).not.toHaveBeenCalled();
  });

  it.each([
    [false, 'permission denied for tool "roll": not allowed'],
    [{ allow: false, reason: 'the user said no' }, 'permission denied for tool "roll": the user said no'],
  ])('a denied call (%j) never executes', async (decision, text) => {
    const { tool, spy } = spyTool();
    const outcome = await setup(tool, { onConfirm: () => decision }).dispatch(call('roll', '{}'), context());
    expect(outcome.errorCode).toBe('tool_denied');
    expect(textOf(outcome)).toBe(text);
    expect(outcome.terminate).toBe(false);
    expect(spy).not.toHaveBeenCalled();
  });

  it('permission receives the validated arguments and the tool', async () => {
    const { tool } = spyTool();
    const onConfirm = vi.fn(async () => ({ allow: true }));
    await setup(tool, { onConfirm }).dispatch(call('roll', '{"sides": "4"}'), context());
    expect(onConfirm).toHaveBeenCalledWith(expect.objectContaining({ id: 'call-1' }), { sides: 4 }, tool);
  });

  it('a throwing permission check denies', async () => {
    const { tool, spy } = spyTool();
    const outcome = await setup(tool, {
      onConfirm: () => {
        throw new Error('policy service down');
      },
    }).dispatch(call('roll', '{}'), context());
    expect(outcome.errorCode).toBe('tool_denied');
    expect(textOf(outcome)).toContain('policy service down');
    expect(spy).not.toHaveBeenCalled();
  });

  it('a throwing beforeToolCall becomes an error result', async () => {
    const { tool, spy } = spyTool();
    const outcome = await setup(tool, {
      beforeToolCall: async () => {
        throw new Error('hook bug');
      },
    }).dispatch(call('roll', '{}'), context());
    expect(outcome).toMatchObject({ errorCode: 'tool_failed', result: { isError: true } });
    expect(textOf(outcome)).toBe('tool "roll" was not run: the beforeToolCall hook failed: hook bug');
    expect(spy).not.toHaveBeenCalled();
  });

  it('a blocking beforeToolCall without a reason says so', async () => {
    const { tool, spy } = spyTool();
    const outcome = await setup(tool, { beforeToolCall: () => ({ block: true }) }).dispatch(call('roll', '{}'), context());
    expect(outcome.errorCode).toBe('tool_denied');
    expect(textOf(outcome)).toBe('tool "roll" was blocked: no reason given');
    expect(spy).not.toHaveBeenCalled();
  });

  it.each([
    ['a string', 'stop', 'a string'],
    ['a typo', { blok: true }, 'an object with keys "blok"'],
    ['arguments that are not an object', { arguments: 'x' }, 'an object with keys "arguments"'],
  ])('a beforeToolCall returning %s is an error result saying what it must return', async (_what, answer, shape) => {
    const { tool, spy } = spyTool();
    const hook = (() => answer) as unknown as DispatcherOptions['beforeToolCall'];
    const outcome = await setup(tool, { beforeToolCall: hook }).dispatch(call('roll', '{}'), context());
    expect(outcome).toMatchObject({ errorCode: 'tool_failed', result: { isError: true } });
    expect(textOf(outcome)).toBe(
      `tool "roll" was not run: the beforeToolCall hook must return nothing, { block: true, reason? } or { arguments: { … } }; it returned ${shape}`,
    );
    expect(spy).not.toHaveBeenCalled();
  });

  it('an empty object from beforeToolCall changes nothing', async () => {
    const { tool, spy } = spyTool();
    const outcome = await setup(tool, { beforeToolCall: () => ({}) as never }).dispatch(call('roll', '{}'), context());
    expect(outcome.errorCode).toBeUndefined();
    expect(spy).toHaveBeenCalledOnce();
  });

  it.each([
    [undefined, 'undefined'],
    ['yes', 'a string'],
    [{ allowed: true }, 'an object with keys "allowed"'],
  ])('an onConfirm returning %j denies, saying what it must return', async (decision, shape) => {
    const { tool, spy } = spyTool();
    const onConfirm = (() => decision) as unknown as DispatcherOptions['onConfirm'];
    const outcome = await setup(tool, { onConfirm }).dispatch(call('roll', '{}'), context());
    expect(outcome.errorCode).toBe('tool_denied');
    expect(textOf(outcome)).toBe(
      `permission denied for tool "roll": the permission check returned ${shape}; onConfirm must return true, false or { allow: boolean, reason? }`,
    );
    expect(spy).not.toHaveBeenCalled();
  });

  it('afterToolCall may replace the result but not its pairing with the call', async () => {
    const { tool } = spyTool(() => 'secret=hunter2');
    const outcome = await setup(tool, {
      afterToolCall: (_call, result) => ({ ...result, toolCallId: 'other', content: [{ type: 'text', text: 'secret=***' }] }),
    }).dispatch(call('roll', '{}'), context());
    expect(outcome.result).toEqual({
      role: 'tool',
      toolCallId: 'call-1',
      toolName: 'roll',
      content: [{ type: 'text', text: 'secret=***' }],
      isError: false,
    });
  });

  it('afterToolCall turning a result into an error sets the error code and drops terminate', async () => {
    const { tool } = spyTool(() => ({ content: 'ok', terminate: true }));
    const outcome = await setup(tool, { afterToolCall: (_call, result) => ({ ...result, isError: true }) }).dispatch(
      call('roll', '{}'),
      context(),
    );
    expect(outcome).toMatchObject({ errorCode: 'tool_failed', terminate: false });
  });

  it('a throwing afterToolCall becomes an error result', async () => {
    const { tool } = spyTool();
    const outcome = await setup(tool, {
      afterToolCall: () => {
        throw new Error('after bug');
      },
    }).dispatch(call('roll', '{}'), context());
    expect(outcome.errorCode).toBe('tool_failed');
    expect(textOf(outcome)).toBe('tool "roll" ran, but the afterToolCall hook failed: after bug');
  });
});

describe('dispatcher: execution', () => {
  it('a tool that throws becomes an error result with its message', async () => {
    const { tool } = spyTool(async () => {
      throw new Error('disk full');
    });
    const outcome = await setup(tool).dispatch(call('roll', '{}'), context());
    expect(outcome).toMatchObject({ errorCode: 'tool_failed', terminate: false, result: { isError: true } });
    expect(textOf(outcome)).toBe('tool "roll" failed: disk full');
  });

  it('a tool that throws synchronously, or throws a non-Error, is handled the same way', async () => {
    const sync = spyTool(() => {
      throw new TypeError('bad');
    });
    expect(textOf(await setup(sync.tool).dispatch(call('roll', '{}'), context()))).toBe('tool "roll" failed: bad');
    const odd = spyTool(() => {
      throw 'just a string';
    });
    expect(textOf(await setup(odd.tool).dispatch(call('roll', '{}'), context()))).toBe('tool "roll" failed: just a string');
  });

  it('says what a thrown value that is not an Error was, never "[object Object]"', async () => {
    const failed = async (thrown: unknown): Promise<string> => {
      const { tool } = spyTool(() => {
        throw thrown;
      });
      return textOf(await setup(tool).dispatch(call('roll', '{}'), context()));
    };
    const circ: Record<string, unknown> = { code: 'E_LOOP' };
    circ.self = circ;
    expect(await failed(circ)).toBe('tool "roll" failed: {"code":"E_LOOP","self":"[Circular]"}');
    expect(await failed({ code: 'E', n: 10n })).toBe('tool "roll" failed: {"code":"E","n":"10"}');
    expect(await failed(new Map([['status', 503]]))).toBe('tool "roll" failed: {"status":503}');
    expect(await failed({ toString: () => 'custom failure' })).toBe('tool "roll" failed: custom failure');
    expect(await failed(new (class HttpFailure {})())).toBe('tool "roll" failed: HttpFailure {}');
    expect(await failed(Object.create(null))).toBe('tool "roll" failed: {}');
    expect(await failed(42)).toBe('tool "roll" failed: 42');
    expect(await failed(undefined)).toBe('tool "roll" failed: undefined');
    expect(await failed(null)).toBe('tool "roll" failed: null');
    expect(await failed(Symbol('why'))).toBe('tool "roll" failed: Symbol(why)');
    // An Error from another realm is not `instanceof Error`: its own toString says it.
    const { runInNewContext } = await import('node:vm');
    expect(await failed(runInNewContext('new RangeError("elsewhere")'))).toBe('tool "roll" failed: RangeError: elsewhere');
  });

  it('cuts a long thrown value, never inside an emoji', async () => {
    const { tool } = spyTool(async () => {
      throw { rows: 'x'.repeat(990) + '😀'.repeat(100) };
    });
    const text = textOf(await setup(tool).dispatch(call('roll', '{}'), context()));
    const prefix = 'tool "roll" failed: ';
    // 9 characters of JSON and 990 x's: a cut at 1,000 would fall inside the first emoji.
    expect(text).toBe(`${prefix}{"rows":"${'x'.repeat(990)}… (202 more characters)`);
    expect(text).not.toMatch(/[\ud800-\udbff](?![\udc00-\udfff])/);
  });

  it('a tool that ignores its signal still times out, and its signal fires', async () => {
    let toolSignal: AbortSignal | undefined;
    const { tool } = spyTool(
      (_args, ctx) => {
        toolSignal = ctx.signal;
        return new Promise<never>(() => {}); // never settles, never listens
      },
      { timeoutMs: 50 },
    );
    const outcome = await setup(tool).dispatch(call('roll', '{}'), context());
    expect(outcome).toMatchObject({ errorCode: 'tool_timeout', terminate: false, result: { isError: true } });
    expect(textOf(outcome)).toBe('tool "roll" timed out after 50 ms');
    expect(toolSignal?.aborted).toBe(true);
  });

  it('uses the dispatcher default timeout when the tool has none', async () => {
    const { tool } = spyTool(() => new Promise<never>(() => {}));
    const outcome = await setup(tool, { defaultTimeoutMs: 50 }).dispatch(call('roll', '{}'), context());
    expect(textOf(outcome)).toBe('tool "roll" timed out after 50 ms');
  });

  it('an abort of the run signal ends a running tool as aborted', async () => {
    const controller = new AbortController();
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    let toolSignal: AbortSignal | undefined;
    const { tool } = spyTool((_args, ctx) => {
      toolSignal = ctx.signal;
      started();
      return new Promise<never>(() => {});
    });
    const pending = setup(tool).dispatch(call('roll', '{}'), context(controller.signal));
    await running;
    controller.abort();
    const outcome = await pending;
    expect(outcome).toMatchObject({ errorCode: 'aborted', result: { isError: true } });
    expect(textOf(outcome)).toBe('tool "roll" was aborted before it finished');
    expect(toolSignal?.aborted).toBe(true);
  });

  it('does not start a tool when the run is already aborted', async () => {
    const controller = new AbortController();
    controller.abort();
    const { tool, spy } = spyTool();
    const outcome = await setup(tool).dispatch(call('roll', '{}'), context(controller.signal));
    expect(outcome.errorCode).toBe('aborted');
    expect(spy).not.toHaveBeenCalled();
  });

  it('an abort while the schema of a first call compiles stops the call before the tool starts', async () => {
    const controller = new AbortController();
    const { tool, spy } = spyTool();
    // Validators are cached by content: a schema no other test compiles.
    tool.parameters = { ...tool.parameters, description: 'compiled first here' };
    const dispatcher = setup(tool);
    const pending = dispatcher.dispatchNow(call('roll', '{}'), context(controller.signal));
    expect(pending).toBeInstanceOf(Promise);
    controller.abort();
    const outcome = await pending;
    expect(outcome).toMatchObject({ errorCode: 'aborted', result: { isError: true } });
    expect(textOf(outcome)).toBe('tool "roll" was not run: the run was aborted');
    expect(spy).not.toHaveBeenCalled();
  });

  it.each(['beforeToolCall', 'onConfirm'] as const)('an abort while an async %s hook is pending stops the call', async (hook) => {
    const controller = new AbortController();
    const { tool, spy } = spyTool();
    // The abort lands while the hook's promise is pending (a slow policy service, a person deciding).
    const options: DispatcherOptions =
      hook === 'beforeToolCall'
        ? { beforeToolCall: async () => void controller.abort() }
        : { onConfirm: async () => (controller.abort(), true) };
    const outcome = await setup(tool, options).dispatch(call('roll', '{"sides": 4}'), context(controller.signal));
    expect(outcome).toMatchObject({ errorCode: 'aborted', arguments: { sides: 4 } });
    expect(textOf(outcome)).toBe('tool "roll" was not run: the run was aborted');
    expect(spy).not.toHaveBeenCalled();
  });

  it("a run aborted as the tool starts still fires the tool's signal and ends the call as aborted", async () => {
    const controller = new AbortController();
    let toolSignal: AbortSignal | undefined;
    const { tool } = spyTool((_args, ctx) => {
      controller.abort(); // lands after the dispatcher's last check, before its abort listener
      toolSignal = ctx.signal;
      return new Promise<never>(() => {});
    });
    await compileValidator(tool.parameters);
    const outcome = await setup(tool).dispatch(call('roll', '{}'), context(controller.signal));
    expect(outcome.errorCode).toBe('aborted');
    expect(textOf(outcome)).toBe('tool "roll" was aborted before it finished');
    expect(toolSignal?.aborted).toBe(true);
  });

  it('passes the call identity, idempotency key and a tagged logger to the tool', async () => {
    const log = vi.fn();
    const { tool, spy } = spyTool((_args, ctx) => {
      ctx.log('rolling', { n: 1 });
      return 'ok';
    });
    await setup(tool, { log }).dispatch(call('roll', '{}'), context());
    expect(spy.mock.calls[0]![1]).toMatchObject({ runId: 'run-1', toolCallId: 'call-1', idempotencyKey: 'run-1:0:0' });
    expect(log).toHaveBeenCalledWith('rolling', { tool: 'roll', toolCallId: 'call-1', n: 1 });
  });
});

describe('dispatcher: output', () => {
  it('cuts long output with a marker that counts what was removed', async () => {
    const { tool } = spyTool(() => 'a'.repeat(500) + 'b'.repeat(500));
    const outcome = await setup(tool, { maxOutputChars: 100 }).dispatch(call('roll', '{}'), context());
    const text = textOf(outcome);
    expect(text).toBe(`${'a'.repeat(50)}\n… [truncated: 900 of 1,000 characters removed] …\n${'b'.repeat(50)}`);
  });

  it('keeps details and the terminate flag of a successful result', async () => {
    const { tool } = spyTool(() => ({ content: [{ type: 'text', text: 'bye' }], details: { n: 1 }, terminate: true }));
    const outcome = await setup(tool).dispatch(call('roll', '{}'), context());
    expect(outcome).toMatchObject({ terminate: true, result: { details: { n: 1 }, isError: false } });
  });

  it('an error output never terminates and reports tool_failed', async () => {
    const { tool } = spyTool(() => ({ content: 'nope', isError: true, terminate: true }));
    const outcome = await setup(tool).dispatch(call('roll', '{}'), context());
    expect(outcome).toMatchObject({ terminate: false, errorCode: 'tool_failed', result: { isError: true } });
  });

  it('shows malformed outputs instead of crashing', async () => {
    const none = spyTool(() => undefined as unknown as string);
    expect(textOf(await setup(none.tool).dispatch(call('roll', '{}'), context()))).toBe('(no output)');
    const data = spyTool(() => ({ rows: 2 }) as unknown as string);
    const outcome = await setup(data.tool).dispatch(call('roll', '{}'), context());
    expect(textOf(outcome)).toBe('{"rows":2}');
    expect(outcome.result.isError).toBe(false);
  });

  it('results of outputs JSON cannot carry stay JSON (events must be)', async () => {
    const circular: Record<string, unknown> = { a: 1 };
    circular.self = circular;
    for (const output of [circular, { n: 10n }, { content: 'ok', details: circular }]) {
      const { tool } = spyTool(() => output as unknown as string);
      const outcome = await setup(tool).dispatch(call('roll', '{}'), context());
      expect(outcome.result.isError).toBe(false);
      expect(() => JSON.stringify(outcome.result)).not.toThrow();
    }
  });

  it('never throws, even when the registry does', async () => {
    const dispatcher = createDispatcher({
      get: () => {
        throw new Error('registry exploded');
      },
      names: () => [],
    });
    const outcome = await dispatcher.dispatch(call('x', '{}'), context());
    expect(outcome).toMatchObject({ errorCode: 'internal', result: { isError: true, toolCallId: 'call-1' } });
  });
});

describe('dispatchNow: the synchronous fast path', () => {
  it('a synchronous tool with a compiled schema and no hooks answers without a promise', async () => {
    const { tool } = spyTool(() => 'done');
    const dispatcher = setup(tool);
    await dispatcher.dispatch(call('roll', '{}'), context()); // compiles the schema
    const outcome = dispatcher.dispatchNow(call('roll', '{"sides": "8"}'), context());
    expect(outcome).not.toBeInstanceOf(Promise);
    expect(outcome).toMatchObject({ terminate: false, arguments: { sides: 8 }, result: { isError: false } });
    expect(typeof (outcome as { durationMs: number }).durationMs).toBe('number');
  });

  it('anything that has to wait answers with a promise of the same outcome', async () => {
    const { tool } = spyTool(async () => 'later');
    const asyncTool = setup(tool);
    await asyncTool.dispatch(call('roll', '{}'), context());
    const pending = asyncTool.dispatchNow(call('roll', '{}'), context());
    expect(pending).toBeInstanceOf(Promise);
    expect(textOf(await pending)).toBe('later');

    const { tool: syncTool } = spyTool(() => 'ok');
    const withHook = setup(syncTool, { onConfirm: () => true });
    const confirmed = withHook.dispatchNow(call('roll', '{}'), context());
    expect(confirmed).toBeInstanceOf(Promise);
    expect(textOf(await confirmed)).toBe('ok');
  });

  it('a synchronous tool that throws is an error result, synchronously', async () => {
    const { tool } = spyTool(() => {
      throw new Error('kaput');
    });
    const dispatcher = setup(tool);
    await dispatcher.dispatch(call('roll', '{}'), context());
    const outcome = dispatcher.dispatchNow(call('roll', '{}'), context());
    expect(outcome).not.toBeInstanceOf(Promise);
    expect(outcome).toMatchObject({ errorCode: 'tool_failed', result: { isError: true } });
    expect(textOf(outcome as { result: { content: Array<{ type: string; text?: string }> } })).toMatch(/kaput/);
  });
});

/**
 * The dispatcher: one tool call in, one tool result out, in DESIGN.md's fixed order —
 * known tool? → repair + parse → validate → beforeToolCall → permission → execute with
 * timeout → normalize + truncate → afterToolCall → wrap. Every failure is an error result
 * written for the model ("which tool, what was wrong, what to send instead"); nothing here
 * throws to the caller.
 */
import { ReinError, type ErrorCode } from '../errors.js';
import type { ToolCall, ToolResultMessage } from '../model/types.js';
import { normalizeOutput, safeJson } from './output.js';
import { repairArguments, type RepairResult } from './repair.js';
import { ABORTED, untilAborted } from './until-aborted.js';
import { ArgumentIssues } from './standard-schema.js';
import { closestName } from './suggest.js';
import {
  cutToolOutput,
  DEFAULT_MAX_OUTPUT_CHARS,
  formatCount,
  isLowSurrogate,
  READ_TOOL_OUTPUT,
  textLength,
  withFullOutput,
} from './truncate.js';
import type {
  BeforeToolCallResult,
  CheckedCall,
  DispatchContext,
  DispatchOutcome,
  DispatcherOptions,
  Tool,
  ToolContext,
  ToolReturn,
} from './types.js';
import { compileValidator, readyValidator, type ArgsValidator } from './validate.js';
import { isRecord } from '../util/json.js';
import { jsonValueDepth, MAX_ARGUMENT_DEPTH, TOO_DEEP_ARGUMENTS } from '../model/json-limits.js';

/** Default per-call timeout of a tool, in ms. */
export const DEFAULT_TOOL_TIMEOUT_MS = 30_000;

/** Where the dispatcher finds tools; a {@link ToolRegistry} is one. Read on every call. */
export interface ToolLookup {
  get(name: string): Tool | undefined;
  names(): string[];
}

/** Runs tool calls. Created by {@link createDispatcher}. */
export interface Dispatcher {
  /** Never rejects: every failure is an error result in the outcome. */
  dispatch(call: ToolCall, ctx: DispatchContext): Promise<DispatchOutcome>;
  /**
   * The same, but synchronous when nothing has to wait (a synchronous tool, a compiled
   * schema, no hooks): the loop's hot path, which then pays for no promise. Never throws.
   */
  dispatchNow(call: ToolCall, ctx: DispatchContext): DispatchOutcome | Promise<DispatchOutcome>;
  /**
   * Steps (1)–(3) alone, nothing run: the arguments the tool would receive (repaired,
   * coerced, defaults filled), so that the log, the trace, the policy and a person see
   * what will run. Synchronous once the tool's schema is compiled. Never throws; a call
   * it refuses is refused again, with the message, by its dispatch.
   */
  check(call: ToolCall): CheckedCall | Promise<CheckedCall>;
}

type Outcome = Omit<DispatchOutcome, 'durationMs'>;
type Checked = { ok: true; value: Record<string, unknown> } | { ok: false; code: ErrorCode; text: string };
type Settled = { kind: 'ok'; output: ToolReturn } | { kind: 'threw'; error: unknown } | { kind: 'timeout' } | { kind: 'aborted' };

const MAX_LISTED_TOOLS = 40;
/** How much of a thrown value that is not an Error goes into a message: a huge object would drown it. */
const MAX_THROWN_CHARS = 1_000;

/**
 * Creates a dispatcher over a registry. Hooks that throw become error results (a throwing
 * permission check denies). `afterToolCall` sees every call that reached execution
 * (succeeded, failed, timed out or aborted), not calls refused before it. The timeout is
 * `tool.timeoutMs ?? options.defaultTimeoutMs ?? 30 000`; `Infinity` or `0` means none.
 * Output over `maxOutputChars` reaches the model as head + tail around a marker; its whole
 * text stays in `result.details.fullOutput` (see `truncate.ts`), and when a tool named
 * `read_tool_output` is registered the marker tells the model how to read the rest.
 * The first call of a tool loads ajv and compiles its schema; to pay that up front, call
 * `compileValidator(tool.parameters)` (from `validate.ts`) for each tool at start-up.
 *
 * @example
 * const dispatcher = createDispatcher(new ToolRegistry(seedTools()), { defaultTimeoutMs: 10_000 });
 * const { result, errorCode } = await dispatcher.dispatch(call, { signal, runId, idempotencyKey });
 */
export function createDispatcher(registry: ToolLookup, options: DispatcherOptions = {}): Dispatcher {
  const maxChars = options.maxOutputChars ?? DEFAULT_MAX_OUTPUT_CHARS;

  /**
   * Steps (1)–(9). Synchronous for the common case — a known synchronous tool whose schema
   * is compiled, no hooks — so such a call costs no promise at all; anything that has to
   * wait (first compilation, a hook, an async tool) continues asynchronously.
   */
  function run(call: ToolCall, ctx: DispatchContext): Outcome | Promise<Outcome> {
    if (ctx.signal.aborted) return notRun(call);

    // (1) Known tool?
    const tool = registry.get(call.name);
    if (!tool) return failure(call, 'unknown_tool', unknownToolMessage(call.name, registry.names()));
    if (ctx.checkedArguments) {
      if (options.beforeToolCall || options.onConfirm) return runChecked(call, ctx, tool, ctx.checkedArguments, null);
      return runExecute(call, ctx, tool, ctx.checkedArguments);
    }

    // (2) Repair and parse.
    const parsed = parseArguments(call);
    if (!parsed.ok) {
      const advice = parsed.cutOff
        ? 'Send the call again, complete; if its arguments are long, do the work in smaller parts.'
        : 'Send the arguments as one JSON object.';
      const text = `invalid arguments for tool "${tool.name}": ${parsed.error}. ${advice}`;
      return failure(call, 'invalid_arguments', text);
    }
    // (3) Validate: coerce types, fill defaults. Synchronous once the validator is compiled.
    const validator = readyValidator(tool.parameters);
    if (!validator || options.beforeToolCall || options.onConfirm) return runChecked(call, ctx, tool, parsed.value, validator);
    const checked = checkWith(validator, tool, parsed.value);
    if (!checked.ok) return failure(call, checked.code, checked.text, parsed.value);
    return runExecute(call, ctx, tool, checked.value);
  }

  /** Steps (3)–(5) when one of them has to wait. */
  async function runChecked(
    call: ToolCall,
    ctx: DispatchContext,
    tool: Tool,
    parsedArgs: Record<string, unknown>,
    /** `null`: the arguments are checked already (see `DispatchContext.checkedArguments`). */
    validator: ArgsValidator | undefined | null,
  ): Promise<Outcome> {
    let args = parsedArgs;
    if (validator !== null) {
      const checked = validator ? checkWith(validator, tool, parsedArgs) : await validate(tool, parsedArgs);
      if (!checked.ok) return failure(call, checked.code, checked.text, parsedArgs);
      args = checked.value;
    }
    // An abort can land during any await here (the first compilation, a slow hook, a person
    // deciding): check again after each one, or the tool would start on an aborted run.
    if (ctx.signal.aborted) return notRun(call, args);

    // (4) beforeToolCall: block, or patch (validated again); (5) permission.
    if (options.beforeToolCall) {
      const before = await untilAborted(runBeforeHook(options.beforeToolCall, call, tool, args), ctx.signal);
      if (before === ABORTED) return notRun(call, args);
      if (!before.ok) return before.outcome;
      args = before.args;
      if (ctx.signal.aborted) return notRun(call, args);
    }
    if (options.onConfirm) {
      // A person may take minutes, or never answer: an abort ends the wait.
      const denied = await untilAborted(checkPermission(options.onConfirm, call, tool, args), ctx.signal);
      if (denied === ABORTED) return notRun(call, args);
      if (denied) return denied;
      if (ctx.signal.aborted) return notRun(call, args);
    }
    return runExecute(call, ctx, tool, args);
  }

  /** (6) Execute with timeout; (7) normalize and truncate; (8) afterToolCall. */
  function runExecute(call: ToolCall, ctx: DispatchContext, tool: Tool, args: Record<string, unknown>): Outcome | Promise<Outcome> {
    const timeoutMs = tool.timeoutMs ?? options.defaultTimeoutMs ?? DEFAULT_TOOL_TIMEOUT_MS;
    const running = execute(tool, args, call, ctx, timeoutMs);
    if (running instanceof Promise) return running.then((settled) => settle(call, ctx, args, settled, timeoutMs));
    return settle(call, ctx, args, running, timeoutMs);
  }

  function settle(
    call: ToolCall,
    ctx: DispatchContext,
    args: Record<string, unknown>,
    settled: Settled,
    timeoutMs: number,
  ): Outcome | Promise<Outcome> {
    const outcome = toOutcome(call, args, settled, timeoutMs, maxChars, registry);
    if (!options.afterToolCall) return outcome;
    const after = untilAborted(runAfterHook(options.afterToolCall, call, args, outcome), ctx.signal);
    return after instanceof Promise ? after.then((replaced) => (replaced === ABORTED ? outcome : replaced)) : after;
  }

  /** Validates in place (`args` is always ours: a fresh parse or a clone). */
  async function validate(tool: Tool, args: Record<string, unknown>): Promise<Checked> {
    let validator;
    try {
      validator = await compileValidator(tool.parameters);
    } catch (error) {
      // Not the model's fault, but the model should learn it cannot use this tool.
      const text = `tool "${tool.name}" cannot be used: its parameters schema is broken (${messageOf(error)})`;
      return { ok: false, code: 'tool_failed', text };
    }
    return checkWith(validator, tool, args);
  }

  function checkWith(validator: ArgsValidator, tool: Tool, args: Record<string, unknown>): Checked {
    const result = validator(args);
    return result.ok ? result : { ok: false, code: 'invalid_arguments', text: invalidMessage(tool.name, result.errors) };
  }

  async function runBeforeHook(
    hook: NonNullable<DispatcherOptions['beforeToolCall']>,
    call: ToolCall,
    tool: Tool,
    args: Record<string, unknown>,
  ): Promise<{ ok: true; args: Record<string, unknown> } | { ok: false; outcome: Outcome }> {
    const label = `tool "${tool.name}"`;
    const stop = (code: ErrorCode, text: string, used = args) => ({
      ok: false as const,
      outcome: failure(call, code, text, used),
    });
    let answer: BeforeToolCallResult;
    try {
      answer = await hook(call, args, tool);
    } catch (error) {
      return stop('tool_failed', `${label} was not run: the beforeToolCall hook failed: ${messageOf(error)}`);
    }
    if (answer === undefined || answer === null) return { ok: true, args };
    // Plain JavaScript hooks return anything; a typo (`{ blok: true }`) must not let the call through.
    if (!isBeforeAnswer(answer)) {
      const problem = `the beforeToolCall hook must return nothing, { block: true, reason? } or { arguments: { … } }; it returned ${shapeOf(answer)}`;
      return stop('tool_failed', `${label} was not run: ${problem}`);
    }
    if ('block' in answer && answer.block) {
      return stop('tool_denied', `${label} was blocked: ${answer.reason || 'no reason given'}`);
    }
    if (!('arguments' in answer)) return { ok: true, args };
    let patched: Record<string, unknown>;
    try {
      patched = structuredClone(answer.arguments);
    } catch (error) {
      const problem = `the beforeToolCall hook returned arguments that are not plain data: ${messageOf(error)}`;
      return stop('tool_failed', `${label} was not run: ${problem}`);
    }
    const rechecked = await validate(tool, patched);
    if (!rechecked.ok) {
      return stop(rechecked.code, `${rechecked.text} (these arguments were changed by the beforeToolCall hook)`, patched);
    }
    return { ok: true, args: rechecked.value };
  }

  function execute(
    tool: Tool,
    args: Record<string, unknown>,
    call: ToolCall,
    ctx: DispatchContext,
    timeoutMs: number,
  ): Settled | Promise<Settled> {
    // The tool's own AbortController is made only when the tool reads `ctx.signal`: most
    // tools never do, and an AbortSignal costs more than the rest of a dispatch.
    let controller: AbortController | undefined;
    let abortReason: unknown;
    const toolCtx: ToolContext = {
      get signal(): AbortSignal {
        if (!controller) {
          controller = new AbortController();
          if (abortReason !== undefined) controller.abort(abortReason);
        }
        return controller.signal;
      },
      runId: ctx.runId,
      toolCallId: call.id,
      idempotencyKey: ctx.idempotencyKey,
      log: (message, data) => options.log?.(message, { tool: tool.name, toolCallId: call.id, ...data }),
      progress: (update) => options.onProgress?.(call, update),
    };
    let returned: ToolReturn | Promise<ToolReturn>;
    try {
      returned = tool.execute(args, toolCtx);
    } catch (error) {
      return { kind: 'threw', error };
    }
    // A synchronous tool has finished already: there is nothing to time out or interrupt,
    // so it pays for no timer and no abort listener.
    if (!isPromiseLike(returned)) return { kind: 'ok', output: returned };

    let interrupt!: (settled: Settled) => void;
    const interrupted = new Promise<Settled>((resolve) => (interrupt = resolve));
    // Settle before aborting: a tool that rejects synchronously on abort must not win the race.
    const stop = (settled: Settled, reason: unknown): void => {
      interrupt(settled);
      abortReason = reason;
      controller?.abort(reason);
    };
    const onAbort = (): void => stop({ kind: 'aborted' }, ctx.signal.reason);
    // A listener added to an aborted signal never fires: the tool's signal must still go off.
    if (ctx.signal.aborted) onAbort();
    else ctx.signal.addEventListener('abort', onAbort, { once: true });
    const onTimeout = (): void =>
      stop({ kind: 'timeout' }, new DOMException(`tool "${tool.name}" timed out after ${timeoutMs} ms`, 'TimeoutError'));
    const timer = timeoutMs > 0 && Number.isFinite(timeoutMs) ? setTimeout(onTimeout, timeoutMs) : undefined;
    // A tool that ignores its signal keeps running in the background; we stop waiting for it.
    const running = Promise.resolve(returned).then(
      (output): Settled => ({ kind: 'ok', output }),
      (error: unknown): Settled => ({ kind: 'threw', error }),
    );
    return Promise.race([running, interrupted]).finally(() => {
      clearTimeout(timer);
      ctx.signal.removeEventListener('abort', onAbort);
    });
  }

  function dispatchNow(call: ToolCall, ctx: DispatchContext): DispatchOutcome | Promise<DispatchOutcome> {
    const started = performance.now();
    let outcome: Outcome | Promise<Outcome>;
    try {
      outcome = run(call, ctx);
    } catch (error) {
      return crashed(call, error, started);
    }
    if (outcome instanceof Promise) {
      return outcome.then(
        (o) => timed(o, started),
        (error: unknown) => crashed(call, error, started),
      );
    }
    return timed(outcome, started);
  }

  function check(call: ToolCall): CheckedCall | Promise<CheckedCall> {
    const tool = registry.get(call.name);
    if (!tool) return { ok: false };
    const parsed = parseArguments(call);
    if (!parsed.ok) return { ok: false };
    const answer = (checked: Checked): CheckedCall => {
      if (!checked.ok) return { ok: false };
      return parsed.repaired
        ? { ok: true, arguments: checked.value, repaired: true, repairs: parsed.repairs, repairedArguments: parsed.text }
        : { ok: true, arguments: checked.value, repaired: false };
    };
    const validator = readyValidator(tool.parameters);
    try {
      return validator
        ? answer(checkWith(validator, tool, parsed.value))
        : validate(tool, parsed.value).then(answer, () => ({ ok: false }));
    } catch {
      return { ok: false };
    }
  }

  return {
    dispatchNow,
    dispatch: (call, ctx) => Promise.resolve(dispatchNow(call, ctx)),
    check,
  };
}

/** Outcomes are fresh objects made for this call: complete them in place. */
function timed(outcome: Outcome, started: number): DispatchOutcome {
  const complete = outcome as DispatchOutcome;
  complete.durationMs = performance.now() - started;
  return complete;
}

/** Every stage of a dispatch already turns its failures into results; this is the last net. */
function crashed(call: ToolCall, error: unknown, started: number): DispatchOutcome {
  return timed(failure(call, 'internal', `tool "${call.name}" could not be run: ${messageOf(error)}`), started);
}

/** Fails closed: a permission check that throws denies. */
async function checkPermission(
  onConfirm: NonNullable<DispatcherOptions['onConfirm']>,
  call: ToolCall,
  tool: Tool,
  args: Record<string, unknown>,
): Promise<Outcome | undefined> {
  const { allow, reason } = await askConfirm(onConfirm, call, args, tool);
  if (allow) return undefined;
  return failure(call, 'tool_denied', `permission denied for tool "${tool.name}": ${reason || 'not allowed'}`, args);
}

/**
 * Asks an `onConfirm` hook and reads its answer: `true`/`false` or `{ allow, reason? }`.
 * Anything else, or a throw, denies (fails closed) with a reason that says what the hook
 * should have answered (a forgotten `return`) or why it failed.
 */
export async function askConfirm(
  onConfirm: NonNullable<DispatcherOptions['onConfirm']>,
  call: ToolCall,
  args: Record<string, unknown>,
  tool: Tool,
): Promise<{ allow: boolean; reason?: string }> {
  try {
    const decision: unknown = await onConfirm(call, args, tool);
    if (typeof decision === 'boolean') return { allow: decision };
    if (isRecord(decision) && typeof decision.allow === 'boolean') {
      return typeof decision.reason === 'string' ? { allow: decision.allow, reason: decision.reason } : { allow: decision.allow };
    }
    return {
      allow: false,
      reason: `the permission check returned ${shapeOf(decision)}; onConfirm must return true, false or { allow: boolean, reason? }`,
    };
  } catch (error) {
    return { allow: false, reason: `the permission check failed (${messageOf(error)})` };
  }
}

function toOutcome(
  call: ToolCall,
  args: Record<string, unknown>,
  settled: Settled,
  timeoutMs: number,
  maxChars: number,
  registry: ToolLookup,
): Outcome {
  const label = `tool "${call.name}"`;
  switch (settled.kind) {
    case 'timeout':
      return failure(call, 'tool_timeout', `${label} timed out after ${timeoutMs} ms`, args);
    case 'aborted':
      return failure(call, 'aborted', `${label} was aborted before it finished`, args);
    case 'threw':
      // The schema's own parse (zod's refinements) refused the arguments: the model's to fix.
      if (settled.error instanceof ArgumentIssues)
        return failure(call, 'invalid_arguments', invalidMessage(call.name, settled.error.issues), args);
      return failure(call, thrownCode(settled.error), `${label} failed: ${messageOf(settled.error)}`, args);
    case 'ok': {
      const out = normalizeOutput(settled.output);
      let content = out.content;
      let details = out.details;
      // (7) Truncate. The common case (short output) pays for one length count only.
      if (textLength(content) > maxChars) {
        // The run log keeps the whole text; the marker points at the paging tool when there is one.
        const cut = cutToolOutput(content, maxChars, registry.get(READ_TOOL_OUTPUT) ? call.id : undefined);
        content = cut.content;
        details = withFullOutput(details, cut.fullOutput);
      }
      const outcome: Outcome = {
        result: wrap(call, content, out.isError, details),
        terminate: out.terminate && !out.isError,
        arguments: args,
      };
      if (out.isError) outcome.errorCode = 'tool_failed';
      return outcome;
    }
  }
}

/** The hook may replace the result, but not its pairing with the call (step 9). */
async function runAfterHook(
  hook: NonNullable<DispatcherOptions['afterToolCall']>,
  call: ToolCall,
  args: Record<string, unknown>,
  outcome: Outcome,
): Promise<Outcome> {
  const label = `tool "${call.name}"`;
  let replaced: ToolResultMessage | void;
  try {
    replaced = await hook(call, outcome.result);
  } catch (error) {
    return failure(call, 'tool_failed', `${label} ran, but the afterToolCall hook failed: ${messageOf(error)}`, args);
  }
  if (replaced === undefined || replaced === outcome.result) return outcome;
  if (!isResult(replaced)) {
    const text = `${label} ran, but the afterToolCall hook returned something that is not a tool result`;
    return failure(call, 'tool_failed', text, args);
  }
  const result: ToolResultMessage = { ...replaced, role: 'tool', toolCallId: call.id, toolName: call.name };
  const next: Outcome = { result, terminate: outcome.terminate && !result.isError, arguments: args };
  if (result.isError) next.errorCode = outcome.errorCode ?? 'tool_failed';
  return next;
}

/** Step 2. The text is authoritative; `arguments` count only when no text came (replays, hand-made calls). */
function parseArguments(call: ToolCall): RepairResult {
  const raw = typeof call.rawArguments === 'string' ? call.rawArguments : '';
  if (raw.trim() === '' && call.arguments && Object.keys(call.arguments).length > 0) {
    if (jsonValueDepth(call.arguments, MAX_ARGUMENT_DEPTH) > MAX_ARGUMENT_DEPTH) return { ok: false, error: TOO_DEEP_ARGUMENTS };
    // Validation coerces in place, and the call's object is not ours.
    return { ok: true, value: structuredClone(call.arguments), repaired: false };
  }
  return repairArguments(raw);
}

/** The run was aborted before the tool started. */
function notRun(call: ToolCall, args?: Record<string, unknown>): Outcome {
  return failure(call, 'aborted', `tool "${call.name}" was not run: the run was aborted`, args);
}

function failure(call: ToolCall, errorCode: ErrorCode, text: string, args?: Record<string, unknown>): Outcome {
  const outcome: Outcome = { result: wrap(call, [{ type: 'text', text }], true, undefined), terminate: false, errorCode };
  if (args !== undefined) outcome.arguments = args;
  return outcome;
}

function wrap(call: ToolCall, content: ToolResultMessage['content'], isError: boolean, details: unknown): ToolResultMessage {
  const result: ToolResultMessage = { role: 'tool', toolCallId: call.id, toolName: call.name, content, isError };
  if (details !== undefined) result.details = details;
  return result;
}

function unknownToolMessage(name: string, available: string[]): string {
  const sorted = [...available].sort();
  const suggestion = closestName(name, sorted);
  let text = `unknown tool "${name}".`;
  if (suggestion) text += ` Did you mean "${suggestion}"?`;
  if (sorted.length === 0) return `${text} No tools are available.`;
  const listed = sorted.slice(0, MAX_LISTED_TOOLS).join(', ');
  const more = sorted.length > MAX_LISTED_TOOLS ? ` and ${sorted.length - MAX_LISTED_TOOLS} more` : '';
  return `${text} Available tools: ${listed}${more}`;
}

function invalidMessage(name: string, errors: string[]): string {
  const head = `invalid arguments for tool "${name}"`;
  if (errors.length === 1) return `${head}: ${errors[0]}. Fix it and call "${name}" again.`;
  return `${head}:\n${errors.map((e) => `- ${e}`).join('\n')}\nFix these and call "${name}" again.`;
}

function isPromiseLike(value: unknown): value is PromiseLike<ToolReturn> {
  return typeof value === 'object' && value !== null && typeof (value as { then?: unknown }).then === 'function';
}

function messageOf(error: unknown): string {
  if (error instanceof Error) return error.message || error.name;
  if (typeof error === 'string') return error;
  const text = thrownText(error);
  if (text.length <= MAX_THROWN_CHARS) return text;
  // Cut before a whole character, not inside an emoji's surrogate pair.
  const end = isLowSurrogate(text.charCodeAt(MAX_THROWN_CHARS)) ? MAX_THROWN_CHARS - 1 : MAX_THROWN_CHARS;
  return `${text.slice(0, end)}… (${formatCount(text.length - end)} more characters)`;
}

/**
 * A thrown value that is not an Error nor a string, said as well as it can be: a primitive
 * by its string form; an object by its JSON, made safely (circular references, BigInts, Maps:
 * see `safeJson`), or by its own `toString` when JSON shows nothing (`{}`: an Error of another
 * realm, a class with a custom toString); never "[object Object]".
 */
function thrownText(value: unknown): string {
  if (typeof value === 'function') return `a function ${value.name || '(anonymous)'}`;
  if (value === null || typeof value !== 'object') return String(value);
  const json = safeJson(value);
  if (json !== undefined && json !== '{}') return json;
  let text = '';
  try {
    text = String(value);
  } catch {
    // no toString (Object.create(null)), or one that throws
  }
  if (text !== '' && !/^\[object \w*\]$/.test(text)) return text;
  const name = constructorName(value);
  return name && name !== 'Object' ? `${name} {}` : '{}';
}

function constructorName(value: object): string | undefined {
  try {
    const name: unknown = (value as { constructor?: { name?: unknown } }).constructor?.name;
    return typeof name === 'string' ? name : undefined;
  } catch {
    return undefined;
  }
}

/** `{ block }`, `{ arguments: {…} }`, or `{}` (nothing to do). */
function isBeforeAnswer(value: unknown): value is Exclude<BeforeToolCallResult, void | undefined> {
  if (!isRecord(value)) return false;
  if ('arguments' in value) return isRecord(value.arguments);
  return 'block' in value || Object.keys(value).length === 0;
}

/** What a hook returned, said briefly for an error message: "undefined", "a string", "an array". */
function shapeOf(value: unknown): string {
  if (value === undefined || value === null) return String(value);
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object')
    return `an object with keys ${
      Object.keys(value)
        .map((k) => JSON.stringify(k))
        .join(', ') || '(none)'
    }`;
  return `${/^[aeiou]/.test(typeof value) ? 'an' : 'a'} ${typeof value}`;
}

function isResult(value: unknown): value is ToolResultMessage {
  if (value === null || typeof value !== 'object') return false;
  const v = value as Partial<ToolResultMessage>;
  return Array.isArray(v.content) && typeof v.isError === 'boolean';
}

/** The code of a tool's thrown error: an MCP server's own codes stay visible, anything else failed. */
function thrownCode(error: unknown): ErrorCode {
  if (error instanceof ReinError) {
    if (error.code === 'mcp_unavailable' || error.code === 'mcp_error' || error.code === 'path_refused') return error.code;
    if (error.code === 'timeout') return 'tool_timeout';
  }
  return 'tool_failed';
}

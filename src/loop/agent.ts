/**
 * `Agent`: the thin class users hold. It resolves configuration once and starts runs;
 * all behaviour lives in {@link runLoop}.
 */
import type { RunEvent, RunEventBody, RunLimits, RunResult } from '../events.js';
import { ReinError, toReinError } from '../errors.js';
import { newRunId, newTraceId } from '../ids.js';
import type { Cost, ModelRef, StreamFunction, ToolCall, Usage, UserMessage } from '../model/types.js';
import { lookupModel, priceUsage } from '../model/catalog.js';
import { resolveModel } from '../model/resolve.js';
import { streamWithRetry } from '../model/retry.js';
import { streamModel } from '../model/providers/index.js';
import { ToolRegistry } from '../tools/registry.js';
import { createDispatcher } from '../tools/dispatch.js';
import { createFinalAnswerTool } from '../tools/final-answer.js';
import type { Tool } from '../tools/types.js';
import { RunHandle, type RunControls } from './handle.js';
import { DEFAULT_LIMITS, type AgentOptions, type RunOptions } from './options.js';
import { runLoop, type LoopDeps } from './run-loop.js';

/**
 * An agent: a model, a system prompt, tools, limits and hooks. Runs are independent;
 * one agent can run many at once.
 *
 * @example
 * import { Agent, defineTool } from 'rein';
 *
 * const add = defineTool({
 *   name: 'add',
 *   description: 'Add two numbers. Use it for any addition.',
 *   parameters: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] },
 *   execute: ({ a, b }) => String(Number(a) + Number(b)),
 * });
 * const agent = new Agent({ model: 'openai/gpt-4o-mini', tools: [add] });
 * const result = await agent.run('What is 2 + 40?');
 * console.log(result.reason, result.text);
 */
export class Agent {
  readonly model: ModelRef;
  readonly options: AgentOptions;
  private readonly registry: ToolRegistry;
  private readonly limits: RunLimits;
  private readonly stream: StreamFunction;
  private readonly finalAnswerTool: string | undefined;
  private readonly costOf: ((usage: Usage) => Cost | undefined) | undefined;

  /** Throws a {@link ReinError} with code `config` when the configuration cannot work. */
  constructor(options: AgentOptions) {
    this.options = options;
    this.model = typeof options.model === 'string' ? resolveModel(options.model, options.modelConfig) : options.model;
    const tools: Tool[] = [...(options.tools ?? [])];
    if (options.outputSchema !== undefined) {
      const finalAnswer = createFinalAnswerTool(options.outputSchema);
      tools.push(finalAnswer);
      this.finalAnswerTool = finalAnswer.name;
    }
    this.registry = new ToolRegistry(tools);
    this.limits = { ...DEFAULT_LIMITS, ...stripUndefined(options.limits ?? {}) };
    // The price is looked up once; each response is then priced by a multiplication.
    const pricing = lookupModel(this.model.provider, this.model.id, options.modelInfo).pricing;
    this.costOf = pricing ? (usage) => priceUsage(pricing, usage) : undefined;
    if (this.limits.maxCostUsd !== undefined && !pricing) {
      throw new ReinError(
        'config',
        'fatal',
        `limits.maxCostUsd is set, but rein has no price for ${this.model.provider}/${this.model.id}: ` +
          'give one as modelInfo: { pricing: { input, output } } (USD per million tokens), or use limits.maxTokens',
      );
    }
    const provider = options.streamFn ?? streamModel;
    const retry = options.retry ?? {};
    this.stream = (model, context, streamOptions) => streamWithRetry(provider, model, context, streamOptions, retry);
  }

  /** The tools this agent offers the model. */
  get tools(): readonly Tool[] {
    return this.registry.list();
  }

  /**
   * Starts a run. The handle is an async iterable of events and a promise of the result;
   * the result always arrives (a limit, an abort or an error is a `reason`, not a throw).
   */
  run(input: string | UserMessage, options: RunOptions = {}): RunHandle {
    const runId = options.runId ?? newRunId();
    const traceId = newTraceId();
    const abortController = new AbortController();
    const controls: RunControls = { steering: [], followUps: [], abortController };
    if (options.signal) {
      if (options.signal.aborted) abortController.abort(options.signal.reason);
      else options.signal.addEventListener('abort', () => abortController.abort(options.signal?.reason), { once: true });
    }

    let seq = 0;
    let handle!: RunHandle;
    // The loop hands over a fresh object literal per event; stamping it in place saves a
    // copy per event on the hot path.
    const emit = (body: RunEventBody): number => {
      const event = body as RunEvent;
      event.runId = runId;
      event.seq = seq;
      event.at = Date.now();
      handle.deliver(event);
      return seq++;
    };

    const stepOfCall = new Map<string, number>();
    const hooks = this.options.hooks ?? {};
    const onConfirm = hooks.onConfirm;
    const dispatcher = createDispatcher(this.registry, {
      ...(this.options.toolTimeoutMs === undefined ? {} : { defaultTimeoutMs: this.options.toolTimeoutMs }),
      ...(this.options.maxToolOutputChars === undefined ? {} : { maxOutputChars: this.options.maxToolOutputChars }),
      ...(hooks.beforeToolCall ? { beforeToolCall: hooks.beforeToolCall } : {}),
      ...(hooks.afterToolCall ? { afterToolCall: hooks.afterToolCall } : {}),
      ...(this.options.log ? { log: this.options.log } : {}),
      ...(onConfirm
        ? {
            onConfirm: async (call: ToolCall, args: Record<string, unknown>, tool: Tool) => {
              const step = stepOfCall.get(call.id) ?? 0;
              emit({ type: 'approval_requested', step, toolCallId: call.id, name: call.name, arguments: args });
              const answer = await onConfirm(call, args, tool);
              const decision = typeof answer === 'boolean' ? { allow: answer } : answer;
              emit({
                type: 'approval_decided',
                step,
                toolCallId: call.id,
                approved: decision.allow,
                ...(decision.reason === undefined ? {} : { reason: decision.reason }),
              });
              return decision;
            },
          }
        : {}),
    });

    const deps: LoopDeps = {
      runId,
      traceId,
      model: this.model,
      stream: this.stream,
      modelOptions: this.options.modelOptions ?? {},
      ...(this.options.system === undefined ? {} : { system: this.options.system }),
      toolSpecs: this.registry.specs(),
      dispatch: (call, ctx) => {
        stepOfCall.set(call.id, ctx.step);
        return dispatcher.dispatchNow(call, ctx);
      },
      ...(this.finalAnswerTool === undefined ? {} : { finalAnswerTool: this.finalAnswerTool }),
      ...(this.costOf === undefined ? {} : { costOf: this.costOf }),
      limits: this.limits,
      toolExecution: this.options.toolExecution ?? 'parallel',
      stopOnToolError: this.options.stopOnToolError ?? false,
      hooks,
      controls,
      emit,
    };

    const input_: UserMessage = typeof input === 'string' ? { role: 'user', content: input } : input;
    // Start on a later tick so the caller can attach an iterator or listener first.
    const result: Promise<RunResult> = Promise.resolve()
      .then(() => runLoop(deps, input_, options.history ?? []))
      .catch((error: unknown) => {
        // runLoop never rejects by design; this is the last line of defence against a bug.
        throw toReinError(error);
      })
      .finally(() => handle.finish());
    handle = new RunHandle(runId, controls, result);
    return handle;
  }
}

function stripUndefined<T extends object>(value: T): Partial<T> {
  const out: Partial<T> = {};
  for (const [k, v] of Object.entries(value)) if (v !== undefined) (out as Record<string, unknown>)[k] = v;
  return out;
}

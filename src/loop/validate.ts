/**
 * Checking what a caller hands the agent, once, where the caller can see the mistake: the
 * agent's options (in its constructor) and a run's input, history and queued messages (in
 * `run`, `steer`, `followUp`). Each refusal is a `config` {@link ReinError} naming the
 * option, what it got and what it takes, so a bad value never becomes a raw TypeError deep
 * in a run, or a limit that silently does nothing.
 */
import { ReinError } from '../errors.js';
import type { AssistantMessage, Message, ToolCall, UserMessage } from '../model/types.js';
import { syntheticResult } from '../model/handoff.js';
import { compatProblem } from '../model/providers/chat-compat.js';
import { isRecord } from '../util/json.js';
import { closestName } from '../tools/suggest.js';
import type { AgentOptions } from './options.js';
import { checkTelemetryOptions } from '../trace/agent-telemetry.js';
import { MAX_TIMER_MS } from '../process/timing.js';

/** A value in a configuration error: itself when short, else its type. */
export function describe(value: unknown): string {
  if (value === undefined) return 'undefined';
  if (typeof value === 'function') return 'a function';
  if (typeof value !== 'object' || value === null) return typeof value === 'string' ? JSON.stringify(value) : String(value);
  if (Array.isArray(value)) return `an array of ${value.length}`;
  try {
    const json = JSON.stringify(value);
    return json.length > 80 ? `${json.slice(0, 77)}...` : json;
  } catch {
    return 'an object';
  }
}

function refuse(what: string, got: unknown, takes: string): never {
  throw new ReinError('config', 'fatal', `${what}: expected ${takes}, got ${describe(got)}`);
}

const USER_MESSAGE = "a string or a user message ({ role: 'user', content: string | parts[] })";

/** A string or a user message as a user message (`run`'s input, `steer`, `followUp`); anything else throws. */
export function toUser(message: string | UserMessage, what: string): UserMessage {
  if (typeof message === 'string') return { role: 'user', content: message };
  if (isUserMessage(message)) return message;
  return refuse(what, message, USER_MESSAGE);
}

function isUserMessage(value: unknown): value is UserMessage {
  if (!isRecord(value)) return false;
  return value.role === 'user' && (typeof value.content === 'string' || isPartList(value.content));
}

function isPartList(value: unknown): boolean {
  return Array.isArray(value) && value.every((part) => isRecord(part) && typeof part.type === 'string');
}

/** `run`'s options: an object (its `history` is checked by {@link startingHistory}). */
export function checkRunOptions(options: unknown): void {
  if (!isRecord(options)) refuse('run(input, options)', options, 'an options object ({ history, signal, runId })');
}

/**
 * A run's starting history, checked and made whole: every message must be a user,
 * assistant or tool message (else a `config` error naming its index); a tool call without
 * `rawArguments` gets the JSON of its arguments; a call left without a result gets the same
 * synthetic error result the model adapters send, so the run's own history — and its
 * `result.messages` — has no dangling call. Returns the input array when all is well.
 */
export function startingHistory(history: unknown): Message[] {
  if (history === undefined) return [];
  if (!Array.isArray(history)) return refuse('history', history, 'an array of messages');
  let out: Message[] | undefined;
  let open: { call: AssistantMessage; answered: Set<string> } | undefined;
  const closeOpen = (index: number): void => {
    if (!open) return;
    const missing = open.call.content.filter((c): c is ToolCall => c.type === 'tool_call' && !open?.answered.has(c.id));
    if (missing.length > 0) (out ??= history.slice(0, index)).push(...syntheticResults(missing));
    open = undefined;
  };
  for (let i = 0; i < history.length; i++) {
    const message = checkMessage(history[i], `history[${i}]`);
    if (message.role === 'tool') open?.answered.add(message.toolCallId);
    else {
      closeOpen(i);
      if (
        message.role === 'assistant' &&
        message.stopReason !== 'error' &&
        message.stopReason !== 'aborted' &&
        message.content.some((c) => c.type === 'tool_call')
      ) {
        open = { call: message, answered: new Set() };
      }
    }
    if (out) out.push(message);
    else if (message !== history[i]) out = [...history.slice(0, i), message];
  }
  closeOpen(history.length);
  return out ?? (history as Message[]);
}

/**
 * What a `transformContext` hook returned, checked like a history before it is sent: a
 * non-empty array of user, assistant and tool messages, else a `config` error naming the
 * hook and the index (a bad message would otherwise fail deep in an adapter, as
 * `message.content is not iterable`, and an empty list as the provider's 400). Calls
 * without a result are left to the adapters, which add the same error results to the
 * request. Returns the array itself when all is well (the request body cache keys on the
 * message objects).
 */
export function transformedContext(value: unknown): Message[] {
  const what = 'hooks.transformContext';
  const takes = 'must return an array of messages (new message objects for any it changes)';
  if (!Array.isArray(value)) throw new ReinError('config', 'fatal', `${what} ${takes}, got ${describe(value)}`);
  if (value.length === 0)
    throw new ReinError('config', 'fatal', `${what} ${takes}, got an empty array: a model request needs at least one message`);
  let out: Message[] | undefined;
  for (let i = 0; i < value.length; i++) {
    const message = checkMessage(value[i], `${what}(…)[${i}]`);
    if (out) out.push(message);
    else if (message !== value[i]) out = [...(value.slice(0, i) as Message[]), message];
  }
  return out ?? (value as Message[]);
}

/** One message (of a history, or of what a hook returned), checked; an assistant message whose calls lack `rawArguments` is copied with them filled in. */
function checkMessage(value: unknown, what: string): Message {
  if (!isRecord(value)) return refuse(what, value, 'a message object');
  switch (value.role) {
    case 'user':
      // In a list of messages a bare string is no message: only the object form is taken.
      if (!isUserMessage(value)) refuse(what, value, "a user message ({ role: 'user', content: string | parts[] })");
      return value as unknown as UserMessage;
    case 'tool':
      if (typeof value.toolCallId !== 'string' || !isPartList(value.content)) {
        refuse(what, value, "a tool result ({ role: 'tool', toolCallId: string, toolName, content: parts[], isError })");
      }
      return value as unknown as Message;
    case 'assistant': {
      if (!isPartList(value.content)) refuse(what, value, "an assistant message ({ role: 'assistant', content: parts[], … })");
      const message = value as unknown as AssistantMessage;
      if (message.content.every((c) => c.type !== 'tool_call' || typeof c.rawArguments === 'string')) return message;
      return {
        ...message,
        content: message.content.map((c) => (c.type === 'tool_call' && typeof c.rawArguments !== 'string' ? withRawArguments(c) : c)),
      };
    }
    default:
      return refuse(`${what}.role`, value.role, "'user', 'assistant' or 'tool'");
  }
}

function withRawArguments(call: ToolCall): ToolCall {
  const args = isRecord(call.arguments) ? call.arguments : {};
  return { ...call, arguments: args, rawArguments: JSON.stringify(args) };
}

/** The error results of calls that have none: the ones the model layer sends on the wire (see `prepareHistory`). */
function syntheticResults(missing: ToolCall[]): Message[] {
  return missing.map((call) => syntheticResult(call.id, call.name));
}

// ── Agent options ─────────────────────────────────────────────────────────────────────

const LIMIT_RULES: Record<string, [check: (v: number) => boolean, takes: string]> = {
  maxSteps: [(v) => (Number.isInteger(v) && v >= 1) || v === Infinity, 'a whole number of model calls, at least 1 (Infinity: no limit)'],
  timeoutMs: [
    (v) => Number.isFinite(v) && v > 0 && v <= MAX_TIMER_MS,
    `a positive number of milliseconds, at most ${MAX_TIMER_MS} (about 24.8 days; leave timeoutMs out for no time limit)`,
  ],
  maxTokens: [(v) => Number.isFinite(v) && v > 0, 'a positive number of tokens'],
  maxCostUsd: [(v) => Number.isFinite(v) && v > 0, 'a positive number of US dollars'],
  noProgressRepeats: [(v) => Number.isInteger(v) && v >= 0, 'a whole number of repeats, 0 or more (0: off)'],
  maxConsecutiveToolErrors: [(v) => Number.isInteger(v) && v >= 0, 'a whole number of errors, 0 or more (0: off)'],
};

const HOOKS = ['transformContext', 'beforeToolCall', 'afterToolCall', 'onConfirm', 'shouldStopAfterTurn', 'onAlert'];

/** Every option of `new Agent()`: the type makes this list complete. */
const AGENT_OPTIONS: Record<keyof AgentOptions, true> = {
  name: true,
  model: true,
  modelConfig: true,
  modelInfo: true,
  system: true,
  tools: true,
  toolSources: true,
  skills: true,
  memory: true,
  toolOutputPaging: true,
  toolSelection: true,
  allowedTools: true,
  outputSchema: true,
  limits: true,
  toolExecution: true,
  stopOnToolError: true,
  toolTimeoutMs: true,
  maxToolOutputChars: true,
  retry: true,
  hooks: true,
  modelOptions: true,
  streamFn: true,
  approvalPolicy: true,
  store: true,
  redact: true,
  metadata: true,
  log: true,
  context: true,
  telemetry: true,
  logger: true,
  alerts: true,
};

/** `modelConfig`: strings where strings go (a number for a key would surface later as a raw TypeError). */
function checkModelConfig(config: AgentOptions['modelConfig']): void {
  if (config === undefined) return;
  if (!isRecord(config)) refuse('modelConfig', config, 'an object { baseUrl?, apiKey?, headers? }');
  for (const key of ['baseUrl', 'apiKey'] as const) {
    if (config[key] !== undefined && typeof config[key] !== 'string') refuse(`modelConfig.${key}`, config[key], 'a string');
  }
  const headers = config.headers;
  if (headers !== undefined && !(isRecord(headers) && Object.values(headers).every((v) => typeof v === 'string'))) {
    refuse('modelConfig.headers', headers, 'an object of header names to string values');
  }
  const compat = config.compat === undefined ? undefined : compatProblem(config.compat, 'modelConfig.compat');
  if (compat !== undefined) throw new ReinError('config', 'fatal', compat);
  if (config.toolCalling !== undefined && config.toolCalling !== 'native' && config.toolCalling !== 'prompt')
    refuse('modelConfig.toolCalling', config.toolCalling, '"native" or "prompt"');
}

/** The methods a run store must have (`RunStore`): `store: {}` is refused here, not when a run first appends. */
const STORE_METHODS = ['createRun', 'acquireLease', 'append', 'loadEvents', 'getRun', 'listRuns', 'updateRun'] as const;

function checkStore(store: AgentOptions['store']): void {
  if (store === undefined) return;
  const missing = isRecord(store)
    ? STORE_METHODS.filter((m) => typeof (store as unknown as Record<string, unknown>)[m] !== 'function')
    : STORE_METHODS;
  if (missing.length > 0)
    refuse('store', store, `a run store (RunStore: openStore(), SqliteStore, PostgresStore, MemoryRunStore) with ${missing.join(', ')}`);
}

/** Throws a `config` {@link ReinError} for the first option that cannot work. */
export function validateAgentOptions(options: AgentOptions): void {
  if (!isRecord(options)) refuse('new Agent(options)', options, 'an options object');
  for (const key of Object.keys(options)) if (!(key in AGENT_OPTIONS)) unknownKey('options', key, Object.keys(AGENT_OPTIONS));
  checkModel(options.model);
  checkModelConfig(options.modelConfig);
  checkStore(options.store);
  if (options.tools !== undefined) {
    if (!Array.isArray(options.tools)) refuse('tools', options.tools, 'an array of tools (defineTool(…))');
    options.tools.forEach((tool, i) => {
      if (!isRecord(tool) || typeof tool.name !== 'string' || typeof tool.execute !== 'function')
        refuse(`tools[${i}]`, tool, 'a tool (defineTool(…)) with a name and execute');
    });
  }
  if (
    options.toolSources !== undefined &&
    !(Array.isArray(options.toolSources) && options.toolSources.every((s) => isRecord(s) && typeof s.tools === 'function'))
  ) {
    refuse('toolSources', options.toolSources, 'an array of tool sources (each with id and tools())');
  }
  if (
    options.allowedTools !== undefined &&
    !(Array.isArray(options.allowedTools) && options.allowedTools.every((n) => typeof n === 'string'))
  ) {
    refuse('allowedTools', options.allowedTools, 'an array of tool names or globs');
  }
  if (options.system !== undefined && typeof options.system !== 'string') refuse('system', options.system, 'a string');
  if (options.name !== undefined && !(typeof options.name === 'string' && options.name.trim() !== ''))
    refuse('name', options.name, 'a non-empty string');
  checkLimits(options.limits);
  if (options.toolExecution !== undefined && options.toolExecution !== 'parallel' && options.toolExecution !== 'sequential') {
    refuse('toolExecution', options.toolExecution, "'parallel' or 'sequential'");
  }
  if (options.stopOnToolError !== undefined && typeof options.stopOnToolError !== 'boolean')
    refuse('stopOnToolError', options.stopOnToolError, 'true or false');
  const timeout = options.toolTimeoutMs;
  if (timeout !== undefined && !(typeof timeout === 'number' && timeout >= 0 && (timeout <= MAX_TIMER_MS || timeout === Infinity))) {
    refuse('toolTimeoutMs', timeout, `a number of milliseconds from 0 to ${MAX_TIMER_MS} (about 24.8 days; 0 or Infinity: no timeout)`);
  }
  const chars = options.maxToolOutputChars;
  if (chars !== undefined && !(typeof chars === 'number' && chars >= 1))
    refuse('maxToolOutputChars', chars, 'a positive number of characters');
  checkHooks(options.hooks);
  checkFields('retry', options.retry, RETRY_RULES);
  checkFields('modelOptions', options.modelOptions, MODEL_OPTION_RULES);
  for (const name of ['approvalPolicy', 'streamFn', 'log'] as const) {
    if (options[name] !== undefined && typeof options[name] !== 'function') refuse(name, options[name], 'a function');
  }
  checkTelemetryOptions(options);
}

function checkModel(model: unknown): void {
  if (typeof model === 'string') {
    if (model.trim() === '') refuse('model', model, "a 'provider/model' string (e.g. 'openai/gpt-4o') or a resolved model");
    return;
  }
  if (!isRecord(model) || typeof model.provider !== 'string' || typeof model.id !== 'string') {
    refuse('model', model, "a 'provider/model' string (e.g. 'openai/gpt-4o') or a resolved model ({ provider, id, api, baseUrl, … })");
  }
}

function checkLimits(limits: unknown): void {
  if (limits === undefined) return;
  if (!isRecord(limits)) return refuse('limits', limits, `an object with ${Object.keys(LIMIT_RULES).join(', ')}`);
  for (const [key, value] of Object.entries(limits)) {
    if (key === 'finalAnswerOnStop') {
      if (value !== undefined && typeof value !== 'boolean') refuse('limits.finalAnswerOnStop', value, 'true or false');
      continue;
    }
    const rule = LIMIT_RULES[key];
    if (!rule) unknownKey('limits', key, [...Object.keys(LIMIT_RULES), 'finalAnswerOnStop']);
    else if (value !== undefined && !(typeof value === 'number' && rule[0](value))) refuse(`limits.${key}`, value, rule[1]);
  }
}

type FieldRule = [check: (v: unknown) => boolean, takes: string];
const wholeAtLeast = (min: number) => (v: unknown) => typeof v === 'number' && Number.isInteger(v) && v >= min;
const positive = (v: unknown) => typeof v === 'number' && v > 0 && !Number.isNaN(v);

const RETRY_RULES: Record<string, FieldRule> = {
  maxRetries: [wholeAtLeast(0), 'a whole number of retries, 0 or more'],
  baseDelayMs: [(v) => typeof v === 'number' && Number.isFinite(v) && v >= 0, 'a number of milliseconds, 0 or more'],
  maxDelayMs: [(v) => typeof v === 'number' && v >= 0 && !Number.isNaN(v), 'a number of milliseconds, 0 or more'],
  jitter: [(v) => typeof v === 'boolean', 'true or false'],
  sleep: [(v) => typeof v === 'function', 'a function (ms, signal) => Promise<void>'],
};

const MODEL_OPTION_RULES: Record<string, FieldRule> = {
  stream: [(v) => typeof v === 'boolean', 'true or false'],
  maxTokens: [wholeAtLeast(1), 'a whole number of tokens, at least 1'],
  temperature: [(v) => typeof v === 'number' && Number.isFinite(v) && v >= 0, 'a number, 0 or more'],
  thinking: [(v) => v === 'off' || v === 'low' || v === 'medium' || v === 'high', "'off', 'low', 'medium' or 'high'"],
  idleTimeoutMs: [positive, 'a positive number of milliseconds (Infinity: never give up)'],
  maxAnswerChars: [wholeAtLeast(1), 'a whole number of characters, at least 1'],
  transport: [(v) => typeof v === 'function', 'a function (request, signal, idleTimeoutMs) => response, such as recordTo(file)'],
};

/** An options object whose fields each follow a rule; unknown fields are refused with the closest known one. */
function checkFields(where: string, value: unknown, rules: Record<string, FieldRule>): void {
  if (value === undefined) return;
  if (!isRecord(value)) return refuse(where, value, `an object with ${Object.keys(rules).join(', ')}`);
  for (const [key, field] of Object.entries(value)) {
    const rule = rules[key];
    if (!rule) unknownKey(where, key, Object.keys(rules));
    else if (field !== undefined && !rule[0](field)) refuse(`${where}.${key}`, field, rule[1]);
  }
}

function checkHooks(hooks: unknown): void {
  if (hooks === undefined) return;
  if (!isRecord(hooks)) return refuse('hooks', hooks, `an object of functions (${HOOKS.join(', ')})`);
  for (const [key, value] of Object.entries(hooks)) {
    if (!HOOKS.includes(key)) unknownKey('hooks', key, HOOKS);
    else if (value !== undefined && typeof value !== 'function') refuse(`hooks.${key}`, value, 'a function');
  }
}

function unknownKey(where: string, key: string, known: string[]): never {
  const closest = closestName(key, known);
  const guess = closest === undefined ? '' : `: did you mean ${where}.${closest}?`;
  throw new ReinError('config', 'fatal', `${where}.${key} is not an option${guess} (known: ${known.join(', ')})`);
}

/** Flags shared by `rein run` and `rein chat`, and building an Agent from them. */
import { ReinError } from '../errors.js';
import type { AgentOptions } from '../loop/options.js';
import { lookupModel } from '../model/catalog.js';
import { KNOWN_PROVIDERS, resolveModel } from '../model/resolve.js';
import { MAX_TIMER_MS } from '../process/timing.js';
import { recordTo } from '../model/fixture.js';
import { defaultRedactor } from '../security/redact.js';
import { seedTools } from '../tools/builtin/index.js';
import type { ModelRef, ThinkingLevel } from '../model/types.js';
import { maskStoreLocation, namedStoreLocation } from '../store/open.js';
import type { RunStore } from '../store/types.js';
import { parseSandboxLevel, type SandboxLevel } from '../workspace/sandbox.js';
import type { CliIO } from './io.js';
import type { FlagOptions } from './flags.js';
import { openStoreFor } from './commands/store-command.js';

const THINKING_LEVELS: readonly string[] = ['off', 'low', 'medium', 'high'];
/** The model when neither --model nor REIN_MODEL names one. */
const DEFAULT_MODEL = 'openai/gpt-4o-mini';

/** The flags every agent command takes. */
export const AGENT_FLAGS = {
  agent: { type: 'string', short: 'a' },
  model: { type: 'string', short: 'm' },
  'base-url': { type: 'string' },
  header: { type: 'string', multiple: true },
  'max-steps': { type: 'string' },
  timeout: { type: 'string' },
  system: { type: 'string' },
  thinking: { type: 'string' },
  'tool-calling': { type: 'string' },
  record: { type: 'string' },
  'max-cost': { type: 'string' },
  'max-output-tokens': { type: 'string' },
  'no-final-answer': { type: 'boolean' },
  json: { type: 'boolean' },
  'no-stream': { type: 'boolean' },
  children: { type: 'string' },
  'no-tools': { type: 'boolean' },
  tools: { type: 'string' },
  allow: { type: 'string', multiple: true },
  ask: { type: 'string', multiple: true },
  deny: { type: 'string', multiple: true },
  mode: { type: 'string' },
  sandbox: { type: 'string' },
  'sandbox-network': { type: 'boolean' },
  root: { type: 'string' },
  'no-mcp': { type: 'boolean' },
  'no-skills': { type: 'boolean' },
  memory: { type: 'boolean' },
  store: { type: 'string' },
  'no-store': { type: 'boolean' },
  traceparent: { type: 'string' },
  'log-file': { type: 'string' },
  'alert-webhook': { type: 'string' },
} as const satisfies FlagOptions;

/** Help lines of the shared flags; `runOnly` ones are left out of `rein chat --help` (chat refuses them). */
const AGENT_FLAG_LINES: ReadonlyArray<{ text: string; runOnly?: boolean }> = [
  {
    text: `  -a, --agent <name>             an agent of .rein/agents/<name>.md (rein agents lists them);
                                 the flags given here win over its file (default: default)`,
  },
  {
    text: `  -m, --model <provider/model>  e.g. openai/gpt-4o-mini, ollama/llama3.1, vllm/<id>
                                 (default: $REIN_MODEL, else openai/gpt-4o-mini)`,
  },
  {
    text: `      --base-url <url>           the server of the model's provider (for openai/… any
                                   OpenAI-compatible server), e.g. http://127.0.0.1:8000/v1`,
  },
  {
    text: `      --header <name: value>     an HTTP header for every model request, repeatable: a
                                   gateway's routing or key header (--header 'api-key: …')`,
  },
  { text: '      --max-steps <n>            model calls before the run stops (default 15)' },
  { text: '      --timeout <seconds>|none   whole-run time limit (default 3600; none: no limit; at most 2147483 ≈ 24.8 days)' },
  { text: '      --system <text>            system prompt' },
  { text: '      --thinking <level>         off | low | medium | high (mapped per provider)' },
  {
    text: `      --tool-calling <how>       native | prompt: prompt describes the tools in the system
                                   prompt and reads calls from the text (default: the catalog's
                                   word, else native; a server that refuses tools switches to prompt)`,
  },
  { text: '      --max-cost <usd>           stop the run once it has cost this much (needs a catalog price)' },
  { text: "      --max-output-tokens <n>    the output limit of each model response (default: the server's)" },
  {
    text: `      --no-final-answer          a run a limit stops (steps, budget, time, no progress) ends
                                   without one last request, with no tools, for its best answer`,
  },
  { text: '      --json                     one JSON event per line on stdout, nothing else', runOnly: true },
  {
    text: `      --record <file>            write the run's model exchanges (requests as sent, responses
                                   as received, secrets redacted) to a fixture file that
                                   rein scripted-server --fixture plays back`,
    runOnly: true,
  },
  {
    text: `      --no-stream                write each answer once its model response is final: text
                                   a failed, retried attempt streamed never reaches stdout`,
    runOnly: true,
  },
  {
    text: `      --children <view>          a sub-agent's events: summary (default: one line per child,
                                   live while it works), full (every event, indented), none`,
  },
  { text: '      --no-tools                 offer the model no tools (no workspace, no MCP; not with --tools)' },
  { text: '      --tools <a,b,c>            only these tools (names or globs such as github__*)' },
  { text: '      --root <dir>               the workspace the file and shell tools are confined to (default: .)' },
  {
    text: `      --allow <rule>             permission rules, repeatable: --allow 'bash(git status*)',
      --ask <rule>                 --ask 'write_file(src/**)', --deny 'bash(rm *)', --deny 'github__*'
      --deny <rule>`,
  },
  { text: '      --mode <mode>              default | acceptEdits | plan (no side effects) | yolo (no questions)' },
  {
    text: `      --sandbox <level>          where shell commands may write: workspace-write (default),
                                   read-only, or off (unconfined); needs bubblewrap (bwrap)
      --sandbox-network            let shell commands reach the network (default: none)`,
  },
  { text: '      --no-mcp                   do not start the MCP servers of .mcp.json / ~/.rein/mcp.json' },
  { text: '      --no-skills                do not load skills (.rein/skills, .agents/skills, ~/.rein/skills)' },
  { text: '      --memory                   remember/recall tools and memory hits, in .rein/memory.db' },
  { text: '      --store <path|postgres://…>  where runs are logged (default: $REIN_DATABASE_URL, else .rein/rein.db)' },
  { text: '      --no-store                 do not log the run (not with --store)' },
  {
    text: `      --traceparent <value>      run as a child of this W3C trace context (default: $TRACEPARENT);
                                   spans export over OTLP when OTEL_EXPORTER_OTLP_ENDPOINT is set`,
  },
  { text: '      --log-file <path>          one JSON line per model request and tool call (default: $REIN_LOG_FILE)' },
  { text: '      --alert-webhook <url>      POST an alert when a run fails, trips a limit or waits for approval' },
  { text: '  -h, --help                     this help' },
];

/** Help text of the shared flags, as `rein run` or `rein chat` takes them. */
export function agentFlagsHelp(command: 'run' | 'chat'): string {
  return AGENT_FLAG_LINES.filter((line) => command === 'run' || !line.runOnly)
    .map((line) => line.text)
    .join('\n');
}

export type AgentFlagValues = {
  agent?: string;
  model?: string;
  'base-url'?: string;
  header?: string[];
  'max-steps'?: string;
  timeout?: string;
  system?: string;
  thinking?: string;
  'tool-calling'?: string;
  record?: string;
  'max-cost'?: string;
  'max-output-tokens'?: string;
  'no-final-answer'?: boolean;
  json?: boolean;
  'no-stream'?: boolean;
  children?: string;
  'no-tools'?: boolean;
  tools?: string;
  allow?: string[];
  ask?: string[];
  deny?: string[];
  mode?: string;
  sandbox?: string;
  'sandbox-network'?: boolean;
  root?: string;
  'no-mcp'?: boolean;
  'no-skills'?: boolean;
  memory?: boolean;
  store?: string;
  'no-store'?: boolean;
  traceparent?: string;
  'log-file'?: string;
  'alert-webhook'?: string;
  help?: boolean;
};

/**
 * What each number flag takes, in the words of its error message: `expects` first (the
 * form scripts and tests have matched since the flags were added), then the detail.
 */
const NUMBER_FLAGS = {
  'max-steps': { whole: true, expects: 'a positive number', detail: 'a whole number of model calls in plain digits, e.g. 20' },
  'max-output-tokens': { whole: true, expects: 'a positive number', detail: 'a whole number of tokens in plain digits, e.g. 4096' },
  timeout: { whole: false, expects: 'a positive number of seconds', detail: 'in plain digits, e.g. 300 or 1.5' },
  'max-cost': { whole: false, expects: 'a positive number of US dollars', detail: 'in plain digits, e.g. 0.50' },
} as const;

// Plain decimal digits only: Number() would also read hex (0x10), exponents (1e1),
// padding (' 3 ') and the empty string (0), none of which anyone means on a command line.
const WHOLE = /^\d+$/;
const DECIMAL = /^(\d+(\.\d+)?|\.\d+)$/;

/** The value of a number flag, checked to be what the flag takes (see {@link NUMBER_FLAGS}). */
function numberFlag(flag: keyof typeof NUMBER_FLAGS, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const { whole, expects, detail } = NUMBER_FLAGS[flag];
  const n = Number(value);
  if (!DECIMAL.test(value) || n <= 0) throw new ReinError('config', 'fatal', `--${flag} expects ${expects}, got "${value}" (${detail})`);
  if (whole && !WHOLE.test(value)) throw new ReinError('config', 'fatal', `--${flag} expects a whole number, got "${value}" (${detail})`);
  // Past this a whole number is not the one typed (99999999999999999999 reads as 1e20).
  if (whole ? !Number.isSafeInteger(n) : !Number.isFinite(n)) {
    throw new ReinError('config', 'fatal', `--${flag} ${value} is too large${whole ? ` (at most ${Number.MAX_SAFE_INTEGER})` : ''}`);
  }
  return n;
}

/**
 * The whole-run time limit of `rein run` and `rein chat` when neither `--timeout` nor the
 * agent file sets one: a run that nothing else stops (a server sending keep-alives for
 * ever, a model that never stops calling tools slowly) still ends, as `timeout`.
 */
export const DEFAULT_RUN_TIMEOUT_MS = 3_600_000;

/**
 * `--timeout`, in milliseconds: a Node timer cannot wait longer than {@link MAX_TIMER_MS}.
 * `none` (no limit) gives undefined, as leaving it out does; {@link DEFAULT_RUN_TIMEOUT_MS}
 * is applied where the agent file's limits are known.
 */
function timeoutMsOf(value: string | undefined): number | undefined {
  if (value === 'none') return undefined;
  const seconds = numberFlag('timeout', value);
  if (seconds === undefined) return undefined;
  const ms = Math.round(seconds * 1000);
  if (ms < 1)
    throw new ReinError('config', 'fatal', `--timeout expects a positive number of seconds, got "${value}" (at least 0.001: 1 ms)`);
  if (ms > MAX_TIMER_MS) {
    throw new ReinError(
      'config',
      'fatal',
      `--timeout ${value} is too long: at most ${Math.floor(MAX_TIMER_MS / 1000)} seconds (about 24.8 days). Use --timeout none for no time limit`,
    );
  }
  return ms;
}

/** Pairs of flags that say opposite things: given together, neither can be obeyed. */
const CONTRADICTIONS: ReadonlyArray<[keyof AgentFlagValues, keyof AgentFlagValues, string]> = [
  ['store', 'no-store', 'one names where to log the run, the other says not to log it'],
  ['tools', 'no-tools', 'one picks the tools to offer, the other offers none'],
];

/** Throws a `config` error naming both flags when two of them contradict each other. */
export function checkContradictions(values: AgentFlagValues): void {
  for (const [a, b, why] of CONTRADICTIONS) {
    if (values[a] !== undefined && values[b]) {
      throw new ReinError('config', 'fatal', `--${a} and --${b} cannot be used together (${why}): give one of them`);
    }
  }
}

/**
 * Opens the store runs are logged to, unless `--no-store`. The default store failing to
 * open (a read-only folder, a missing native build) costs only the log, with a warning;
 * a store named with `--store` or `REIN_DATABASE_URL` that fails is an error.
 */
export async function storeFromFlags(values: AgentFlagValues, io: CliIO): Promise<RunStore | undefined> {
  if (values['no-store']) return undefined;
  const named = namedStoreLocation(values.store, io.env);
  try {
    return await openStoreFor(values.store, io);
  } catch (error) {
    if (named !== undefined) {
      throw new ReinError('config', 'fatal', `cannot open the run store ${maskStoreLocation(named)}: ${(error as Error).message}`, {
        cause: error,
      });
    }
    io.stderr.write(`rein: runs are not being logged (${(error as Error).message}); --no-store silences this\n`);
    return undefined;
  }
}

/**
 * The shell's sandbox of `--sandbox` and `--sandbox-network`, checked: an unknown level, or
 * network asked for with no sandbox, is a `config` error.
 */
export function sandboxFromFlags(values: AgentFlagValues): { level: SandboxLevel; network: boolean } {
  const level = values.sandbox === undefined ? 'workspace-write' : parseSandboxLevel(values.sandbox);
  if (values['sandbox-network'] && level === 'off')
    throw new ReinError(
      'config',
      'fatal',
      '--sandbox-network needs a sandbox: leave out --sandbox off (unconfined commands reach the network anyway)',
    );
  return { level, network: values['sandbox-network'] === true };
}

/**
 * The limits and thinking level of the flags, checked (a bad number or an unknown level is
 * a `config` error).
 */
export function limitsFromFlags(values: AgentFlagValues): Pick<AgentOptions, 'limits' | 'modelOptions'> {
  const maxSteps = numberFlag('max-steps', values['max-steps']);
  const timeoutMs = timeoutMsOf(values.timeout);
  const maxCostUsd = numberFlag('max-cost', values['max-cost']);
  const maxTokens = numberFlag('max-output-tokens', values['max-output-tokens']);
  const thinking = values.thinking;
  if (thinking !== undefined && !THINKING_LEVELS.includes(thinking as ThinkingLevel)) {
    throw new ReinError('config', 'fatal', `--thinking expects one of ${THINKING_LEVELS.join(', ')}, got "${thinking}"`);
  }
  const modelOptions = {
    ...(thinking === undefined ? {} : { thinking: thinking as ThinkingLevel }),
    ...(maxTokens === undefined ? {} : { maxTokens }),
  };
  return {
    limits: {
      ...(maxSteps === undefined ? {} : { maxSteps }),
      ...(timeoutMs === undefined ? {} : { timeoutMs }),
      ...(maxCostUsd === undefined ? {} : { maxCostUsd }),
      // On in the CLI (off by default in the library): a stopped run still answers.
      finalAnswerOnStop: values['no-final-answer'] !== true,
    },
    ...(Object.keys(modelOptions).length === 0 ? {} : { modelOptions }),
  };
}

/**
 * The agent's options from the flags, checked (bad numbers, unknown thinking level,
 * contradicting flags, the model resolved so a missing key or unknown provider is
 * reported, limits the model cannot keep) before anything is opened. Also what
 * `rein resume` rebuilds from the flags a run recorded.
 */
export function agentOptionsFromFlags(values: AgentFlagValues, env: NodeJS.ProcessEnv): AgentOptions {
  checkContradictions(values);
  // Every flag is checked before the model is resolved: a bad flag is named even when the
  // environment lacks a key.
  sandboxFromFlags(values);
  const limits = limitsFromFlags(values);
  const model = modelFromFlags(values, env);
  checkModelLimits(model, values, limits);
  if (values.record !== undefined) {
    if (values.record.trim() === '') throw new ReinError('config', 'fatal', '--record expects the path of the fixture file to write');
    // Opened last, once every flag is known to be good: a refused command line writes nothing.
    limits.modelOptions = { ...limits.modelOptions, transport: recordTo(values.record, { redact: defaultRedactor() }) };
  }
  return {
    model,
    ...(values.system === undefined ? {} : { system: values.system }),
    tools: values['no-tools'] ? [] : seedTools(),
    ...limits,
  };
}

/**
 * The model of `--model`, else `$REIN_MODEL`, else the default, resolved. The CLI's own
 * checks come first, in the CLI's words: the library's messages name its options
 * (`config.baseUrl`, `providers: {…}`), which a CLI user cannot set.
 */
/** The model `rein run` uses when no --model is given: `$REIN_MODEL`, else the default. */
export function defaultModelSpec(env: NodeJS.ProcessEnv): string {
  return env.REIN_MODEL || DEFAULT_MODEL;
}

function modelFromFlags(values: AgentFlagValues, env: NodeJS.ProcessEnv): ModelRef {
  // An empty REIN_MODEL is as good as unset (`REIN_MODEL= rein run …`).
  const fromEnv = values.model === undefined && env.REIN_MODEL ? env.REIN_MODEL : undefined;
  const spec = values.model ?? fromEnv ?? DEFAULT_MODEL;
  const source = fromEnv === undefined ? `"${spec}"` : `REIN_MODEL=${spec}`;
  const slash = spec.indexOf('/');
  const provider = slash === -1 ? 'openai' : spec.slice(0, slash).trim();
  if (slash > 0 && !KNOWN_PROVIDERS.includes(provider)) {
    throw new ReinError(
      'config',
      'fatal',
      `unknown provider "${provider}" in ${source}: rein knows ${KNOWN_PROVIDERS.join(', ')}. ` +
        'For another OpenAI-compatible server, use --model openai/<model> with --base-url <url>',
    );
  }
  const baseUrl = values['base-url'];
  if (baseUrl !== undefined) checkBaseUrlFlag(baseUrl);
  const headers = values.header === undefined ? undefined : headersFromFlags(values.header);
  const toolCalling = values['tool-calling'];
  if (toolCalling !== undefined && toolCalling !== 'native' && toolCalling !== 'prompt') {
    throw new ReinError('config', 'fatal', `--tool-calling expects native or prompt, got "${toolCalling}"`);
  }
  try {
    return resolveModel(
      spec,
      {
        ...(baseUrl === undefined ? {} : { baseUrl }),
        ...(headers === undefined ? {} : { headers }),
        ...(toolCalling === undefined ? {} : { toolCalling }),
      },
      env,
    );
  } catch (error) {
    // Where the model came from, when the command line does not show it.
    if (fromEnv === undefined || !(error instanceof ReinError)) throw error;
    throw new ReinError(error.code, error.kind, `${error.message} (the model is REIN_MODEL=${spec}; --model overrides it)`, {
      cause: error,
    });
  }
}

/** A header name as HTTP allows it (an RFC 9110 token). */
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/**
 * `--header 'name: value'` (repeatable) as a record. Refused, naming the flag: no colon, a
 * name HTTP does not allow, a value with a line break or other control character (it would
 * end the header early). The value is not quoted back: it is often a key.
 */
export function headersFromFlags(list: readonly string[]): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const entry of list) {
    const colon = entry.indexOf(':');
    const name = colon === -1 ? '' : entry.slice(0, colon).trim();
    const value = colon === -1 ? '' : entry.slice(colon + 1).trim();
    if (colon === -1 || !HEADER_NAME.test(name)) {
      const shown = colon === -1 ? 'no ":" between name and value' : `the name ${JSON.stringify(name)} is not a header name`;
      throw new ReinError('config', 'fatal', `--header takes "name: value", e.g. --header 'api-key: …' (got ${shown})`);
    }
    if (/[\x00-\x08\x0a-\x1f\x7f]/.test(value)) {
      throw new ReinError(
        'config',
        'fatal',
        `--header ${name}: the value holds a line break or another control character, which no header may hold`,
      );
    }
    headers[name] = value;
  }
  return headers;
}

/**
 * `--base-url` must be an http(s) URL. Checked here to name the flag; the value is not
 * quoted back, since a URL may carry a password (`https://user:pass@host/v1`).
 */
function checkBaseUrlFlag(value: string): void {
  let protocol: string | undefined;
  try {
    protocol = new URL(value).protocol;
  } catch {
    protocol = undefined;
  }
  if (protocol === 'http:' || protocol === 'https:') return;
  const got = protocol === undefined ? 'something that is not a URL' : `a URL of scheme ${protocol.slice(0, -1)}`;
  throw new ReinError(
    'config',
    'fatal',
    `--base-url must be an http:// or https:// URL up to the API version, e.g. http://127.0.0.1:11434/v1 (got ${got})`,
  );
}

/**
 * The limits the model cannot keep, refused before any request: `--max-cost` without a
 * price to count cost by, and `--max-output-tokens` that leaves no room in the window the
 * context engine works with (every request would fail as `context_overflow`). The
 * library refuses the first too, in its own terms (`limits.maxCostUsd`, `modelInfo`).
 */
function checkModelLimits(model: ModelRef, values: AgentFlagValues, options: Pick<AgentOptions, 'limits' | 'modelOptions'>): void {
  const info = lookupModel(model.provider, model.id);
  const name = `${model.provider}/${model.id}`;
  if (options.limits?.maxCostUsd !== undefined && !info.pricing) {
    throw new ReinError(
      'config',
      'fatal',
      `--max-cost cannot be enforced: rein has no price for ${name} (rein models lists the models it has prices for). ` +
        'Limit the run with --max-steps or --timeout instead',
    );
  }
  const maxTokens = options.modelOptions?.maxTokens;
  if (maxTokens !== undefined && maxTokens >= info.contextWindow) {
    const window = info.catalogId
      ? `the ${info.contextWindow}-token window of ${name}`
      : `the ${info.contextWindow}-token window rein assumes for ${name} (a model its catalog does not know)`;
    throw new ReinError(
      'config',
      'fatal',
      `--max-output-tokens ${values['max-output-tokens']} is ${maxTokens > info.contextWindow ? 'more than' : 'all of'} ${window}: ` +
        'the request needs room in it too. Lower --max-output-tokens',
    );
  }
}

/**
 * A warning when `--max-output-tokens` is above the output limit rein's catalog gives the
 * model: the provider may refuse the request. Only a warning, as the catalog may be behind
 * the provider (output limits grow, some behind a beta header); `undefined` when all is well.
 */
export function outputLimitWarning(model: ModelRef, maxTokens: number | undefined): string | undefined {
  if (maxTokens === undefined) return undefined;
  const info = lookupModel(model.provider, model.id);
  if (!info.catalogId || maxTokens <= info.maxOutputTokens) return undefined;
  return `--max-output-tokens ${maxTokens} is more than the ${info.maxOutputTokens} tokens rein's catalog gives ${model.provider}/${model.id} for an answer; the provider may refuse the request`;
}

/** Flags shared by `rein run` and `rein chat`, and building an Agent from them. */
import { ReinError } from '../errors.js';
import type { AgentOptions } from '../loop/options.js';
import { resolveModel } from '../model/resolve.js';
import { seedTools } from '../tools/builtin/index.js';
import type { ThinkingLevel } from '../model/types.js';
import { maskStoreLocation, namedStoreLocation } from '../store/open.js';
import type { RunStore } from '../store/types.js';
import type { CliIO } from './io.js';
import type { FlagOptions } from './flags.js';
import { openStoreFor } from './commands/store-command.js';

const THINKING_LEVELS: readonly string[] = ['off', 'low', 'medium', 'high'];

/** The flags every agent command takes. */
export const AGENT_FLAGS = {
  model: { type: 'string', short: 'm' },
  'base-url': { type: 'string' },
  'max-steps': { type: 'string' },
  timeout: { type: 'string' },
  system: { type: 'string' },
  thinking: { type: 'string' },
  'max-cost': { type: 'string' },
  'max-output-tokens': { type: 'string' },
  json: { type: 'boolean' },
  'no-stream': { type: 'boolean' },
  'no-tools': { type: 'boolean' },
  tools: { type: 'string' },
  allow: { type: 'string', multiple: true },
  ask: { type: 'string', multiple: true },
  deny: { type: 'string', multiple: true },
  mode: { type: 'string' },
  root: { type: 'string' },
  'no-mcp': { type: 'boolean' },
  'no-skills': { type: 'boolean' },
  memory: { type: 'boolean' },
  store: { type: 'string' },
  'no-store': { type: 'boolean' },
} as const satisfies FlagOptions;

/** Help lines of the shared flags; `runOnly` ones are left out of `rein chat --help` (chat refuses them). */
const AGENT_FLAG_LINES: ReadonlyArray<{ text: string; runOnly?: boolean }> = [
  { text: `  -m, --model <provider/model>  e.g. openai/gpt-4o-mini, ollama/llama3.1, vllm/<id>
                                 (default: $REIN_MODEL, else openai/gpt-4o-mini)` },
  {
    text: `      --base-url <url>           the server of the model's provider (for openai/… any
                                   OpenAI-compatible server), e.g. http://127.0.0.1:8000/v1`,
  },
  { text: '      --max-steps <n>            model calls before the run stops (default 15)' },
  { text: '      --timeout <seconds>        whole-run time limit' },
  { text: '      --system <text>            system prompt' },
  { text: '      --thinking <level>         off | low | medium | high (mapped per provider)' },
  { text: '      --max-cost <usd>           stop the run once it has cost this much (catalog prices)' },
  { text: "      --max-output-tokens <n>    the output limit of each model response (default: the server's)" },
  { text: '      --json                     one JSON event per line on stdout, nothing else', runOnly: true },
  {
    text: `      --no-stream                write each answer once its model response is final: text
                                   a failed, retried attempt streamed never reaches stdout`,
    runOnly: true,
  },
  { text: '      --no-tools                 offer the model no tools (no workspace, no MCP)' },
  { text: '      --tools <a,b,c>            only these tools (names or globs such as github__*)' },
  { text: '      --root <dir>               the workspace the file and shell tools are confined to (default: .)' },
  {
    text: `      --allow <rule>             permission rules, repeatable: --allow 'bash(git status*)',
      --ask <rule>                 --ask 'write_file(src/**)', --deny 'bash(rm *)', --deny 'github__*'
      --deny <rule>`,
  },
  { text: '      --mode <mode>              default | acceptEdits | plan (no side effects) | yolo (no questions)' },
  { text: '      --no-mcp                   do not start the MCP servers of .mcp.json / ~/.rein/mcp.json' },
  { text: '      --no-skills                do not load skills (.rein/skills, .agents/skills, ~/.rein/skills)' },
  { text: '      --memory                   remember/recall tools and memory hits, in .rein/memory.db' },
  { text: '      --store <path|postgres://…>  where runs are logged (default: $REIN_DATABASE_URL, else .rein/rein.db)' },
  { text: '      --no-store                 do not log the run' },
  { text: '  -h, --help                     this help' },
];

/** Help text of the shared flags, as `rein run` or `rein chat` takes them. */
export function agentFlagsHelp(command: 'run' | 'chat'): string {
  return AGENT_FLAG_LINES.filter((line) => command === 'run' || !line.runOnly)
    .map((line) => line.text)
    .join('\n');
}

export type AgentFlagValues = {
  model?: string;
  'base-url'?: string;
  'max-steps'?: string;
  timeout?: string;
  system?: string;
  thinking?: string;
  'max-cost'?: string;
  'max-output-tokens'?: string;
  json?: boolean;
  'no-stream'?: boolean;
  'no-tools'?: boolean;
  tools?: string;
  allow?: string[];
  ask?: string[];
  deny?: string[];
  mode?: string;
  root?: string;
  'no-mcp'?: boolean;
  'no-skills'?: boolean;
  memory?: boolean;
  store?: string;
  'no-store'?: boolean;
  help?: boolean;
};

function positiveNumber(flag: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new ReinError('config', 'fatal', `--${flag} expects a positive number, got "${value}"`);
  return n;
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
      throw new ReinError('config', 'fatal', `cannot open the run store ${maskStoreLocation(named)}: ${(error as Error).message}`, { cause: error });
    }
    io.stderr.write(`rein: runs are not being logged (${(error as Error).message}); --no-store silences this\n`);
    return undefined;
  }
}

/**
 * The limits and thinking level of the flags, checked (a bad number or an unknown level is
 * a `config` error).
 */
export function limitsFromFlags(values: AgentFlagValues): Pick<AgentOptions, 'limits' | 'modelOptions'> {
  const maxSteps = positiveNumber('max-steps', values['max-steps']);
  if (maxSteps !== undefined && !Number.isInteger(maxSteps)) {
    throw new ReinError('config', 'fatal', `--max-steps expects a whole number, got "${values['max-steps']}"`);
  }
  const timeoutS = positiveNumber('timeout', values.timeout);
  const maxCostUsd = positiveNumber('max-cost', values['max-cost']);
  const maxTokens = positiveNumber('max-output-tokens', values['max-output-tokens']);
  if (maxTokens !== undefined && !Number.isInteger(maxTokens)) {
    throw new ReinError('config', 'fatal', `--max-output-tokens expects a whole number, got "${values['max-output-tokens']}"`);
  }
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
      ...(timeoutS === undefined ? {} : { timeoutMs: Math.round(timeoutS * 1000) }),
      ...(maxCostUsd === undefined ? {} : { maxCostUsd }),
    },
    ...(Object.keys(modelOptions).length === 0 ? {} : { modelOptions }),
  };
}

/**
 * The agent's options from the flags, checked (bad numbers, unknown thinking level, the
 * model resolved so a missing key or unknown provider is reported) before anything is
 * opened. Also what `rein resume` rebuilds from the flags a run recorded.
 */
export function agentOptionsFromFlags(values: AgentFlagValues, env: NodeJS.ProcessEnv): AgentOptions {
  const limits = limitsFromFlags(values);
  const baseUrl = values['base-url'];
  return {
    model: resolveModel(values.model ?? env.REIN_MODEL ?? 'openai/gpt-4o-mini', baseUrl === undefined ? {} : { baseUrl }, env),
    ...(values.system === undefined ? {} : { system: values.system }),
    tools: values['no-tools'] ? [] : seedTools(),
    ...limits,
  };
}

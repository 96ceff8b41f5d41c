/**
 * `rein demo`: the two example tasks of the seed, run offline against the scripted model
 * server started in-process. The model's answers are scripted; the tools are real, and
 * the whole trace is shown.
 */
import { Agent } from '../../loop/agent.js';
import { startScriptedServer } from '../../testing/index.js';
import type { ChatMessage, ChatRequest, ScriptTurn } from '../../testing/index.js';
import { seedTools } from '../../tools/builtin/index.js';
import { EXIT, type Command } from '../io.js';
import { runTask, exitCodeOf, reportSetupError } from './run.js';
import { storeFromFlags } from '../agent-flags.js';
import { parseCommandLine, type FlagOptions } from '../flags.js';
import type { RunStore } from '../../store/types.js';

const TASKS = ['What time is it?', 'Roll two six-sided dice, then add the two results.'];

/** The demo's own flags: its model, tasks and limits are fixed, so it takes none of `rein run`'s others. */
const DEMO_FLAGS = {
  json: { type: 'boolean' },
  'no-store': { type: 'boolean' },
} as const satisfies FlagOptions;

const usage = `rein demo [--json] [--no-store]

Runs two example tasks against rein's scripted model server, started in-process: an
offline stand-in for a real model (no key, no network). The model's answers are scripted;
the tools (get_current_time, roll_dice, calculate) are real, and the whole trace is shown.`;

function textOf(message: ChatMessage | undefined): string {
  const content = message?.content;
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((p) => (typeof p === 'object' && p && 'text' in p ? String(p.text) : '')).join('');
  return '';
}

/** The scripted model's side of both tasks: it reads the tool results it was sent. */
export function demoScript(request: ChatRequest): ScriptTurn {
  const messages = request.messages;
  let lastUser = -1;
  for (let i = messages.length - 1; i >= 0; i--) {
    if (messages[i]?.role === 'user') {
      lastUser = i;
      break;
    }
  }
  const task = textOf(messages[lastUser]).toLowerCase();
  const results = messages
    .slice(lastUser + 1)
    .filter((m) => m.role === 'tool')
    .map(textOf);
  if (task.includes('time')) {
    if (results.length === 0) return { text: 'Let me check the clock.', toolCalls: [{ name: 'get_current_time', arguments: {} }] };
    // The tool's first line reads "Current time in <zone>: <weekday, date time (offset)>".
    const now = (results[0] ?? '').split('\n')[0]?.replace(/^Current time in [^:]+:\s*/, '');
    return { text: `It is ${now}.` };
  }
  if (task.includes('dice')) {
    if (results.length === 0) {
      return {
        text: 'Rolling both dice at once.',
        toolCalls: [
          { name: 'roll_dice', arguments: { sides: 6 } },
          { name: 'roll_dice', arguments: { sides: 6 } },
        ],
      };
    }
    const [a, b] = results.map(firstRoll);
    if (results.length === 2) return { toolCalls: [{ name: 'calculate', arguments: { expression: `${a} + ${b}` } }] };
    return { text: `You rolled ${a} and ${b}; together that makes ${results[2]}.` };
  }
  return { text: 'This scripted model only knows the two demo tasks. Run `rein run` with a real model for anything else.' };
}

/** The first roll in a `roll_dice` result text, e.g. "Rolled a d6: 4" → 4. */
function firstRoll(result: string): number {
  return Number(/:\s*(\d+)/.exec(result)?.[1] ?? NaN);
}

export const command: Command = {
  description: 'two example tasks against a scripted offline model',
  usage,
  async run(argv, io) {
    let values: { json?: boolean; 'no-store'?: boolean };
    try {
      // A flag it does not know, or a task, would be ignored without a word: refuse them.
      const parsed = parseCommandLine(argv, io, usage, DEMO_FLAGS, { positionals: false });
      if (!parsed) return EXIT.ok;
      values = parsed.values;
    } catch (error) {
      return reportSetupError(error, io, argv.includes('--json'));
    }
    const json = Boolean(values.json);
    const server = await startScriptedServer({ script: demoScript, tokenDelayMs: json ? 0 : 15, chunkSize: 6 });
    let store: RunStore | undefined;
    try {
      // The demo's runs are logged like any other, so `rein runs` and `rein show` have something to show.
      store = await storeFromFlags({ 'no-store': Boolean(values['no-store']) }, io);
      const agent = new Agent({ model: server.model('scripted-demo'), tools: seedTools(), ...(store ? { store } : {}) });
      if (!json) {
        io.stderr.write(
          'rein demo — the model is a SCRIPTED OFFLINE MODEL (no key, no network): its answers are scripted, the tools are real.\n',
        );
      }
      let code: number = EXIT.ok;
      for (const task of TASKS) {
        if (!json) io.stderr.write(`\n▶ task: ${task}\n`);
        const result = await runTask(agent, task, io, json, { verbose: true });
        if (code === EXIT.ok) code = exitCodeOf(result);
        if (result.status === 'aborted') break;
      }
      return code;
    } catch (error) {
      return reportSetupError(error, io, json);
    } finally {
      await server.close();
      await store?.close();
    }
  },
};

/**
 * `rein chat`: an interactive session. The history is kept across prompts; a line typed
 * while the agent works is a steering message; `exit` or `quit` ends the session.
 */
import { createInterface } from 'node:readline';
import type { Message } from '../../model/types.js';
import type { RunHandle } from '../../loop/handle.js';
import { ReinError } from '../../errors.js';
import { EXIT, type Command } from '../io.js';
import { HumanRenderer } from '../render.js';
import { AGENT_FLAGS_HELP, agentOptionsFromFlags, parseAgentArgs, storeFromFlags } from '../agent-flags.js';
import { Agent } from '../../loop/agent.js';
import type { RunStore } from '../../store/types.js';
import { reportSetupError } from './run.js';

const usage = `rein chat [options]

An interactive session: type a task, read the answer, go on; the conversation is kept.
A line typed while the agent works steers it (it is read after the current tool calls).
Ctrl-C stops the current run; \`exit\`, \`quit\` or Ctrl-D ends the session.

${AGENT_FLAGS_HELP}`;

export const command: Command = {
  description: 'an interactive session',
  usage,
  async run(argv, io) {
    let agent;
    let store: RunStore | undefined;
    try {
      const { values } = parseAgentArgs(argv);
      if (values.help) {
        io.stdout.write(`${usage}\n`);
        return EXIT.ok;
      }
      if (values.json) throw new ReinError('config', 'fatal', '--json is for `rein run`; chat is interactive');
      const options = agentOptionsFromFlags(values, io.env);
      store = await storeFromFlags(values, io);
      agent = new Agent({ ...options, ...(store ? { store } : {}) });
    } catch (error) {
      await store?.close();
      return reportSetupError(error, io, false);
    }
    const chatAgent = agent;

    const rl = createInterface({ input: io.stdin, output: io.stderr, terminal: Boolean(io.stdin.isTTY) });
    let history: Message[] = [];
    let active: RunHandle | undefined;
    let exitAfterRun = false;
    let closed = false;
    const prompt = (): void => {
      if (closed) return;
      rl.setPrompt('> ');
      rl.prompt();
    };

    return new Promise<number>((resolve) => {
      const finish = (): void => {
        active?.abort('session ended');
        rl.close();
      };
      rl.on('SIGINT', () => {
        if (active) active.abort('interrupted');
        else finish();
      });
      rl.on('close', () => {
        closed = true;
        // readline only pauses its input; a piped stdin would keep the process alive.
        io.stdin.destroy();
        // Let a run that is still going end cleanly before leaving.
        void (active ?? Promise.resolve()).then(() => store?.close()).then(() => resolve(EXIT.ok));
      });
      rl.on('line', (line) => {
        const text = line.trim();
        if (active) {
          // `exit` typed during a run ends the session once the run is done, not a steer.
          if (text === 'exit' || text === 'quit') exitAfterRun = true;
          else if (text) {
            active.steer(text);
            // Say at once that the line was taken; it is read when the current step ends.
            io.stderr.write(`↳ queued to steer the run: ${text}\n`);
          }
          return;
        }
        if (text === 'exit' || text === 'quit') return finish();
        if (!text) return prompt();
        const handle = chatAgent.run(text, { history });
        active = handle;
        const renderer = new HumanRenderer(io);
        void (async () => {
          for await (const event of handle) renderer.onEvent(event);
          const result = await handle;
          renderer.summary(result);
          history = result.messages;
          active = undefined;
          if (exitAfterRun && !closed) rl.close();
          else prompt();
        })();
      });
      io.stderr.write('rein chat — type a task; `exit` to leave.\n');
      prompt();
    });
  },
};

/**
 * `rein chat`: an interactive session. The history is kept across prompts; a line typed
 * while the agent works is a steering message; `exit` or `quit` ends the session.
 */
import { createInterface } from 'node:readline';
import { steerResourceUpdates } from '../../project/resource-updates.js';
import type { Message } from '../../model/types.js';
import type { RunHandle } from '../../loop/handle.js';
import { ReinError } from '../../errors.js';
import { EXIT, type Command } from '../io.js';
import { HumanRenderer, childrenViewOf, type ChildrenView } from '../render.js';
import { terminalLine } from '../terminal-text.js';
import { AGENT_FLAGS, agentFlagsHelp, storeFromFlags } from '../agent-flags.js';
import { DEFAULT_AGENT, resolveNamedAgent } from '../named-agent.js';
import type { Agent } from '../../loop/agent.js';
import type { RunStore } from '../../store/types.js';
import { reportSetupError } from './run.js';
import { openCliAgent } from '../cli-agent.js';
import { parseCommandLine } from '../flags.js';
import type { Workbench } from '../workbench.js';
import { parseSkillCommands } from '../../skills/commands.js';
import { userInput } from '../session-input.js';

const usage = `rein chat [options]

An interactive session: type a task, read the answer, go on; the conversation is kept.
A line typed while the agent works steers it (it is read after the current tool calls).
Lines piped in are read as they arrive: piped all at once, the later ones steer the first
task's run; to run prompts one by one, send each once the \`> \` prompt is back on stderr.
Ctrl-C stops the current run and keeps the session; \`exit\`, \`quit\`, Ctrl-D, or
Ctrl-C at the prompt ends the session (exit 0). It takes no task on the command line:
type it at the prompt (\`rein run "<task>"\` runs one task).

${agentFlagsHelp('chat')}`;

export const command: Command = {
  description: 'an interactive session',
  usage,
  async run(argv, io) {
    let agent: Agent;
    let store: RunStore | undefined;
    let children: ChildrenView = 'summary';
    let bench: Workbench | undefined;
    let runOptions: Awaited<ReturnType<typeof openCliAgent>>['runOptions'] = {};
    // An approval question waiting for the next line typed (the chat reads every line).
    let pendingAnswer: { answer(line: string): void; giveUp(why: string): void } | undefined;
    // Once the input has ended nobody can answer: a question asked after that (piped input
    // that ended while the run was working) is refused at once instead of waiting forever.
    let inputEnded = false;
    const question = (text: string): Promise<string> =>
      new Promise((resolve, reject) => {
        io.stderr.write(text);
        const giveUp = (why: string): void => {
          io.stderr.write('\n');
          reject(new Error(why));
        };
        if (inputEnded) giveUp('the input was closed');
        else pendingAnswer = { answer: resolve, giveUp };
      });
    try {
      const parsed = parseCommandLine(argv, io, usage, AGENT_FLAGS);
      if (!parsed) return EXIT.ok;
      const { values, positionals } = parsed;
      // A task given here would be dropped without a word: say where it goes instead.
      if (positionals.length > 0) {
        throw new ReinError(
          'config',
          'fatal',
          `rein chat takes no task on the command line ("${positionals.join(' ')}"): type it at the > prompt, or use rein run "<task>"`,
        );
      }
      if (values.json || values['no-stream'])
        throw new ReinError('config', 'fatal', `${values.json ? '--json' : '--no-stream'} is for \`rein run\`; chat is interactive`);
      if (values.record !== undefined)
        throw new ReinError(
          'config',
          'fatal',
          '--record is for `rein run`: record a run, then play it back with rein scripted-server --fixture',
        );
      children = childrenViewOf(values.children);
      const named = await resolveNamedAgent(values.agent ?? DEFAULT_AGENT, values, io.env, io);
      store = await storeFromFlags(values, io);
      ({ agent, bench, runOptions } = await openCliAgent(named.values, named.options, io, {
        store,
        people: { question },
        metadata: { ...named.metadata },
      }));
    } catch (error) {
      await bench?.close();
      await store?.close();
      return reportSetupError(error, io, false);
    }
    const mcp = bench.mcp;
    const skills = bench.skills;
    const closeBench = bench.close;
    const chatAgent = agent;
    // Stopped while setting up (Ctrl-C, SIGTERM, the output closed): no session to start.
    if (io.signal.aborted) {
      await closeBench();
      await store?.close();
      return EXIT.aborted;
    }

    // At a terminal, Tab completes `/server:prompt args` through the MCP servers.
    const completer = mcp && io.stdin.isTTY ? (await import('../prompt-completer.js')).promptCompleter(mcp) : undefined;
    const rl = createInterface({
      input: io.stdin,
      output: io.stderr,
      terminal: Boolean(io.stdin.isTTY),
      ...(completer ? { completer } : {}),
    });
    let history: Message[] = [];
    let active: RunHandle | undefined;
    /** The current run from its set-up to its summary: the session ends after it. */
    let current: Promise<void> | undefined;
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
      // Whoever read the output went away (`rein chat … | head`), or SIGTERM or SIGHUP came:
      // end the session, as aborted (its run is stopped and logged as aborted first).
      let stopped = false;
      io.signal.addEventListener(
        'abort',
        () => {
          stopped = true;
          finish();
        },
        { once: true },
      );
      /** Ctrl-C: stops the run and keeps the session; at the prompt, ends the session. */
      const interrupt = (): void => {
        if (active) {
          active.abort('interrupted');
          // The run cannot stop while it waits for an answer: give the question up.
          const waiting = pendingAnswer;
          pendingAnswer = undefined;
          waiting?.giveUp('interrupted');
        } else finish();
      };
      // At a terminal readline reads Ctrl-C as a key; with stdin piped it reaches the process.
      rl.on('SIGINT', interrupt);
      const stopListening = io.onInterrupt?.(interrupt);
      rl.on('close', () => {
        closed = true;
        inputEnded = true;
        // readline only pauses its input; a piped stdin would keep the process alive.
        io.stdin.destroy();
        // Let a run that is still going end cleanly before leaving.
        pendingAnswer?.giveUp('the input was closed');
        pendingAnswer = undefined;
        void (current ?? Promise.resolve())
          .then(() => closeBench())
          .then(() => store?.close())
          .then(() => {
            stopListening?.();
            resolve(stopped ? EXIT.aborted : EXIT.ok);
          });
      });
      rl.on('line', (line) => {
        const text = line.trim();
        if (pendingAnswer) {
          const { answer } = pendingAnswer;
          pendingAnswer = undefined;
          answer(text);
          return;
        }
        if (active) {
          // `exit` typed during a run ends the session once the run is done, not a steer.
          if (text === 'exit' || text === 'quit') exitAfterRun = true;
          else if (text) {
            active.steer(text);
            // Say at once that the line was taken; it is read when the current step ends.
            io.stderr.write(`↳ queued to steer the run: ${terminalLine(text)}\n`);
          }
          return;
        }
        if (text === 'exit' || text === 'quit') return finish();
        if (!text) return prompt();
        current = startRun(text);
      });
      /** Expands the line (MCP prompt, resource mentions), then runs it and renders it. */
      const startRun = async (text: string): Promise<void> => {
        // Until the run exists, lines typed are kept to steer it (not started as runs).
        const queued: string[] = [];
        let cancelled = false;
        const pending = { steer: (t: string) => queued.push(t), abort: () => (cancelled = true) };
        active = pending as unknown as RunHandle;
        let input: Awaited<ReturnType<typeof userInput>>;
        try {
          // A `/skill:name` naming no loaded skill would reach the model as plain text: said here instead.
          const unknownSkills = parseSkillCommands(text, skills).unknown;
          if (unknownSkills.length > 0) throw new Error(unknownSkills.map((u) => u.message).join('; '));
          input = await userInput(text, mcp, io, { prompts: true });
        } catch (error) {
          io.stderr.write(`rein: ${terminalLine(error instanceof Error ? error.message : String(error))}\n`);
          cancelled = true;
        }
        if (cancelled) {
          active = undefined;
          if (exitAfterRun && !closed) rl.close();
          else prompt();
          return;
        }
        const handle = chatAgent.run(input!, { history, ...runOptions });
        for (const steer of queued) handle.steer(steer);
        active = handle;
        const renderer = new HumanRenderer(io, { children });
        // Updates of subscribed resources whose server entry says `updatesToModel` reach the model.
        const stopUpdates = mcp ? steerResourceUpdates(mcp, handle) : undefined;
        try {
          for await (const event of handle) renderer.onEvent(event);
        } finally {
          stopUpdates?.();
        }
        const result = await handle;
        renderer.summary(result);
        history = result.messages;
        active = undefined;
        if (exitAfterRun && !closed) rl.close();
        else prompt();
      };
      io.stderr.write('rein chat — type a task; `exit` to leave.\n');
      prompt();
    });
  },
};

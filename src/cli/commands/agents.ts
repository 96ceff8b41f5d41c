/** `rein agents`: the agents defined in `.rein/agents/` (and `~/.rein/agents/`), and what is wrong with the files that are not. */
import { resolve } from 'node:path';
import { EXIT, type Command } from '../io.js';
import { parseCommandLine } from '../flags.js';
import { terminalLine } from '../terminal-text.js';
import { defaultModelSpec } from '../agent-flags.js';
import { DEFAULT_AGENT, agentDiagnosticLine, loadAgentFiles } from '../named-agent.js';
import { reportSetupError } from './run.js';

const usage = `rein agents [--root <dir>] [--json]

Lists the agents that rein run --agent, rein chat --agent and rein serve can run: the
files .rein/agents/<name>.md of the project (then ~/.rein/agents/), and "default", the
agent rein run builds here (unless .rein/agents/default.md defines it). A file that cannot
be used is reported on stderr with the field and what to fix, and the exit code is 1.
With --json, one JSON object per agent and per problem on stdout.

An agent file is YAML front matter, then the system prompt:

  ---
  name: reviewer                    # the file name without .md
  description: Reviews a diff and lists the problems it finds.
  model: openai/gpt-4o-mini
  baseUrl: http://127.0.0.1:8000/v1 # optional: the model's server
  tools: [read_file, grep, glob]    # optional: only these tools ([]: none)
  mode: plan                        # optional: default | acceptEdits | plan | yolo
  limits: { maxSteps: 20, timeoutMs: 600000 }   # optional
  outputSchema: { type: object, properties: { verdict: { type: string } } }   # optional
  ---
  You are a careful reviewer. …`;

export const command: Command = {
  description: 'list the agents of .rein/agents/',
  usage,
  async run(argv, io) {
    let json = argv.includes('--json');
    try {
      const parsed = parseCommandLine(argv, io, usage, { root: { type: 'string' }, json: { type: 'boolean' } }, { positionals: false });
      if (!parsed) return EXIT.ok;
      json = Boolean(parsed.values.json);
      const root = resolve(parsed.values.root ?? process.cwd());
      const { items, diagnostics } = await loadAgentFiles(root, io.env);
      const rows = items.map((a) => ({
        name: a.name,
        description: a.description,
        model: a.model,
        tools: a.tools ?? null,
        mode: a.mode ?? 'default',
        file: a.file ?? null,
      }));
      if (!items.some((a) => a.name === DEFAULT_AGENT)) {
        rows.unshift({
          name: DEFAULT_AGENT,
          description: 'what rein run builds here: seed and workspace tools, MCP servers, skills, rules',
          model: defaultModelSpec(io.env),
          tools: null,
          mode: 'default',
          file: null,
        });
      }
      if (json) {
        for (const row of rows) io.stdout.write(`${JSON.stringify({ type: 'agent', ...row })}\n`);
        for (const d of diagnostics) io.stdout.write(`${JSON.stringify({ type: 'diagnostic', ...d })}\n`);
      } else {
        io.stdout.write(table(rows));
      }
      for (const d of diagnostics)
        io.stderr.write(`rein: ${d.severity === 'error' ? 'skipped ' : ''}agent ${terminalLine(agentDiagnosticLine(d))}\n`);
      return diagnostics.some((d) => d.severity === 'error') ? EXIT.failed : EXIT.ok;
    } catch (error) {
      return reportSetupError(error, io, false);
    }
  },
};

function table(rows: Array<{ name: string; model: string; tools: string[] | null; mode: string; description: string }>): string {
  const cells = rows.map((r) => [
    r.name,
    r.model,
    r.tools === null ? 'all' : r.tools.length === 0 ? 'none' : r.tools.join(','),
    r.mode,
    r.description,
  ]);
  const head = ['AGENT', 'MODEL', 'TOOLS', 'MODE', 'DESCRIPTION'];
  const widths = head.map((h, i) => Math.max(h.length, ...cells.map((row) => Math.min(40, (row[i] as string).length))));
  const line = (row: string[]) =>
    row
      .map((c, i) => (i === row.length - 1 ? c : c.padEnd(widths[i] as number)))
      .join('  ')
      .trimEnd();
  return `${[line(head), ...cells.map((row) => line(row.map((c) => terminalLine(c))))].join('\n')}\n`;
}

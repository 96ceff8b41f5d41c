// docs/cli.md is the CLI reference: every command `rein --help` lists has its section, and
// every flag a command's own `--help` shows is named in that section (through the real
// binary, so a new command or flag fails here until the page says what it does).
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { rein } from '../cli/spawn.js';
import { sectionUnder } from './markdown.js';

const doc = readFileSync(fileURLToPath(new URL('../../docs/cli.md', import.meta.url)), 'utf8');

/** The section of docs/cli.md that describes each command's options. */
const SECTION_OF: Record<string, string[]> = {
  run: ['rein run', 'Options of rein run and rein chat'],
  chat: ['rein chat', 'Options of rein run and rein chat'],
  demo: ['rein demo'],
  'scripted-server': ['rein scripted-server'],
  models: ['rein models'],
  mcp: ['rein mcp'],
  runs: ['Stored runs: runs, show, replay, resume, approve'],
  show: ['Stored runs: runs, show, replay, resume, approve'],
  replay: ['Stored runs: runs, show, replay, resume, approve'],
  resume: ['Stored runs: runs, show, replay, resume, approve'],
  approve: ['Stored runs: runs, show, replay, resume, approve'],
  agents: ['rein agents'],
  serve: ['rein serve'],
  submit: ['rein submit', 'Options of rein run and rein chat'],
  worker: ['rein worker'],
  workers: ['rein workers'],
  trace: ['rein trace'],
};

/** True when `text` names `flag` in inline code (`--store`, `--store <path>`, `-v, --verbose`). */
function namesFlag(text: string, flag: string): boolean {
  return new RegExp(`\`[^\`\\n]*${flag}(?![a-z-])[^\`\\n]*\``).test(text);
}

describe('docs/cli.md', () => {
  it('has a section for every command rein lists', async () => {
    const help = await rein(['--help']);
    expect(help.code).toBe(0);
    const commands = [...help.stdout.matchAll(/^ {2}([a-z-]+) {2,}/gm)].map((m) => m[1] as string);
    expect(commands.length).toBeGreaterThanOrEqual(11);
    expect([...commands].sort()).toEqual(Object.keys(SECTION_OF).sort());
    for (const sections of Object.values(SECTION_OF))
      for (const heading of sections) expect(sectionUnder(doc, heading), heading).toBeDefined();
  });

  it("names every flag of every command in that command's section", async () => {
    const missing: string[] = [];
    for (const [command, sections] of Object.entries(SECTION_OF)) {
      const help = await rein([command, '--help']);
      expect(help.code, `rein ${command} --help`).toBe(0);
      const flags = new Set([...help.stdout.matchAll(/--[a-z][a-z-]*/g)].map((m) => m[0]).filter((flag) => flag !== '--help'));
      expect(flags.size, `flags of rein ${command}`).toBeGreaterThan(0);
      const text = sections.map((heading) => sectionUnder(doc, heading) ?? '').join('\n');
      for (const flag of flags) if (!namesFlag(text, flag)) missing.push(`rein ${command} ${flag}`);
    }
    expect(missing).toEqual([]);
    // Twelve rein processes, one after the other: generous on a busy machine.
  }, 120_000);

  it('names --help, --version and the exit codes', () => {
    expect(namesFlag(doc, '--help')).toBe(true);
    expect(namesFlag(doc, '--version')).toBe(true);
    const codes = sectionUnder(doc, 'Exit codes') ?? '';
    for (const code of ['0', '1', '2', '3', '4', '130', '143, 129']) expect(codes).toContain(`| ${code} |`);
  });
});

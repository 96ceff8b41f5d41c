/** A project folder for `rein submit` and `rein worker`: agent files, and an environment that reaches no real API. */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface Project {
  dir: string;
  env: NodeJS.ProcessEnv;
  remove(): void;
}

/** A folder with `.rein/agents/<name>.md` for each of `agents` (name → front matter lines). */
export function makeProject(agents: Record<string, string>): Project {
  const dir = mkdtempSync(join(tmpdir(), 'rein-worker-'));
  mkdirSync(join(dir, '.rein', 'agents'), { recursive: true });
  for (const [name, fields] of Object.entries(agents)) {
    writeFileSync(
      join(dir, '.rein', 'agents', `${name}.md`),
      `---\nname: ${name}\ndescription: a test agent\n${fields}\n---\nYou run the commands you are given.\n`,
    );
  }
  // HOME inside the folder: no agent, rule or skill of the machine's user joins in.
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: dir, NO_COLOR: '1', OPENAI_API_KEY: 'test-key' };
  return { dir, env, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

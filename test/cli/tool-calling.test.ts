// Prompted tools from the command line: a server that refuses tools as Ollama does, and
// --tool-calling prompt; through the real binary (needs `npm run build`).
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeProject, removeProject, type TempProject } from './project.js';
import { rein, startRein } from './spawn.js';

let dirs: TempProject;
let env: NodeJS.ProcessEnv;

beforeEach(async () => {
  dirs = await makeProject('rein-tool-calling-');
  env = { PATH: process.env.PATH, HOME: dirs.home, NO_COLOR: '1' };
});

afterEach(async () => {
  await removeProject(dirs);
});

// A model without tool calling: Ollama's refusal when sent tools; its calls in its text.
const SCRIPT = `export default (request) => {
  if (request.toolNames.length > 0) return { fault: { type: 'status', status: 400, body: { error: { message: 'llama3:latest does not support tools', type: 'api_error', param: null, code: null } } } };
  const last = request.messages.at(-1);
  if (last.role === 'user' && last.content.startsWith('<tool_response')) return { text: 'It is ' + last.content.split('\\n')[1] + '.' };
  return { text: '<tool_call>{"name": "calculate", "arguments": {"expression": "6 * 7"}}</tool_call>' };
};
`;

async function serve() {
  const script = join(dirs.project, 'no-tools.mjs');
  await writeFile(script, SCRIPT);
  const server = startRein(['scripted-server', '--script-module', script], { cwd: dirs.project, env });
  await server.waitFor(/Ctrl-C stops it/);
  const { url } = JSON.parse(server.out.stdout.split('\n')[0]!) as { url: string };
  return { server, url };
}

describe('rein run with a model without tool calling', () => {
  it('switches to tools in the prompt when the server refuses them, with a note, and so from the start with --tool-calling prompt', async () => {
    const { server, url } = await serve();
    try {
      const run = await rein(['run', '--no-store', '--base-url', url, '--model', 'openai/llama3', 'what is 6 * 7?'], {
        cwd: dirs.project,
        env,
      });
      expect(run.code).toBe(0);
      expect(run.stdout.trim()).toBe('It is 42.');
      expect(run.stderr).toMatch(
        /note: openai \(.*\) refused the tools parameter for llama3: its tools are described in the prompt from now on/,
      );
      expect(run.stderr).toMatch(/→ calculate \{"expression":"6 \* 7"\}/);
      const prompted = await rein(
        ['run', '--no-store', '--base-url', url, '--model', 'openai/llama3', '--tool-calling', 'prompt', 'what is 6 * 7?'],
        { cwd: dirs.project, env },
      );
      expect(prompted.code).toBe(0);
      expect(prompted.stdout.trim()).toBe('It is 42.');
      expect(prompted.stderr).not.toMatch(/note:/);
    } finally {
      server.kill();
      await server.done;
    }
  });
});

/**
 * Answering a server's elicitation at the terminal: the message, then one question per
 * field of the requested schema (its title, type, allowed values and default shown; an
 * empty line takes the default), re-asked when the value does not fit; or, in URL mode,
 * the URL to open. Typing `decline` or `cancel` at any question answers that.
 */
import type { McpElicitRequest, McpElicitResult } from '../mcp/types.js';
import { checkForm } from '../mcp/elicitation.js';
import type { CliIO } from './io.js';
import { terminalLine } from './terminal-text.js';

const MAX_TRIES = 3;

/** The `elicit` hook of the CLI; `question` shows a prompt and resolves with the line typed. */
export function terminalElicit(
  io: CliIO,
  question: (text: string) => Promise<string>,
): (request: McpElicitRequest) => Promise<McpElicitResult> {
  return async (request) => {
    // The server's words reach the terminal with their control sequences shown, not obeyed.
    io.stderr.write(`\nMCP server "${request.server}" asks: ${terminalLine(request.message)}\n`);
    if (request.mode === 'url') {
      io.stderr.write(`  open: ${terminalLine(request.url ?? '')}\n`);
      const answer = (await question('Opened it and done? [y]es / [d]ecline / [c]ancel: ')).trim().toLowerCase();
      return { action: answer.startsWith('y') ? 'accept' : answer.startsWith('d') ? 'decline' : 'cancel' };
    }
    const schema = request.requestedSchema ?? { type: 'object' as const, properties: {} };
    for (let attempt = 1; attempt <= MAX_TRIES; attempt++) {
      const content: Record<string, unknown> = {};
      for (const [name, field] of Object.entries(schema.properties)) {
        const required = schema.required?.includes(name) === true;
        const allowed = Array.isArray(field.enum)
          ? ` (${(field.enum as unknown[]).map((v) => terminalLine(String(v))).join(' / ')})`
          : field.type
            ? ` (${terminalLine(String(field.type))})`
            : '';
        const fallback = request.defaults?.[name];
        const hint = fallback !== undefined ? ` [${terminalLine(String(fallback))}]` : required ? '' : ' [skip]';
        const label = terminalLine(typeof field.title === 'string' ? field.title : name);
        const line = (await question(`  ${label}${allowed}${hint}: `)).trim();
        if (line === 'decline' || line === 'cancel') return { action: line };
        if (line !== '') content[name] = field.type === 'array' ? line.split(',').map((s) => s.trim()) : line;
      }
      const checked = await checkForm(schema, content);
      if (checked.ok) return { action: 'accept', content: checked.value as McpElicitResult['content'] };
      io.stderr.write(`  That does not fit: ${terminalLine(checked.errors.join('; '))}\n`);
    }
    return { action: 'cancel' };
  };
}

/**
 * `rein mcp list | tools [server] | call <server> <tool> '<json>'`: the configured MCP
 * servers, their tools, and one call without a model, for debugging a server. Reads
 * the nearest `.mcp.json` (from the current folder up to the repository root) and
 * `~/.rein/mcp.json`; every server is tried once (no reconnecting) and closed before the
 * command ends.
 */
import { homedir } from 'node:os';
import { parseArgs } from 'node:util';
import { toReinError } from '../../errors.js';
import { base64Bytes } from '../../mcp/content.js';
import type { McpHost, McpHostOptions } from '../../mcp/host.js';
import type { McpDiagnostic, McpServerStatus } from '../../mcp/types.js';
import { EXIT, type CliIO, type Command } from '../io.js';
import { shorten } from '../render.js';

const usage = `rein mcp <list | tools [server] | call <server> <tool> ['<json arguments>'] | login <server> | logout <server>> [options]

  list                      configured servers: transport, status (or "needs login"), tool count, last error
  tools [server]            the tools the model would see (rein name, server, risk, description)
  call <server> <tool> ...  call one tool without a model and print its result;
                            <tool> is the server's name for it or the rein name
  login <server>            log in to an OAuth-protected server in the browser; tokens are kept
                            in $REIN_HOME/mcp-auth (default ~/.rein), mode 0600
  logout <server>           forget the server's stored tokens and registration

Servers come from the nearest .mcp.json (this folder up to the repository root) and ~/.rein/mcp.json
({ "mcpServers": { "name": { "command": "...", "args": [...] } | { "url": "..." } } }).
Each server is started once (no reconnecting) and closed before rein exits.

Options:
      --config <file>  read this file instead of the default ones (repeatable)
      --timeout <ms>   call: per-call timeout (default: the server's timeoutMs or 60 s);
                       login: how long to wait for the browser (default 300000)
      --no-browser     login: print the URL only, start no browser
      --json           print JSON instead of tables and text
  -v, --verbose        print the servers' stderr and connection events to stderr
  -h, --help           show this help`;

type Values = ReturnType<typeof parse>['values'];

export const command: Command = {
  description: 'list MCP servers and their tools; call a tool without a model',
  usage,
  async run(argv, io) {
    let parsed: ReturnType<typeof parse>;
    try {
      parsed = parse(argv);
    } catch (error) {
      io.stderr.write(`rein mcp: ${(error as Error).message}\n${usage}\n`);
      return EXIT.usage;
    }
    const { values, positionals } = parsed;
    const [sub, ...rest] = positionals;
    if (values.help || sub === undefined || sub === 'help') {
      io.stdout.write(`${usage}\n`);
      return values.help || sub === 'help' ? EXIT.ok : EXIT.usage;
    }
    try {
      switch (sub) {
        case 'list':
          if (rest.length > 0) return usageError(io, `list takes no arguments, got: ${rest.join(' ')}`);
          return await list(values, io);
        case 'tools':
          if (rest.length > 1) return usageError(io, `tools takes at most one server name, got: ${rest.join(' ')}`);
          return await tools(rest[0], values, io);
        case 'call':
          if (rest.length < 2 || rest.length > 3) return usageError(io, "call needs <server> <tool> and optionally '<json arguments>'");
          return await call(rest[0] as string, rest[1] as string, rest[2], values, io);
        case 'login':
          if (rest.length !== 1) return usageError(io, 'login needs exactly one server name');
          return await login(rest[0] as string, values, io);
        case 'logout':
          if (rest.length !== 1) return usageError(io, 'logout needs exactly one server name');
          return await logout(rest[0] as string, values, io);
        default:
          return usageError(io, `unknown subcommand "${sub}": use list, tools, call, login or logout`);
      }
    } catch (error) {
      const info = toReinError(error);
      io.stderr.write(`rein mcp: ${info.message}\n`);
      return info.code === 'config' ? EXIT.usage : info.code === 'aborted' ? EXIT.aborted : EXIT.failed;
    }
  },
};

function parse(argv: string[]) {
  return parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      config: { type: 'string', multiple: true },
      timeout: { type: 'string' },
      'no-browser': { type: 'boolean' },
      json: { type: 'boolean' },
      verbose: { type: 'boolean', short: 'v' },
      help: { type: 'boolean', short: 'h' },
    },
  });
}

function usageError(io: CliIO, message: string): number {
  io.stderr.write(`rein mcp: ${message}\n${usage}\n`);
  return EXIT.usage;
}

/** Starts the configured servers (or `only` those), once each, closed by the caller. */
async function open(values: Values, io: CliIO, only?: string[], extra: Partial<McpHostOptions> = {}): Promise<McpHost> {
  const { startMcp } = await import('../../mcp/host.js');
  const options: McpHostOptions = {
    ...extra,
    cwd: process.cwd(),
    home: io.env.HOME || homedir(),
    env: io.env,
    reconnect: false,
    pingIntervalMs: 0,
    ...(values.config ? { configFiles: values.config } : {}),
    ...(only ? { only } : {}),
  };
  if (values.verbose) {
    options.log = (entry) => io.stderr.write(`[${entry.server}] ${entry.kind === 'stderr' ? '' : `${entry.level}: `}${entry.message}\n`);
  }
  const host = await startMcp(options);
  // Ctrl-C while starting or calling: stop the servers rather than leave them behind.
  io.signal.addEventListener('abort', () => void host.close(), { once: true });
  return host;
}

async function list(values: Values, io: CliIO): Promise<number> {
  const host = await open(values, io);
  try {
    const status = host.status();
    if (values.json) {
      io.stdout.write(`${JSON.stringify({ servers: status, diagnostics: host.diagnostics }, null, 2)}\n`);
    } else {
      reportDiagnostics(host.diagnostics, io);
      if (status.length === 0) {
        io.stdout.write(
          'No MCP servers configured. Add them to .mcp.json here (or in the repository root) or to ~/.rein/mcp.json: { "mcpServers": { "name": { "command": "…" } } }\n',
        );
      } else {
        io.stdout.write(
          table(
            ['NAME', 'TRANSPORT', 'STATUS', 'TOOLS', 'LAST ERROR'],
            status.map((s) => [
              s.name,
              s.transport,
              s.needsLogin ? 'needs login' : s.state,
              String(s.toolCount),
              shorten(s.lastError ?? '', 160),
            ]),
          ),
        );
      }
    }
    const failed = status.some((s) => s.state === 'failed' || s.state === 'reconnecting');
    return failed || host.diagnostics.some((d) => d.severity === 'error') ? EXIT.failed : EXIT.ok;
  } finally {
    await host.close();
  }
}

async function tools(server: string | undefined, values: Values, io: CliIO): Promise<number> {
  const host = await open(values, io, server === undefined ? undefined : [server]);
  try {
    if (server !== undefined) {
      const status = host.status().find((s) => s.name === server);
      if (!status) return unknownServer(host, server, io);
      if (status.state !== 'connected') return notConnected(status, io);
    }
    const infos = host.toolInfo(server);
    if (values.json) {
      io.stdout.write(`${JSON.stringify(infos, null, 2)}\n`);
    } else {
      reportDiagnostics(host.diagnostics, io);
      for (const s of host.status())
        if (s.state !== 'connected' && s.state !== 'disabled')
          io.stderr.write(`rein mcp: server "${s.name}" is ${s.state}: ${s.lastError ?? ''}\n`);
      io.stdout.write(
        table(
          ['NAME', 'SERVER', 'RISK', 'DESCRIPTION'],
          infos.map((t) => [t.name, t.server, t.risk ?? '', shorten(t.description, 100)]),
        ),
      );
    }
    return EXIT.ok;
  } finally {
    await host.close();
  }
}

async function call(server: string, tool: string, json: string | undefined, values: Values, io: CliIO): Promise<number> {
  let args: unknown = {};
  try {
    if (json !== undefined && json.trim() !== '') args = JSON.parse(json);
  } catch (error) {
    return usageError(io, `the arguments are not valid JSON (${(error as Error).message}): pass one object, e.g. '{"path": "README.md"}'`);
  }
  if (args === null || typeof args !== 'object' || Array.isArray(args)) return usageError(io, 'the arguments must be one JSON object');
  const timeoutMs = values.timeout === undefined ? undefined : Number(values.timeout);
  if (timeoutMs !== undefined && !(timeoutMs > 0))
    return usageError(io, `--timeout must be a positive number of milliseconds, got "${values.timeout}"`);

  // At a terminal a server may ask the person (elicitation); elsewhere it cannot.
  const extra: Partial<McpHostOptions> = {};
  if (io.stdin.isTTY && io.stderr.isTTY) {
    const { terminalElicit } = await import('../mcp-elicit.js');
    extra.elicit = terminalElicit(io, (text) => askQuestion(io, text));
  }
  const host = await open(values, io, [server], extra);
  try {
    const status = host.status().find((s) => s.name === server);
    if (!status) return unknownServer(host, server, io);
    if (status.state !== 'connected') return notConnected(status, io);
    const result = await host.callTool(server, tool, args as Record<string, unknown>, {
      signal: io.signal,
      ...(timeoutMs !== undefined ? { timeoutMs } : {}),
      ...(values.verbose
        ? {
            onProgress: (p) =>
              io.stderr.write(
                `[${server}] progress ${p.progress}${p.total !== undefined ? `/${p.total}` : ''}${p.message ? ` ${p.message}` : ''}\n`,
              ),
          }
        : {}),
    });
    if (values.json) {
      io.stdout.write(
        `${JSON.stringify({ server, tool, isError: result.isError, content: result.content, details: result.details, result: result.raw }, null, 2)}\n`,
      );
    } else {
      const text = result.content
        .map((p) => (p.type === 'text' ? p.text : `[image ${p.mimeType}, ${base64Bytes(p.data)} bytes]`))
        .join('\n');
      (result.isError ? io.stderr : io.stdout).write(`${text}\n`);
    }
    return result.isError ? EXIT.failed : EXIT.ok;
  } finally {
    await host.close();
  }
}

async function login(server: string, values: Values, io: CliIO): Promise<number> {
  const timeoutMs = values.timeout === undefined ? 300_000 : Number(values.timeout);
  if (!(timeoutMs > 0)) return usageError(io, `--timeout must be a positive number of milliseconds, got "${values.timeout}"`);
  const { openInBrowser } = await import('../mcp-browser.js');
  const host = await open(values, io, [server], {
    authorize: openInBrowser(io, { launch: values['no-browser'] !== true }),
    loginTimeoutMs: timeoutMs,
  });
  try {
    const status = host.status().find((s) => s.name === server);
    if (!status) return unknownServer(host, server, io);
    if (status.transport === 'stdio') return usageError(io, `server "${server}" is a local (stdio) server: it takes no login`);
    if (status.state !== 'connected') return notConnected(status, io);
    io.stdout.write(`Logged in to "${server}" (${status.toolCount} tools).\n`);
    return EXIT.ok;
  } finally {
    await host.close();
  }
}

async function logout(server: string, values: Values, io: CliIO): Promise<number> {
  // Nothing is started: only the stored tokens are forgotten.
  const { logoutMcpServer } = await import('../../mcp/auth/logout.js');
  try {
    const forgot = await logoutMcpServer(server, {
      cwd: process.cwd(),
      home: io.env.HOME || homedir(),
      env: io.env,
      ...(values.config ? { configFiles: values.config } : {}),
    });
    io.stdout.write(forgot ? `Logged out of "${server}": its stored tokens are gone.\n` : `No login was stored for "${server}".\n`);
    return EXIT.ok;
  } catch (error) {
    const info = toReinError(error);
    io.stderr.write(`rein mcp: ${info.message}\n`);
    return EXIT.usage;
  }
}

/** One question at the terminal (for elicitation); the input ending answers ''. */
async function askQuestion(io: CliIO, text: string): Promise<string> {
  const { createInterface } = await import('node:readline');
  return new Promise((resolve) => {
    const rl = createInterface({ input: io.stdin, output: io.stderr, terminal: true });
    let answered = false;
    rl.question(text, (answer) => {
      answered = true;
      rl.close();
      resolve(answer);
    });
    rl.once('close', () => {
      if (!answered) resolve('cancel');
    });
  });
}

function unknownServer(host: McpHost, server: string, io: CliIO): number {
  reportDiagnostics(host.diagnostics, io);
  io.stderr.write(`rein mcp: no MCP server named "${server}" in the configuration; run \`rein mcp list\` to see the configured ones\n`);
  return EXIT.usage;
}

function notConnected(status: McpServerStatus, io: CliIO): number {
  io.stderr.write(`rein mcp: server "${status.name}" is ${status.state}${status.lastError ? `: ${status.lastError}` : ''}\n`);
  const tail = status.recentLog.filter((line) => !line.startsWith('[rein]')).slice(-5);
  if (tail.length > 0) io.stderr.write(`Its last output:\n${tail.map((line) => `  ${line}`).join('\n')}\n`);
  return EXIT.failed;
}

function reportDiagnostics(diagnostics: readonly McpDiagnostic[], io: CliIO): void {
  for (const d of diagnostics) {
    io.stderr.write(`rein mcp: ${d.severity}: ${d.file ? `${d.file}: ` : ''}${d.key ? `${d.key} ` : ''}${d.message}\n`);
  }
}

/** Left-aligned columns, the last one free. */
function table(header: string[], rows: string[][]): string {
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => (row[column] ?? '').length)));
  const line = (cells: string[]): string =>
    cells
      .map((cell, column) => (column === cells.length - 1 ? cell : cell.padEnd(widths[column] ?? 0)))
      .join('  ')
      .trimEnd();
  return `${[line(header), ...rows.map(line)].join('\n')}\n`;
}

/**
 * `rein mcp logout <server>` as a library call: forgets the stored OAuth state of a
 * configured server without starting anything.
 */
import { homedir } from 'node:os';
import { resolve } from 'node:path';
import { ReinError } from '../../errors.js';
import { loadMcpConfig } from '../config.js';
import { authFile, reinHome, TokenStore } from './token-store.js';

/** Where to find the server's entry and its tokens (defaults as for `startMcp`). */
export interface LogoutOptions {
  cwd?: string;
  home?: string;
  env?: Record<string, string | undefined>;
  configFiles?: string[];
  reinHome?: string;
}

/**
 * Deletes the tokens and registration stored for `server`; `true` when there were some.
 * Throws `not_found` for a server not in the configuration and `config` for a stdio one.
 */
export async function logoutMcpServer(server: string, options: LogoutOptions = {}): Promise<boolean> {
  const env = options.env ?? process.env;
  const home = options.home ?? homedir();
  const config = await loadMcpConfig({
    cwd: resolve(options.cwd ?? process.cwd()),
    home,
    env,
    ...(options.configFiles ? { files: options.configFiles } : {}),
  });
  const entry = config.servers[server];
  if (!entry) {
    const known = Object.keys(config.servers).join(', ') || 'none';
    throw new ReinError('not_found', 'correctable', `no MCP server named "${server}" in the configuration; configured: ${known}`);
  }
  if ('command' in entry) throw new ReinError('config', 'fatal', `MCP server "${server}" is a local (stdio) server: it has no login`);
  return new TokenStore(authFile(options.reinHome ?? reinHome(env, home), server, entry.url)).clear();
}

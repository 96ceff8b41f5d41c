/**
 * Opening an authorization URL for `rein mcp login`: the URL is always printed (a person
 * on another machine can follow it; the redirect still comes back to this machine's
 * loopback listener only from a browser here), and a browser is started — `$BROWSER` when
 * set, else the platform's opener (`open`, `xdg-open`, `start`).
 */
import { spawn } from 'node:child_process';
import type { CliIO } from './io.js';

/** The `authorize` hook of the CLI. */
export function openInBrowser(io: CliIO, options: { launch: boolean }): (url: URL) => Promise<void> {
  return async (url) => {
    io.stderr.write(`Open this URL to log in (waiting for the browser to come back):\n  ${url.href}\n`);
    if (!options.launch) return;
    const [command, ...args] = opener(io.env, url.href);
    await new Promise<void>((resolve) => {
      const child = spawn(command as string, args, { stdio: 'ignore', detached: process.platform !== 'win32', env: io.env });
      // No browser to start is no error: the URL is printed.
      child.once('error', () => resolve());
      child.once('spawn', () => {
        child.unref();
        resolve();
      });
    });
  };
}

function opener(env: NodeJS.ProcessEnv, url: string): string[] {
  const browser = env.BROWSER?.trim();
  if (browser) return [...browser.split(/\s+/), url];
  if (process.platform === 'darwin') return ['open', url];
  if (process.platform === 'win32') return ['cmd', '/c', 'start', '""', url];
  return ['xdg-open', url];
}

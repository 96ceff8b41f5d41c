/**
 * Where a server's OAuth state lives between runs: one JSON file per server under
 * `$REIN_HOME/mcp-auth/` (default `~/.rein`), mode 0600 in a 0700 folder, holding its
 * tokens, its registration and the discovered metadata. Nothing else in rein reads or
 * writes tokens, so they never reach logs or events.
 */
import { createHash } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** What is kept for one server. */
export interface StoredAuth {
  /** The token response, plus `obtained_at` (epoch ms) to know when it expires. */
  tokens?: Record<string, unknown> & {
    access_token: string;
    obtained_at?: number;
    expires_in?: number;
    refresh_token?: string;
    scope?: string;
  };
  /** The client registration obtained from the authorization server (dynamic or metadata document). */
  clientInformation?: Record<string, unknown> & { client_id: string };
  /** The discovered protected-resource and authorization-server metadata. */
  discovery?: Record<string, unknown>;
}

/** rein's folder for user state: `$REIN_HOME`, else `<home>/.rein`. */
export function reinHome(env: Record<string, string | undefined>, home: string): string {
  const configured = env.REIN_HOME;
  return configured !== undefined && configured !== '' ? configured : join(home, '.rein');
}

/** The file of one server: its name plus a hash of its URL, so a changed URL starts afresh. */
export function authFile(folder: string, server: string, url: string): string {
  const hash = createHash('sha256').update(url).digest('hex').slice(0, 12);
  return join(folder, 'mcp-auth', `${server}-${hash}.json`);
}

/** Reads and writes one server's file; every write replaces the file atomically, mode 0600. */
export class TokenStore {
  constructor(readonly file: string) {}

  read(): StoredAuth {
    try {
      const data = JSON.parse(readFileSync(this.file, 'utf8')) as unknown;
      return data !== null && typeof data === 'object' ? (data as StoredAuth) : {};
    } catch {
      // Missing or unreadable: as if never logged in (the next login rewrites it).
      return {};
    }
  }

  update(change: (stored: StoredAuth) => void): void {
    const stored = this.read();
    change(stored);
    const dir = join(this.file, '..');
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const temp = `${this.file}.${process.pid}.tmp`;
    writeFileSync(temp, `${JSON.stringify(stored, null, 2)}\n`, { mode: 0o600 });
    // The mode of a file that already existed is not changed by writeFileSync.
    chmodSync(temp, 0o600);
    renameSync(temp, this.file);
  }

  /** Forgets everything (logout). `true` when there was something to forget. */
  clear(): boolean {
    const had = Object.keys(this.read()).length > 0;
    rmSync(this.file, { force: true });
    return had;
  }
}

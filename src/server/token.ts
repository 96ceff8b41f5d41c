/**
 * The server's token: `REIN_SERVER_TOKEN`, else `.rein/server-token`, generated (mode 0600)
 * on the first start. On an address other than loopback the server refuses to start
 * unless a token of at least 32 characters was set up beforehand.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { isIP } from 'node:net';
import { dirname, join } from 'node:path';
import { ReinError } from '../errors.js';

/** The fewest characters a token may have on an address other than loopback. */
export const MIN_PUBLIC_TOKEN_LENGTH = 32;
/** Where the generated token is kept, under the server's folder. */
export const TOKEN_FILE = '.rein/server-token';

/** The token and where it came from. */
export interface ServerToken {
  token: string;
  source: 'env' | 'file' | 'generated';
  /** The token file (for `file` and `generated`). */
  file?: string;
}

/** Whether `host` is a loopback address (127.0.0.0/8, ::1, localhost). */
export function isLoopback(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  if (h === 'localhost' || h === '::1' || h === '0:0:0:0:0:0:0:1') return true;
  if (isIP(h) === 4) return h.startsWith('127.');
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(h);
  return mapped !== null && (mapped[1] as string).startsWith('127.');
}

/** Reads (or, on loopback, makes) the token for a server in `cwd` listening on `host`. */
export async function loadServerToken(options: { cwd: string; env: NodeJS.ProcessEnv; host: string }): Promise<ServerToken> {
  const loopback = isLoopback(options.host);
  const fromEnv = options.env.REIN_SERVER_TOKEN;
  if (fromEnv !== undefined && fromEnv !== '') {
    checkToken(fromEnv, 'REIN_SERVER_TOKEN', loopback, options.host);
    return { token: fromEnv, source: 'env' };
  }
  const file = join(options.cwd, TOKEN_FILE);
  const info = await stat(file).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return undefined;
    throw new ReinError('config', 'fatal', `cannot read the token file ${file}: ${error.message}`);
  });
  if (info) {
    if (process.platform !== 'win32' && (info.mode & 0o077) !== 0) {
      throw new ReinError(
        'config',
        'fatal',
        `the token file ${file} can be read by other users (mode ${(info.mode & 0o777).toString(8)}): chmod 600 ${file}, or set REIN_SERVER_TOKEN`,
      );
    }
    const token = (await readFile(file, 'utf8')).trim();
    if (token === '')
      throw new ReinError(
        'config',
        'fatal',
        `the token file ${file} is empty: delete it (a new token is made on the next start on loopback) or set REIN_SERVER_TOKEN`,
      );
    checkToken(token, file, loopback, options.host);
    return { token, source: 'file', file };
  }
  if (!loopback) {
    throw new ReinError(
      'config',
      'fatal',
      `--host ${options.host} is not a loopback address: the server refuses to start without a token of at least ${MIN_PUBLIC_TOKEN_LENGTH} characters set up beforehand. ` +
        `Set REIN_SERVER_TOKEN (e.g. REIN_SERVER_TOKEN=$(openssl rand -base64 32)), or start once on 127.0.0.1 to generate ${TOKEN_FILE}`,
    );
  }
  const token = randomBytes(32).toString('base64url');
  await mkdir(dirname(file), { recursive: true });
  // `wx`: never overwrite a token another server just wrote; 0600: only this user can read it.
  await writeFile(file, `${token}\n`, { mode: 0o600, flag: 'wx' }).catch(async (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EEXIST') throw new ReinError('config', 'fatal', `cannot write the token file ${file}: ${error.message}`);
  });
  const written = (await readFile(file, 'utf8')).trim();
  return { token: written, source: 'generated', file };
}

function checkToken(token: string, where: string, loopback: boolean, host: string): void {
  if (/\s/.test(token)) throw new ReinError('config', 'fatal', `the token in ${where} holds whitespace: a bearer token is one word`);
  if (!loopback && token.length < MIN_PUBLIC_TOKEN_LENGTH) {
    throw new ReinError(
      'config',
      'fatal',
      `--host ${host} is not a loopback address, and the token in ${where} has ${token.length} characters: at least ${MIN_PUBLIC_TOKEN_LENGTH} are needed there (e.g. REIN_SERVER_TOKEN=$(openssl rand -base64 32))`,
    );
  }
}

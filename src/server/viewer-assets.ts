/**
 * The run viewer's files, served by the server itself (no CDN: it works offline). They are
 * built from `src/server/viewer/` into `dist/bundle/viewer/` by `npm run build` and read
 * once when a server starts. Also the sign-in page, answered (401) to a browser without a
 * session.
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { ReinError } from '../errors.js';

/** One file of the viewer, ready to send. */
export interface Asset {
  body: Uint8Array;
  type: string;
  etag: string;
}

/** The viewer's files by URL path. */
export type ViewerAssets = Map<string, Asset>;

const FILES: Record<string, { file: string; type: string }> = {
  '/': { file: 'index.html', type: 'text/html; charset=utf-8' },
  '/assets/app.js': { file: 'app.js', type: 'text/javascript; charset=utf-8' },
  '/assets/style.css': { file: 'style.css', type: 'text/css; charset=utf-8' },
  '/assets/icon.svg': { file: 'icon.svg', type: 'image/svg+xml' },
};

/** The folder of the built viewer: `dist/bundle/viewer/` of the package this module belongs to. */
async function viewerDir(): Promise<URL> {
  // This module runs from src/ (tests), from tsc's dist/ or from the bundle: the package root is above each.
  for (let dir = new URL('.', import.meta.url); ; dir = new URL('..', dir)) {
    try {
      const pkg = JSON.parse(await readFile(new URL('package.json', dir), 'utf8')) as { name?: string };
      if (pkg.name === 'rein') return new URL('dist/bundle/viewer/', dir);
    } catch {
      // not here: look further up
    }
    if (new URL('..', dir).href === dir.href)
      throw new ReinError('config', 'fatal', 'cannot find the rein package the server belongs to (its package.json)');
  }
}

/** Reads the viewer's files; a `config` error when they were never built. */
export async function loadViewerAssets(dir?: URL): Promise<ViewerAssets> {
  const base = dir ?? (await viewerDir());
  const assets: ViewerAssets = new Map();
  for (const [path, { file, type }] of Object.entries(FILES)) {
    let body: Buffer;
    try {
      body = await readFile(new URL(file, base));
    } catch (error) {
      throw new ReinError(
        'config',
        'fatal',
        `the run viewer's ${file} is missing in ${fileURLToPath(base)} (${(error as Error).message}): run npm run build`,
      );
    }
    assets.set(path, { body: new Uint8Array(body), type, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"` });
  }
  return assets;
}

const LOGIN_STYLE = `body{font:16px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;display:flex;min-height:100vh;align-items:center;justify-content:center;background:#f4f5f7;color:#1d2330}
main{background:#fff;padding:2rem;border-radius:10px;box-shadow:0 2px 12px #0002;width:min(92vw,24rem);box-sizing:border-box}
h1{font-size:1.3rem;margin:0 0 .5rem}p{color:#555;font-size:.9rem}label{display:block;font-weight:600;margin:1rem 0 .3rem}
input{width:100%;box-sizing:border-box;padding:.6rem;font:inherit;border:1px solid #bbb;border-radius:6px}
button{margin-top:1rem;width:100%;padding:.65rem;font:inherit;font-weight:600;border:0;border-radius:6px;background:#2557d6;color:#fff;cursor:pointer}
.error{color:#b00020;font-weight:600}code{font-size:.85em}`;

/** The Content-Security-Policy of the sign-in page: nothing but its own inline style and a form post to itself. */
export const LOGIN_CSP = `default-src 'none'; style-src 'sha256-${createHash('sha256').update(LOGIN_STYLE).digest('base64')}'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'`;

/** The sign-in page: a form that posts the token (never in a URL) and gets a session cookie. */
export function loginPage(message?: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>rein · sign in</title><style>${LOGIN_STYLE}</style></head>
<body><main><h1>rein run viewer</h1>
<p>Paste the server's token: <code>REIN_SERVER_TOKEN</code>, or the contents of <code>.rein/server-token</code> in the folder where <code>rein serve</code> runs.</p>
${message ? `<p class="error" role="alert">${message}</p>` : ''}
<form method="post" action="v1/session"><label for="token">Token</label>
<input id="token" name="token" type="password" autocomplete="current-password" required autofocus>
<button type="submit">Sign in</button></form></main></body></html>`;
}

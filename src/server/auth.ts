/**
 * Who may use the server: a bearer token on every route but `GET /healthz`, or — for the
 * viewer in a browser, which cannot put a header on a page load or an EventSource — a
 * session cookie that proves the token was given once (`POST /v1/session`): HttpOnly (no
 * script can read it), SameSite=Strict (no other site's page sends it), signed with the
 * token (a new token ends every session; a restart keeps them). A request that rides on the
 * cookie and changes something must come from the server's own origin.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

/** The name of the viewer's session cookie. */
export const SESSION_COOKIE = 'rein_session';
/** How long a session lasts (12 hours). */
export const SESSION_SECONDS = 12 * 60 * 60;

/** How a request proved who it is. */
export type Credential = { kind: 'bearer' } | { kind: 'session' } | { kind: 'none'; reason: string };

/** Checks tokens and sessions against the server's token. */
export class TokenGuard {
  private readonly digest: Buffer;

  constructor(private readonly token: string) {
    this.digest = sha256(token);
  }

  /** Whether `candidate` is the token, compared in constant time. */
  isToken(candidate: string): boolean {
    return timingSafeEqual(sha256(candidate), this.digest);
  }

  /** The credential of a request, from its Authorization header or its session cookie. */
  credentialOf(headers: Headers, now = Date.now()): Credential {
    const authorization = headers.get('authorization');
    if (authorization !== null) {
      const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(authorization);
      if (!match) return { kind: 'none', reason: 'the Authorization header must be "Bearer <token>"' };
      return this.isToken(match[1] as string) ? { kind: 'bearer' } : { kind: 'none', reason: 'the bearer token is wrong' };
    }
    const session = cookieValue(headers.get('cookie'), SESSION_COOKIE);
    if (session !== undefined)
      return this.isSession(session, now)
        ? { kind: 'session' }
        : { kind: 'none', reason: 'the session has expired or was made with another token: sign in again' };
    return {
      kind: 'none',
      reason:
        'this route needs the server token: send "Authorization: Bearer <token>" (the token is in REIN_SERVER_TOKEN or .rein/server-token)',
    };
  }

  /** A new session's cookie value, valid for {@link SESSION_SECONDS}. */
  newSession(now = Date.now()): string {
    const expires = Math.floor(now / 1000) + SESSION_SECONDS;
    return `v1.${expires}.${this.sign(expires)}`;
  }

  private isSession(value: string, now: number): boolean {
    const match = /^v1\.(\d{1,12})\.([A-Za-z0-9_-]{43})$/.exec(value);
    if (!match) return false;
    const expires = Number(match[1]);
    if (expires * 1000 <= now) return false;
    const expected = Buffer.from(this.sign(expires));
    const given = Buffer.from(match[2] as string);
    return expected.length === given.length && timingSafeEqual(expected, given);
  }

  private sign(expires: number): string {
    return createHmac('sha256', this.token).update(`rein-session:v1:${expires}`).digest('base64url');
  }
}

function sha256(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}

/** The value of cookie `name` in a Cookie header. */
export function cookieValue(header: string | null, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq !== -1 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/** The Set-Cookie header of a session (`value`), or of its end (`undefined`). */
export function sessionCookie(value: string | undefined, secure: boolean): string {
  const attributes = [
    'Path=/',
    'HttpOnly',
    'SameSite=Strict',
    ...(secure ? ['Secure'] : []),
    `Max-Age=${value === undefined ? 0 : SESSION_SECONDS}`,
  ];
  return `${SESSION_COOKIE}=${value ?? ''}; ${attributes.join('; ')}`;
}

/**
 * Whether a request that rides on the session cookie comes from the server's own origin:
 * its Origin header names the host the request was sent to (the Host header, or the
 * X-Forwarded-Host a reverse proxy sets). SameSite=Strict keeps other sites out; this also
 * keeps out a page of the same site on another port (another local server).
 */
export function isSameOrigin(headers: Headers): boolean {
  const origin = headers.get('origin');
  if (origin === null || origin === 'null') return false;
  let host: string;
  try {
    host = new URL(origin).host;
  } catch {
    return false;
  }
  const hosts = [headers.get('host'), ...(headers.get('x-forwarded-host') ?? '').split(',')]
    .map((h) => h?.trim().toLowerCase())
    .filter(Boolean);
  return hosts.includes(host.toLowerCase());
}

/** Whether a request came over https (directly, or to a proxy that says so). */
export function isHttps(url: URL, headers: Headers): boolean {
  return url.protocol === 'https:' || headers.get('x-forwarded-proto')?.split(',')[0]?.trim() === 'https';
}

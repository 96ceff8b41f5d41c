/**
 * Request URLs made from a configured base URL, and the text of them that messages quote.
 *
 * A base URL is more than a prefix. It may carry a query (Azure OpenAI deployments need
 * `?api-version=…`, gateways route on parameters), a user and password (gateways behind
 * Basic auth) and a fragment. The API's path goes at the end of the base's *path* and the
 * base's query is kept after it, as the openai SDK keeps its default query parameters; the
 * fragment is dropped (HTTP never sends one, so it cannot mean anything to the server).
 */

/** A request URL, its text read once (URL getters are slow in Node 20), and the text errors quote. */
export interface ApiTarget {
  url: URL;
  /** `url.href`: what is sent (user and password included). */
  href: string;
  /** The URL fit to print: see {@link displayUrl}. */
  errorUrl: string;
}

/**
 * `baseUrl` with the API's path after its path and `params` merged into its query. A
 * parameter of the base with the name of one in `params` is replaced: the adapter's value
 * is the one its decoding relies on (Gemini's `alt=sse`). The base's other parameters
 * stay as written, byte for byte (no re-encoding: a server may compare them as text).
 *
 * @param path the request's path, given the base's path without trailing slashes (`/v1`, or `''` for a bare host).
 * @throws TypeError when `baseUrl` is not a URL.
 * @example
 * apiTarget('https://x.openai.azure.com/openai/deployments/gpt4?api-version=2024-10-21', (base) => `${base}/chat/completions`).href;
 * // 'https://x.openai.azure.com/openai/deployments/gpt4/chat/completions?api-version=2024-10-21'
 */
export function apiTarget(baseUrl: string, path: (basePath: string) => string, params: Record<string, string> = {}): ApiTarget {
  const url = new URL(baseUrl);
  url.hash = '';
  url.pathname = path(url.pathname.replace(/\/+$/, ''));
  const names = Object.keys(params);
  if (names.length > 0) {
    const kept = url.search
      .slice(1)
      .split('&')
      .filter((pair) => pair !== '' && !names.includes(paramName(pair)));
    const added = names.map((name) => `${encodeURIComponent(name)}=${encodeURIComponent(params[name] ?? '')}`);
    url.search = [...kept, ...added].join('&');
  }
  return { url, href: url.href, errorUrl: displayUrl(url) };
}

/**
 * Query parameters whose name says they hold a secret: API keys (`key`, `api-key`,
 * `api_key`), tokens, signatures (Azure SAS `sig`, AWS `X-Amz-Signature`), passwords,
 * Azure Functions' `code`. Matched loosely: dropping a harmless parameter from an error
 * message costs nothing, printing a key does.
 */
const SECRET_PARAM = /key|token|secret|passw|pwd|auth|credential|session|signature|^sig$|^code$/i;

/**
 * `url` fit to quote in an error message or an event: without the user and password
 * (a gateway's Basic credentials; the user alone is often the secret) and without the
 * query parameters that look like secrets ({@link SECRET_PARAM}). The rest of the query
 * stays, since it is often what is wrong (Azure's `api-version`); secret parameters are
 * left out rather than masked so the text stays a URL. Text that is not an http(s) URL
 * (a mistyped base URL) keeps only what cannot be a credential: see {@link displayText}.
 * Never throws.
 */
export function displayUrl(url: URL | string): string {
  let parsed: URL;
  try {
    parsed = typeof url === 'string' ? new URL(url) : new URL(url.href);
  } catch {
    return displayText(String(url));
  }
  // Other schemes may hold the credentials in their path (`user:pass@host/v1` parses as
  // scheme `user:`), where the URL parser does not see them.
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return displayText(parsed.href);
  parsed.username = '';
  parsed.password = '';
  parsed.hash = '';
  if (parsed.search !== '') {
    parsed.search = parsed.search
      .slice(1)
      .split('&')
      .filter((pair) => pair !== '' && !SECRET_PARAM.test(paramName(pair)))
      .join('&');
  }
  return parsed.href;
}

/**
 * Text that should have been an http(s) URL, fit to print: everything up to its last `@`
 * (after a `scheme://`) becomes `…`, since where a mistyped authority ends cannot be told
 * (`http://alice:pa/ss@host` fails to parse because of the `/` in the password), and the
 * query and fragment go.
 */
function displayText(text: string): string {
  const at = text.lastIndexOf('@');
  let shown = text;
  if (at !== -1) {
    const scheme = /^[a-z][a-z0-9+.-]*:\/\//i.exec(text)?.[0] ?? '';
    shown = `${scheme}…${text.slice(at)}`;
  }
  return shown.replace(/[?#][\s\S]*$/, '');
}

/** The decoded name of one `name=value` pair of a query. */
function paramName(pair: string): string {
  const eq = pair.indexOf('=');
  const raw = (eq === -1 ? pair : pair.slice(0, eq)).replace(/\+/g, ' ');
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}

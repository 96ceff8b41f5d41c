/**
 * Checking one `mcpServers` entry: known fields with the right types, `${VAR}` expanded
 * from the environment, relative `cwd` resolved. A broken entry yields diagnostics naming
 * its key and no server, so the other entries still start.
 */
import { isAbsolute, resolve } from 'node:path';
import { isRecord } from '../util/json.js';
import type { McpAuthConfig, McpDiagnostic, McpHttpServerConfig, McpLogLevel, McpServerConfig, McpStdioServerConfig } from './types.js';

/** Where an entry came from and what it may use while being checked. */
export interface EntryContext {
  /** The config file, for diagnostics; absent for servers passed in code. */
  file?: string;
  /** What a relative `cwd` is resolved against. */
  baseDir: string;
  /** Where a stdio server runs when its entry names no `cwd` (default: rein's own working directory). */
  defaultCwd?: string;
  env: Record<string, string | undefined>;
}

/** Server names appear in tool names, `@server:uri` mentions and `/server:prompt` commands. */
const SERVER_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

const COMMON = [
  'type',
  'timeoutMs',
  'startupTimeoutMs',
  'enabled',
  'disabled',
  'tools',
  'toolPrefix',
  'description',
  'logLevel',
  'subscribe',
  'updatesToModel',
  'roots',
];
const STDIO_FIELDS = new Set([...COMMON, 'command', 'args', 'env', 'cwd']);
const HTTP_FIELDS = new Set([...COMMON, 'url', 'headers', 'auth']);
const LOG_LEVELS = new Set(['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency']);
const AUTH_FIELDS = ['clientId', 'clientSecret', 'scope', 'grant', 'privateKeyPem', 'signingAlgorithm', 'clientMetadataUrl'] as const;
const TYPES = new Set(['stdio', 'http', 'sse', 'streamable-http', 'streamableHttp']);

/**
 * Checks and expands one entry. Returns the server, or `undefined` with at least one
 * `error` diagnostic pushed to `out`.
 */
export function checkServerEntry(name: string, raw: unknown, ctx: EntryContext, out: McpDiagnostic[]): McpServerConfig | undefined {
  const key = `mcpServers.${name}`;
  const errorsBefore = out.filter((d) => d.severity === 'error').length;
  const report = (field: string, message: string, severity: McpDiagnostic['severity'] = 'error'): void => {
    const diagnostic: McpDiagnostic = { severity, key: field ? `${key}.${field}` : key, server: name, message };
    if (ctx.file !== undefined) diagnostic.file = ctx.file;
    out.push(diagnostic);
  };
  if (!SERVER_NAME.test(name)) {
    report('', `server name ${JSON.stringify(name)} is not usable: use letters, digits, "_", "-" or "." (it becomes part of tool names)`);
    return undefined;
  }
  if (!isRecord(raw)) {
    report('', `must be an object with "command" (a local server) or "url" (a remote one); got ${describe(raw)}`);
    return undefined;
  }
  const type = raw.type;
  if (type !== undefined && (typeof type !== 'string' || !TYPES.has(type))) {
    report('type', `must be "stdio", "http" or "sse"; got ${JSON.stringify(type)}`);
    return undefined;
  }
  const hasCommand = raw.command !== undefined;
  const hasUrl = raw.url !== undefined;
  if (hasCommand && hasUrl) {
    report('', 'has both "command" and "url": keep "command" for a local (stdio) server or "url" for a remote one');
    return undefined;
  }
  if (!hasCommand && !hasUrl) {
    report('command', 'is missing: give "command" (and "args") to start a local server, or "url" for a remote one');
    for (const field of Object.keys(raw)) {
      if (!STDIO_FIELDS.has(field) && !HTTP_FIELDS.has(field)) report(field, 'is not a known field; remove it or fix its spelling');
    }
    return undefined;
  }
  const stdio = hasCommand;
  if (stdio && type !== undefined && type !== 'stdio') {
    report('type', `is ${JSON.stringify(type)} but the entry has "command": use "url" for HTTP servers, or drop "type"`);
  }
  if (!stdio && type === 'stdio') report('type', 'is "stdio" but the entry has "url" instead of "command"');

  const allowed = stdio ? STDIO_FIELDS : HTTP_FIELDS;
  for (const field of Object.keys(raw)) {
    if (!allowed.has(field)) {
      const known = [...allowed].filter((f) => f !== 'disabled').join(', ');
      report(field, `is not a known field of a ${stdio ? 'stdio' : 'remote'} server (known: ${known}); remove it or fix its spelling`);
    }
  }

  const expand = (field: string, value: string): string =>
    expandVars(value, ctx.env, (variable) =>
      report(field, `uses \${${variable}}, which is not set: export ${variable} or write \${${variable}:-default}`),
    );
  const common = checkCommon(raw, report);
  if (raw.roots !== undefined) {
    if (raw.roots === false) common.roots = false;
    else if (!Array.isArray(raw.roots) || !raw.roots.every((r) => typeof r === 'string' && r !== ''))
      report('roots', 'must be an array of folders, or false to announce no roots');
    else
      common.roots = (raw.roots as string[]).map((r, i) => {
        const expanded = expand(`roots[${i}]`, r);
        return /^file:\/\//.test(expanded) || isAbsolute(expanded) ? expanded : resolve(ctx.baseDir, expanded);
      });
  }
  let config: McpServerConfig;
  if (stdio) {
    const command = stringField(raw, 'command', report, true);
    const server: McpStdioServerConfig = { command: command === undefined ? '' : expand('command', command) };
    if (command !== undefined && command.trim() === '') report('command', 'is empty: name the program that starts the server');
    const args = stringArray(raw, 'args', report);
    if (args) server.args = args.map((arg, i) => expand(`args[${i}]`, arg));
    const env = stringRecord(raw, 'env', report);
    if (env) server.env = Object.fromEntries(Object.entries(env).map(([k, v]) => [k, expand(`env.${k}`, v)]));
    const cwd = stringField(raw, 'cwd', report);
    if (cwd !== undefined) {
      const expanded = expand('cwd', cwd);
      server.cwd = isAbsolute(expanded) ? expanded : resolve(ctx.baseDir, expanded);
    } else if (ctx.defaultCwd !== undefined) server.cwd = ctx.defaultCwd;
    config = server;
  } else {
    const url = stringField(raw, 'url', report, true);
    const server: McpHttpServerConfig = { url: url === undefined ? '' : expand('url', url) };
    if (url !== undefined && !/^https?:\/\/[^/]/i.test(server.url)) {
      report('url', `must be an http:// or https:// URL; got ${JSON.stringify(server.url)}`);
    }
    if (type === 'sse') server.type = 'sse';
    else if (type === 'http' || type === 'streamable-http' || type === 'streamableHttp') server.type = 'http';
    const headers = stringRecord(raw, 'headers', report);
    if (headers) server.headers = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, expand(`headers.${k}`, v)]));
    if (raw.auth !== undefined) {
      const auth = checkAuth(raw.auth, report, expand);
      if (auth) server.auth = auth;
    }
    config = server;
  }
  Object.assign(config, common);
  const errorsAfter = out.filter((d) => d.severity === 'error').length;
  return errorsAfter === errorsBefore ? config : undefined;
}

type Report = (field: string, message: string, severity?: McpDiagnostic['severity']) => void;

/** The `auth` object of a remote server: known string fields, `${VAR}` expanded, a grant that can work. */
function checkAuth(raw: unknown, report: Report, expand: (field: string, value: string) => string): McpAuthConfig | undefined {
  if (!isRecord(raw)) {
    report('auth', `must be an object such as { "clientId": "…", "scope": "…" }; got ${describe(raw)}`);
    return undefined;
  }
  const auth: McpAuthConfig = {};
  for (const [field, value] of Object.entries(raw)) {
    if (!(AUTH_FIELDS as readonly string[]).includes(field)) {
      report(`auth.${field}`, `is not a known field (known: ${AUTH_FIELDS.join(', ')}); remove it or fix its spelling`);
    } else if (typeof value !== 'string') {
      report(`auth.${field}`, `must be a string; got ${describe(value)}`);
    } else {
      (auth as Record<string, string>)[field] = expand(`auth.${field}`, value);
    }
  }
  if (auth.grant !== undefined && auth.grant !== 'authorization_code' && auth.grant !== 'client_credentials') {
    report('auth.grant', `must be "authorization_code" or "client_credentials"; got ${JSON.stringify(auth.grant)}`);
  }
  if (auth.grant === 'client_credentials' && auth.clientId === undefined) {
    report(
      'auth.clientId',
      'is missing: the client_credentials grant needs the client id the authorization server issued (and clientSecret or privateKeyPem)',
    );
  } else if (auth.grant === 'client_credentials' && auth.clientSecret === undefined && auth.privateKeyPem === undefined) {
    report('auth', 'the client_credentials grant needs "clientSecret" or "privateKeyPem"');
  }
  if (auth.clientMetadataUrl !== undefined && !/^https:\/\/[^/]+\/./.test(auth.clientMetadataUrl)) {
    report(
      'auth.clientMetadataUrl',
      `must be an https:// URL with a path (the Client ID Metadata Document); got ${JSON.stringify(auth.clientMetadataUrl)}`,
    );
  }
  return auth;
}

function checkCommon(raw: Record<string, unknown>, report: Report): Partial<McpServerConfig> {
  const common: Partial<McpServerConfig> = {};
  for (const field of ['timeoutMs', 'startupTimeoutMs'] as const) {
    const value = raw[field];
    if (value === undefined) continue;
    if (typeof value !== 'number' || !(value > 0)) report(field, `must be a positive number of milliseconds; got ${describe(value)}`);
    else common[field] = value;
  }
  if (raw.enabled !== undefined) {
    if (typeof raw.enabled !== 'boolean') report('enabled', `must be true or false; got ${describe(raw.enabled)}`);
    else common.enabled = raw.enabled;
  }
  // `disabled: true` is what several other MCP clients write; accept it as the inverse of `enabled`.
  if (raw.disabled !== undefined) {
    if (typeof raw.disabled !== 'boolean') report('disabled', `must be true or false; got ${describe(raw.disabled)}`);
    else if (raw.disabled) common.enabled = false;
  }
  if (raw.toolPrefix !== undefined) {
    if (typeof raw.toolPrefix !== 'string' || !/^[A-Za-z0-9_-]{0,40}$/.test(raw.toolPrefix)) {
      report('toolPrefix', `must be up to 40 letters, digits, "_" or "-"; got ${describe(raw.toolPrefix)}`);
    } else common.toolPrefix = raw.toolPrefix;
  }
  if (raw.logLevel !== undefined) {
    if (typeof raw.logLevel !== 'string' || !LOG_LEVELS.has(raw.logLevel))
      report('logLevel', `must be one of ${[...LOG_LEVELS].join(', ')}; got ${describe(raw.logLevel)}`);
    else common.logLevel = raw.logLevel as McpLogLevel;
  }
  if (raw.subscribe !== undefined) {
    if (!Array.isArray(raw.subscribe) || !raw.subscribe.every((u) => typeof u === 'string' && u !== ''))
      report('subscribe', 'must be an array of resource URIs');
    else common.subscribe = raw.subscribe as string[];
  }
  if (raw.updatesToModel !== undefined) {
    if (typeof raw.updatesToModel !== 'boolean') report('updatesToModel', `must be true or false; got ${describe(raw.updatesToModel)}`);
    else common.updatesToModel = raw.updatesToModel;
  }
  if (raw.description !== undefined && typeof raw.description !== 'string') {
    report('description', `must be a string; got ${describe(raw.description)}`, 'warning');
  }
  const tools = raw.tools;
  if (tools !== undefined) {
    if (Array.isArray(tools)) {
      if (tools.every((t) => typeof t === 'string')) common.tools = tools as string[];
      else report('tools', 'must list tool names (strings), or be { "allow": [...], "deny": [...] }');
    } else if (isRecord(tools)) {
      const filter: { allow?: string[]; deny?: string[] } = {};
      for (const [k, v] of Object.entries(tools)) {
        if (k !== 'allow' && k !== 'deny') report(`tools.${k}`, 'is not a known field: use "allow" and "deny"');
        else if (!Array.isArray(v) || !v.every((t) => typeof t === 'string'))
          report(`tools.${k}`, 'must be an array of tool names or glob patterns');
        else filter[k] = v as string[];
      }
      common.tools = filter;
    } else {
      report('tools', `must be an array of tool names or { "allow": [...], "deny": [...] }; got ${describe(tools)}`);
    }
  }
  return common;
}

function stringField(raw: Record<string, unknown>, field: string, report: Report, required = false): string | undefined {
  const value = raw[field];
  if (value === undefined) {
    if (required) report(field, 'is missing');
    return undefined;
  }
  if (typeof value !== 'string') {
    report(field, `must be a string; got ${describe(value)}`);
    return undefined;
  }
  return value;
}

function stringArray(raw: Record<string, unknown>, field: string, report: Report): string[] | undefined {
  const value = raw[field];
  if (value === undefined) return undefined;
  if (!Array.isArray(value)) {
    report(field, `must be an array of strings; got ${describe(value)}`);
    return undefined;
  }
  const bad = value.findIndex((item) => typeof item !== 'string' && typeof item !== 'number');
  if (bad >= 0) {
    report(`${field}[${bad}]`, `must be a string; got ${describe(value[bad])}`);
    return undefined;
  }
  return value.map(String);
}

/** An object of strings; numbers and booleans are taken as their text (`"PORT": 3000`). */
function stringRecord(raw: Record<string, unknown>, field: string, report: Report): Record<string, string> | undefined {
  const value = raw[field];
  if (value === undefined) return undefined;
  if (!isRecord(value)) {
    report(field, `must be an object of string values; got ${describe(value)}`);
    return undefined;
  }
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(value)) {
    if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') out[k] = String(v);
    else report(`${field}.${k}`, `must be a string; got ${describe(v)}`);
  }
  return out;
}

/**
 * Expands `${VAR}` and `${VAR:-default}` from `env` (the convention of `.mcp.json` files).
 * A variable that is unset and has no default is reported through `missing` and expands
 * to the empty string.
 *
 * @example
 * expandVars('Bearer ${TOKEN}', { TOKEN: 'abc' }, () => {}); // 'Bearer abc'
 */
export function expandVars(value: string, env: Record<string, string | undefined>, missing: (name: string) => void): string {
  return value.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g, (_match, name: string, fallback: string | undefined) => {
    const found = env[name];
    if (found !== undefined && found !== '') return found;
    if (fallback !== undefined) return fallback;
    if (found === undefined) missing(name);
    return '';
  });
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  return `${typeof value} ${JSON.stringify(value)}`;
}

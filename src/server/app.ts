/**
 * The HTTP API and the viewer as a web-standard `Request → Response` app (hono). Every
 * route but `GET /healthz` needs the token (a bearer header, or the viewer's session
 * cookie); errors are `{"error":{"code","message","field"?}}`.
 */
import { Hono, type Context } from 'hono';
import { waitingQuestionsInTree, type ElicitationAnswer } from '../loop/elicitation-answer.js';
import type { RunRecord } from '../store/types.js';
import { ApiError, apiErrorOf } from './api-error.js';
import { type TokenGuard, isHttps, isSameOrigin, sessionCookie } from './auth.js';
import { RunEventStream, type StreamRegistry } from './event-stream.js';
import type { RunFeeds } from './feed.js';
import { openApiDocument } from './openapi.js';
import type { RunService, StartRequest } from './runs.js';
import * as S from './schemas.js';
import type { AgentCatalog } from './types.js';
import { check, queryObject } from './validate.js';
import { LOGIN_CSP, loginPage, type ViewerAssets } from './viewer-assets.js';
import { TaskCache, childrenOf, detailOf, listRuns, pendingQuestionOf } from './views.js';
import { waitingInTree } from '../loop/tree-approval.js';

/** What the app is made of. */
export interface AppDeps {
  guard: TokenGuard;
  runs: RunService;
  feeds: RunFeeds;
  streams: StreamRegistry;
  agents: AgentCatalog;
  assets: ViewerAssets;
  version: string;
  /** The largest request body accepted (bytes). */
  maxBodyBytes: number;
  /** True once the server stops: /healthz says so, new work is refused. */
  stopping: () => boolean;
}

const VIEWER_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";
const UNSAFE = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** Builds the app. */
export function createApp(deps: AppDeps): Hono {
  const { guard, runs, feeds, streams } = deps;
  const json = (c: Context, schema: S.Schema) => jsonBody(c, schema, deps.maxBodyBytes);
  const optionalJson = (c: Context, schema: S.Schema) => optionalJsonBody(c, schema, deps.maxBodyBytes);
  const store = runs.reader;
  const tasks = new TaskCache(store);
  const openapi = JSON.stringify(openApiDocument(deps.version));
  const app = new Hono();

  app.onError((error, c) => {
    const api = apiErrorOf(error);
    return c.json(api.toBody(), api.status);
  });
  app.notFound((c) =>
    c.json(
      new ApiError(
        404,
        'not_found',
        `no route ${c.req.method} ${new URL(c.req.url).pathname}: GET /v1/openapi.json lists the routes`,
      ).toBody(),
      404,
    ),
  );

  app.use('*', async (c, next) => {
    await next();
    c.header('X-Content-Type-Options', 'nosniff');
    // same-origin, not no-referrer: with no-referrer a browser sends `Origin: null` on the sign-in form's POST.
    c.header('Referrer-Policy', 'same-origin');
    c.header('X-Frame-Options', 'DENY');
    if (!c.res.headers.has('Cache-Control')) c.header('Cache-Control', 'no-store');
  });

  app.get('/healthz', (c) => (deps.stopping() ? c.json({ status: 'stopping' }, 503) : c.json({ status: 'ok' })));

  // The viewer's sign-in: the token in the body (a form or JSON), a session cookie back.
  app.post('/v1/session', async (c) => {
    const form = (c.req.header('content-type') ?? '').startsWith('application/x-www-form-urlencoded');
    if (c.req.header('origin') !== undefined && !isSameOrigin(c.req.raw.headers))
      throw new ApiError(403, 'forbidden', 'sign-in from another origin is refused');
    let token: unknown;
    if (form) token = new URLSearchParams(await bodyText(c, 16 * 1024)).get('token');
    else token = ((await jsonBody(c, S.SessionSchema, 16 * 1024)) as { token: string }).token;
    if (typeof token !== 'string' || !guard.isToken(token)) {
      if (form) return html(c, loginPage("That is not the server's token."), 401, LOGIN_CSP);
      throw new ApiError(401, 'unauthorized', 'the token is wrong');
    }
    c.header('Set-Cookie', sessionCookie(guard.newSession(), isHttps(new URL(c.req.url), c.req.raw.headers)));
    if (form) {
      c.header('Location', '../');
      return c.body(null, 303);
    }
    return c.body(null, 204);
  });

  // Everything below needs the token.
  app.use('*', async (c, next) => {
    const credential = guard.credentialOf(c.req.raw.headers);
    if (credential.kind === 'none') {
      const path = new URL(c.req.url).pathname;
      if (c.req.method === 'GET' && path === '/') return html(c, loginPage(), 401, LOGIN_CSP);
      c.header('WWW-Authenticate', 'Bearer realm="rein"');
      throw new ApiError(401, 'unauthorized', credential.reason);
    }
    // A cookie is sent by the browser on its own: what changes something must come from our page.
    if (credential.kind === 'session' && UNSAFE.has(c.req.method) && !isSameOrigin(c.req.raw.headers)) {
      throw new ApiError(
        403,
        'forbidden',
        "a request made with the session cookie must come from the viewer's own origin (use the bearer token from other programs)",
      );
    }
    await next();
  });

  app.delete('/v1/session', (c) => {
    c.header('Set-Cookie', sessionCookie(undefined, isHttps(new URL(c.req.url), c.req.raw.headers)));
    return c.body(null, 204);
  });

  app.get('/v1/openapi.json', (c) => c.body(openapi, 200, { 'Content-Type': 'application/json' }));

  app.get('/v1/agents', async (c) => c.json({ agents: await deps.agents.list() }));

  app.post('/v1/runs', async (c) => {
    const body = (await json(c, S.CreateRunSchema)) as StartRequest;
    return c.json(await runs.start(body), 201);
  });

  app.get('/v1/runs', async (c) => {
    const query = queryObject(new URL(c.req.url), S.ListRunsQuerySchema);
    const problem = check(S.ListRunsQuerySchema, query, 'query');
    if (problem) throw new ApiError(400, 'invalid_request', problem.message, problem.field);
    return c.json(
      await listRuns(
        store,
        tasks,
        (id) => runs.isLive(id),
        query as { status?: RunRecord['status']; agent?: string; limit?: number; cursor?: string },
      ),
    );
  });

  app.get('/v1/runs/:id', async (c) => {
    const id = c.req.param('id');
    const record = await store.getRun(id);
    if (!record) throw new ApiError(404, 'not_found', `there is no run ${id}`);
    const events = await store.loadEvents(id);
    // A child is driven by its parent's tool call: live while its parent is.
    const children = await childrenOf(store, id, (runId) => runs.isLive(runId) || runs.isLive(id));
    // A paused tree waits for its descendants' calls too: the root's page decides them.
    const treePending =
      record.status === 'paused' && !record.parentRunId && children.length > 0 && !runs.isLive(id)
        ? (await waitingInTree(store, id))
            .filter((w) => w.depth > 0)
            .map((w) => ({
              toolCallId: w.toolCallId,
              name: w.name,
              arguments: w.arguments,
              argumentsHash: w.argumentsHash,
              runId: w.runId,
              depth: w.depth,
            }))
        : [];
    // The MCP servers' questions (and sampling requests) its calls, or its descendants', wait on.
    const questions = record.status === 'paused' && !record.parentRunId && !runs.isLive(id) ? await waitingQuestionsInTree(store, id) : [];
    return c.json({
      ...detailOf(record, events, runs.isLive(id), runs.recoveryErrors.get(id), children, treePending),
      pendingQuestions: questions.map(pendingQuestionOf),
    });
  });

  app.get('/v1/runs/:id/events', async (c) => {
    const id = c.req.param('id');
    const query = queryObject(new URL(c.req.url), S.EventsQuerySchema);
    const problem = check(S.EventsQuerySchema, query, 'query');
    if (problem) throw new ApiError(400, 'invalid_request', problem.message, problem.field);
    const header = c.req.header('last-event-id');
    if (header !== undefined && !/^-?\d{1,15}$/.test(header.trim())) {
      throw new ApiError(
        400,
        'invalid_request',
        `Last-Event-ID must be the seq of a stored event (a whole number), got ${JSON.stringify(header.slice(0, 40))}`,
        'Last-Event-ID',
      );
    }
    // The header is what an EventSource sends when it reconnects: it wins over the URL it was opened with.
    const after = header !== undefined ? Math.max(-1, Number(header.trim())) : ((query.after as number | undefined) ?? -1);
    const record = await store.getRun(id);
    if (!record) throw new ApiError(404, 'not_found', `there is no run ${id}`);
    if (deps.stopping()) throw new ApiError(503, 'unavailable', 'the server is stopping: reconnect once it is back');
    if (!feeds.isDriven(id) && record.status !== 'running' && after + 1 >= record.eventCount) {
      // Ended, and nothing after that seq: 204 tells an EventSource to stop reconnecting.
      return c.body(null, 204);
    }
    // On Node the adapter hands over the response: a dropped client's socket is cut at once.
    const outgoing = (c.env as { outgoing?: { destroy(): void } } | undefined)?.outgoing;
    const stream = new RunEventStream(id, after, store, feeds, streams, outgoing ? () => outgoing.destroy() : undefined);
    return new Response(stream.body, {
      status: 200,
      headers: {
        'Content-Type': 'text/event-stream; charset=utf-8',
        'Cache-Control': 'no-cache, no-transform',
        // nginx would otherwise buffer the stream.
        'X-Accel-Buffering': 'no',
        'X-Content-Type-Options': 'nosniff',
      },
    });
  });

  app.post('/v1/runs/:id/messages', async (c) => {
    const body = (await json(c, S.MessageSchema)) as { kind: 'steer' | 'follow_up'; text: string };
    return c.json(await runs.message(c.req.param('id'), body.kind, body.text), 202);
  });

  app.post('/v1/runs/:id/abort', async (c) => {
    await optionalJson(c, S.AbortSchema);
    return c.json(await runs.abort(c.req.param('id')), 200);
  });

  app.post('/v1/runs/:id/approvals', async (c) => {
    const body = (await json(c, S.ApprovalSchema)) as { toolCallId: string; approved: boolean; reason?: string; argumentsHash?: string };
    return c.json(await runs.approve(c.req.param('id'), body), 202);
  });

  app.post('/v1/runs/:id/elicitation', async (c) => {
    const body = (await json(c, S.ElicitationAnswerSchema)) as ElicitationAnswer;
    return c.json(await runs.answerElicitation(c.req.param('id'), body), 202);
  });

  app.post('/v1/runs/:id/resume', async (c) => {
    const body = (await optionalJson(c, S.ResumeSchema)) as { force?: boolean };
    return c.json(await runs.resume(c.req.param('id'), body.force === true), 202);
  });

  // The viewer (its routes are in the page's #fragment, so only these paths exist).
  for (const [path, asset] of deps.assets) {
    app.get(path, (c) => {
      if (c.req.header('if-none-match') === asset.etag) return c.body(null, 304);
      const headers: Record<string, string> = { 'Content-Type': asset.type, ETag: asset.etag, 'Cache-Control': 'no-cache' };
      if (path === '/') headers['Content-Security-Policy'] = VIEWER_CSP;
      return c.body(asset.body as Uint8Array<ArrayBuffer>, 200, headers);
    });
  }
  return app;
}

function html(c: Context, text: string, status: 200 | 401, csp: string): Response {
  return c.body(text, status, { 'Content-Type': 'text/html; charset=utf-8', 'Content-Security-Policy': csp, 'Cache-Control': 'no-store' });
}

/**
 * The body as text, at most `max` bytes (413 past that, whether it says its length or is
 * sent in chunks: reading stops there).
 */
async function bodyText(c: Context, max: number): Promise<string> {
  const tooLarge = (): ApiError => new ApiError(413, 'payload_too_large', `the request body is larger than ${max} bytes`);
  const length = c.req.header('content-length');
  if (length !== undefined && Number(length) > max) throw tooLarge();
  const body = c.req.raw.body;
  if (!body) return '';
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > max) {
      await reader.cancel().catch(() => undefined);
      throw tooLarge();
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** The JSON body of a request, checked against `schema` (415 when not JSON, 400 naming the field, 413 when too large). */
async function jsonBody(c: Context, schema: S.Schema, max: number): Promise<unknown> {
  const type = c.req.header('content-type') ?? '';
  if (!/^application\/(.+\+)?json\s*(;|$)/i.test(type)) {
    throw new ApiError(
      415,
      'unsupported_media_type',
      `the body must be JSON: send Content-Type: application/json${type ? ` (got ${type.slice(0, 60)})` : ''}`,
    );
  }
  const text = await bodyText(c, max);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new ApiError(400, 'invalid_request', `the body is not valid JSON: ${(error as Error).message}`, 'body');
  }
  const problem = check(schema, value, 'body');
  if (problem) throw new ApiError(400, 'invalid_request', problem.message, problem.field);
  return value;
}

/** Like {@link jsonBody}, for routes whose body may be left out: no body is `{}`. */
async function optionalJsonBody(c: Context, schema: S.Schema, max: number): Promise<unknown> {
  const length = c.req.header('content-length');
  if ((length === undefined || length === '0') && c.req.header('transfer-encoding') === undefined) return {};
  if (c.req.header('content-type') === undefined) {
    const text = await bodyText(c, max);
    if (text.trim() === '') return {};
    throw new ApiError(415, 'unsupported_media_type', 'the body must be JSON: send Content-Type: application/json');
  }
  return jsonBody(c, schema, max);
}

/**
 * `GET /v1/openapi.json`: the OpenAPI 3.1 document of the API, made from the schemas in
 * schemas.ts — the same objects that validate the requests.
 */
import * as S from './schemas.js';

const json = (schema: S.Schema, description: string) => ({ description, content: { 'application/json': { schema } } });
const error = (description: string) => json({ $ref: '#/components/schemas/Error' }, description);
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const runId = { name: 'id', in: 'path', required: true, schema: { type: 'string' }, description: 'The run id.' };
const common = { '401': error('No token, or a wrong one.') };

/** The query parameters of a schema, as OpenAPI parameters. */
function queryParameters(schema: S.Schema): unknown[] {
  return Object.entries((schema.properties ?? {}) as Record<string, S.Schema>).map(([name, property]) => {
    const { description, ...rest } = property;
    return { name, in: 'query', required: false, schema: rest, ...(description ? { description } : {}) };
  });
}

/** The document (built once per server). */
export function openApiDocument(version: string): Record<string, unknown> {
  return {
    openapi: '3.1.0',
    info: {
      title: 'rein serve',
      version,
      description:
        'Runs of agents defined on disk (.rein/agents/<name>.md), their durable event logs as server-sent events (resumable with Last-Event-ID), approvals and steering. Every route but GET /healthz needs the bearer token.',
    },
    components: {
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', description: 'REIN_SERVER_TOKEN, or the contents of .rein/server-token.' },
      },
      schemas: {
        CreateRun: S.CreateRunSchema,
        Limits: S.LimitsSchema,
        Message: S.MessageSchema,
        Approval: S.ApprovalSchema,
        ElicitationAnswer: S.ElicitationAnswerSchema,
        Resume: S.ResumeSchema,
        Session: S.SessionSchema,
        Error: S.ErrorSchema,
        RunCreated: S.RunCreatedSchema,
        RunSummary: S.RunSummarySchema,
        RunList: S.RunListSchema,
        RunDetail: S.RunDetailSchema,
        PendingApproval: S.PendingApprovalSchema,
        PendingQuestion: S.PendingQuestionSchema,
        Accepted: S.AcceptedSchema,
        AgentList: S.AgentListSchema,
        Totals: S.TotalsSchema,
      },
    },
    security: [{ bearer: [] }],
    paths: {
      '/healthz': {
        get: {
          summary: 'Liveness (no token needed)',
          security: [],
          responses: {
            '200': json({ type: 'object', properties: { status: { const: 'ok' } } }, 'The server is up.'),
            '503': json({ type: 'object', properties: { status: { const: 'stopping' } } }, 'The server is stopping.'),
          },
        },
      },
      '/v1/agents': {
        get: { summary: 'The agents a run may name', responses: { '200': json(ref('AgentList'), 'The agents.'), ...common } },
      },
      '/v1/runs': {
        post: {
          summary: 'Start a run of an agent',
          requestBody: { required: true, content: { 'application/json': { schema: ref('CreateRun') } } },
          responses: {
            '201': json(ref('RunCreated'), 'The run is in the store and running.'),
            '400': error(
              "A bad field (named in error.field), an unknown agent, a limit above the agent's, or a field a request may not set (tools, baseUrl, …).",
            ),
            ...common,
            '413': error('The body is too large.'),
            '415': error('The body is not JSON.'),
            '503': error('The server is stopping.'),
          },
        },
        get: {
          summary: 'List runs, newest first',
          parameters: queryParameters(S.ListRunsQuerySchema),
          responses: { '200': json(ref('RunList'), 'A page of runs.'), '400': error('A bad query parameter.'), ...common },
        },
      },
      '/v1/runs/{id}': {
        get: {
          summary: 'A run: record, totals, cost, result, pending approvals',
          parameters: [runId],
          responses: { '200': json(ref('RunDetail'), 'The run.'), ...common, '404': error('No such run.') },
        },
      },
      '/v1/runs/{id}/events': {
        get: {
          summary: "The run's events as server-sent events",
          description:
            'Each stored event as `id: <seq>`, `event: <type>`, `data: <the event as JSON>`; deltas (text_delta, thinking_delta, tool_call_delta, tool_progress) live, without an id. The stored events after Last-Event-ID (or ?after) come from the log, then the live ones, with no gap and no duplicate; comments keep the stream alive. The stream ends after run_finished. A client that falls too far behind is dropped and may reconnect.',
          parameters: [
            runId,
            ...queryParameters(S.EventsQuerySchema),
            {
              name: 'Last-Event-ID',
              in: 'header',
              required: false,
              schema: { type: 'string', pattern: '^-?\\d+$' },
              description: 'The seq of the last stored event received (wins over ?after).',
            },
          ],
          responses: {
            '200': { description: 'The stream.', content: { 'text/event-stream': { schema: { type: 'string' } } } },
            '204': { description: 'The run has ended and nothing follows the given seq (an EventSource stops reconnecting).' },
            '400': error('A bad Last-Event-ID or after.'),
            ...common,
            '404': error('No such run.'),
          },
        },
      },
      '/v1/runs/{id}/messages': {
        post: {
          summary: 'Steer a running run, or queue a follow-up',
          parameters: [runId],
          requestBody: { required: true, content: { 'application/json': { schema: ref('Message') } } },
          responses: {
            '202': json(ref('Accepted'), 'Queued.'),
            '400': error('A bad field.'),
            ...common,
            '404': error('No such run.'),
            '409': error('The run is not running in this server.'),
          },
        },
      },
      '/v1/runs/{id}/abort': {
        post: {
          summary: 'Abort a running or paused run',
          parameters: [runId],
          responses: {
            '200': json(ref('Accepted'), 'The run has ended.'),
            ...common,
            '404': error('No such run.'),
            '409': error('The run has ended, or another process drives it.'),
          },
        },
      },
      '/v1/runs/{id}/approvals': {
        post: {
          summary: 'Approve or deny a call a paused run waits for, and continue it',
          parameters: [runId],
          requestBody: { required: true, content: { 'application/json': { schema: ref('Approval') } } },
          responses: {
            '202': json(ref('Accepted'), 'Decided and logged; the run goes on.'),
            '400': error('A bad field.'),
            ...common,
            '404': error('No such run.'),
            '409': error('The run is not paused, or no waiting call matches (toolCallId, argumentsHash).'),
            '503': error('The server is stopping.'),
          },
        },
      },
      '/v1/runs/{id}/elicitation': {
        post: {
          summary: "Answer the MCP server's question a paused run's call waits on, and continue it",
          parameters: [runId],
          requestBody: { required: true, content: { 'application/json': { schema: ref('ElicitationAnswer') } } },
          responses: {
            '202': json(ref('Accepted'), 'Answered and logged; the run goes on and the call is made again.'),
            '400': error('A bad field, or a form that does not fit the requested schema.'),
            ...common,
            '404': error('No such run.'),
            '409': error('The run is not paused, or no waiting call matches (toolCallId).'),
            '503': error('The server is stopping.'),
          },
        },
      },
      '/v1/runs/{id}/resume': {
        post: {
          summary: 'Continue a run that crashed, failed, was aborted or is paused',
          parameters: [runId],
          requestBody: { required: false, content: { 'application/json': { schema: ref('Resume') } } },
          responses: {
            '202': json(ref('Accepted'), 'The run goes on.'),
            ...common,
            '404': error('No such run.'),
            '409': error('The run is done, stopped or running, or its agent changed (force).'),
            '503': error('The server is stopping.'),
          },
        },
      },
      '/v1/session': {
        post: {
          summary: 'Sign the viewer in: a session cookie for the token',
          security: [],
          requestBody: { required: true, content: { 'application/json': { schema: ref('Session') } } },
          responses: {
            '204': { description: 'Signed in (Set-Cookie).' },
            '401': error('A wrong token.'),
            '403': error("Not from the server's own origin."),
          },
        },
        delete: { summary: 'Sign the viewer out', responses: { '204': { description: 'Signed out.' }, ...common } },
      },
      '/v1/openapi.json': { get: { summary: 'This document', responses: { '200': json({ type: 'object' }, 'OpenAPI 3.1.'), ...common } } },
    },
  };
}

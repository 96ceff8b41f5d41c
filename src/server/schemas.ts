/**
 * The JSON Schemas of the API: what validates each request (body and query) and what each
 * response holds. `GET /v1/openapi.json` is generated from these same objects, so the
 * document cannot drift from what the server accepts.
 */

/** A JSON Schema object (2020-12, as OpenAPI 3.1 uses). */
export type Schema = Record<string, unknown>;

const positiveInteger = (description: string): Schema => ({ type: 'integer', minimum: 1, description });

/** The limits a request may set: each one only at or below its agent's. */
export const LimitsSchema: Schema = {
  type: 'object',
  description: "Limits of this run. Each may only lower the agent's own (its file's, else rein's defaults).",
  additionalProperties: false,
  properties: {
    maxSteps: positiveInteger('Model calls before the run stops.'),
    timeoutMs: { type: 'integer', minimum: 1, maximum: 2_147_483_647, description: 'Time for the whole run, in milliseconds.' },
    maxTokens: positiveInteger('Tokens for the whole run.'),
    maxCostUsd: { type: 'number', exclusiveMinimum: 0, description: 'US dollars for the whole run (needs a catalog price for the model).' },
    noProgressRepeats: positiveInteger('The same call this many times in a row stops the run.'),
    maxConsecutiveToolErrors: positiveInteger('This many failing tool results in a row stop the run.'),
  },
};

export const CreateRunSchema: Schema = {
  type: 'object',
  description:
    'A run of an agent defined on disk (.rein/agents/<name>.md). A request cannot add tools, commands, MCP servers, a model or a base URL.',
  additionalProperties: false,
  required: ['input'],
  properties: {
    agent: {
      type: 'string',
      minLength: 1,
      maxLength: 64,
      description: 'The agent to run (default: "default", what `rein run` builds in the server\'s folder).',
    },
    input: { type: 'string', minLength: 1, maxLength: 1_000_000, description: 'The task.' },
    limits: LimitsSchema,
  },
};

export const MessageSchema: Schema = {
  type: 'object',
  additionalProperties: false,
  required: ['kind', 'text'],
  properties: {
    kind: {
      enum: ['steer', 'follow_up'],
      description: '`steer`: read before the next model call; `follow_up`: run once the agent would otherwise stop.',
    },
    text: { type: 'string', minLength: 1, maxLength: 1_000_000 },
  },
};

export const ApprovalSchema: Schema = {
  type: 'object',
  additionalProperties: false,
  required: ['toolCallId', 'approved'],
  properties: {
    toolCallId: { type: 'string', minLength: 1, description: 'The waiting call (from pendingApprovals or the approval_requested event).' },
    approved: { type: 'boolean' },
    reason: { type: 'string', maxLength: 10_000, description: "Why: a denial's reason reaches the model." },
    argumentsHash: {
      type: 'string',
      minLength: 1,
      description: "Optional: the hash of the arguments shown in approval_requested; the decision is refused if the waiting call's differ.",
    },
  },
};

export const ElicitationAnswerSchema: Schema = {
  type: 'object',
  additionalProperties: false,
  required: ['action'],
  properties: {
    toolCallId: {
      type: 'string',
      minLength: 1,
      description: 'The call whose MCP server question it answers (from the elicitation_requested event); needed only when several wait.',
    },
    action: { enum: ['accept', 'decline', 'cancel'] },
    content: {
      type: 'object',
      description: "For accept: the form's fields, checked against the requested schema (defaults fill the fields left out).",
    },
  },
};

export const ResumeSchema: Schema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    force: { type: 'boolean', description: "Continue even if the agent's tools, prompt or model changed since the run started." },
  },
};

/** `POST /v1/runs/:id/abort` takes no fields (an empty body, or `{}`). */
export const AbortSchema: Schema = { type: 'object', additionalProperties: false, properties: {} };

export const SessionSchema: Schema = {
  type: 'object',
  additionalProperties: false,
  required: ['token'],
  properties: { token: { type: 'string', minLength: 1 } },
};

/** The statuses a run can have. */
export const RUN_STATUSES = ['running', 'paused', 'done', 'stopped', 'failed', 'aborted'] as const;

/** The query of `GET /v1/runs` (every value arrives as a string and is read by this schema). */
export const ListRunsQuerySchema: Schema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    status: { enum: [...RUN_STATUSES], description: 'Only runs with this status.' },
    agent: { type: 'string', minLength: 1, description: 'Only runs of this agent.' },
    limit: { type: 'integer', minimum: 1, maximum: 200, default: 50, description: 'At most this many runs (newest first).' },
    cursor: { type: 'string', minLength: 1, description: 'The nextCursor of the previous page.' },
  },
};

/** The query of `GET /v1/runs/:id/events`. */
export const EventsQuerySchema: Schema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    after: { type: 'integer', minimum: -1, description: 'Send the stored events after this seq (the Last-Event-ID header wins over it).' },
  },
};

export const ErrorSchema: Schema = {
  type: 'object',
  required: ['error'],
  properties: {
    error: {
      type: 'object',
      required: ['code', 'message'],
      properties: {
        code: {
          type: 'string',
          description: 'What went wrong, for programs: invalid_request, unauthorized, not_found, conflict, payload_too_large, …',
        },
        message: { type: 'string', description: 'What went wrong and what to do, for people.' },
        field: { type: 'string', description: 'The request field at fault (400), e.g. limits.maxSteps.' },
      },
    },
  },
};

const usage = {
  type: 'object',
  properties: { input: { type: 'number' }, output: { type: 'number' }, total: { type: 'number' } },
  required: ['input', 'output', 'total'],
};

export const TotalsSchema: Schema = {
  type: 'object',
  required: ['steps', 'toolCalls', 'usage', 'durationMs'],
  properties: { steps: { type: 'integer' }, toolCalls: { type: 'integer' }, usage, durationMs: { type: 'number' } },
};

export const RunCreatedSchema: Schema = {
  type: 'object',
  required: ['runId', 'status'],
  properties: { runId: { type: 'string' }, status: { enum: [...RUN_STATUSES] } },
};

export const RunSummarySchema: Schema = {
  type: 'object',
  required: ['id', 'status', 'agent', 'task', 'model', 'cost', 'durationMs', 'createdAt', 'updatedAt', 'live'],
  properties: {
    id: { type: 'string' },
    status: { enum: [...RUN_STATUSES] },
    reason: { type: 'string' },
    agent: { type: ['string', 'null'], description: 'The agent it ran (null: started by a program, not by name).' },
    task: { type: ['string', 'null'], description: 'The start of its input.' },
    model: { type: 'string' },
    steps: { type: 'integer' },
    tokens: { type: 'number' },
    cost: { type: ['number', 'null'], description: 'US dollars (null: no price known).' },
    durationMs: { type: 'number' },
    createdAt: { type: 'number' },
    updatedAt: { type: 'number' },
    live: { type: 'boolean', description: 'Driven by this server right now.' },
    parentRunId: { type: 'string', description: "A sub-agent's run: the run whose tool call started it." },
  },
};

export const ChildRunSchema: Schema = {
  ...RunSummarySchema,
  required: [...(RunSummarySchema.required as string[]), 'parentToolCallId', 'depth'],
  properties: {
    ...(RunSummarySchema.properties as Record<string, Schema>),
    parentToolCallId: { type: ['string', 'null'], description: "The parent's tool call the child answers." },
    depth: { type: 'integer', description: 'Its depth in the tree of runs (1 for a child of a root).' },
  },
};

export const RunListSchema: Schema = {
  type: 'object',
  required: ['runs', 'nextCursor'],
  properties: { runs: { type: 'array', items: RunSummarySchema }, nextCursor: { type: ['string', 'null'] } },
};

export const PendingApprovalSchema: Schema = {
  type: 'object',
  required: ['toolCallId', 'name', 'arguments', 'argumentsHash'],
  properties: {
    toolCallId: { type: 'string' },
    name: { type: 'string' },
    arguments: { type: 'object' },
    argumentsHash: { type: 'string' },
    rule: { type: 'string', description: 'The permission rule that asked.' },
    step: { type: 'integer' },
    runId: { type: 'string', description: "A sub-agent's call (listed on its root, decided there): the child run that waits." },
    depth: { type: 'integer', description: "That run's depth in the tree." },
  },
};

export const PendingQuestionSchema: Schema = {
  type: 'object',
  required: ['toolCallId', 'name', 'runId', 'step', 'server', 'mode', 'message', 'requestHash'],
  properties: {
    toolCallId: { type: 'string', description: 'The call that waits (give it to POST /v1/runs/{id}/elicitation).' },
    name: { type: 'string', description: "The call's tool." },
    runId: { type: 'string', description: "The run whose call waits: the run itself or a sub-agent's of its tree (answered on the root)." },
    step: { type: 'integer' },
    server: { type: 'string', description: 'The MCP server asking.' },
    mode: {
      enum: ['form', 'url', 'sampling'],
      description:
        "form: fields to fill in; url: a page to open; sampling: may the model answer the server's sampling request (accept approves, decline refuses).",
    },
    message: { type: 'string', description: "The server's question (for sampling: the request's size and last message)." },
    requestHash: { type: 'string', description: 'How the question is recognised when the server asks it again.' },
    requestedSchema: { type: 'object', description: 'For form: the flat object schema the answer must fit.' },
    url: { type: 'string', description: 'For url: the page to open.' },
  },
};

export const RunDetailSchema: Schema = {
  type: 'object',
  required: ['record', 'totals', 'cost', 'result', 'pendingApprovals', 'pendingQuestions', 'children'],
  properties: {
    record: RunSummarySchema,
    totals: TotalsSchema,
    cost: { type: ['number', 'null'] },
    result: { type: ['object', 'null'], description: 'The result of its last run_finished (null while it runs).' },
    pendingApprovals: { type: 'array', items: PendingApprovalSchema },
    pendingQuestions: {
      type: 'array',
      items: PendingQuestionSchema,
      description: "The MCP servers' questions and sampling requests a paused run's calls (or its sub-agents') wait on.",
    },
    children: { type: 'array', items: ChildRunSchema, description: 'The sub-agent runs its tool calls started, oldest first.' },
    recoveryError: { type: 'string', description: 'Why this server could not continue the run after a restart.' },
  },
};

export const AcceptedSchema: Schema = {
  type: 'object',
  required: ['runId', 'status'],
  properties: { runId: { type: 'string' }, status: { enum: [...RUN_STATUSES] } },
};

export const AgentListSchema: Schema = {
  type: 'object',
  required: ['agents'],
  properties: {
    agents: {
      type: 'array',
      items: {
        type: 'object',
        required: ['name', 'description', 'model'],
        properties: { name: { type: 'string' }, description: { type: 'string' }, model: { type: 'string' }, limits: { type: 'object' } },
      },
    },
  },
};

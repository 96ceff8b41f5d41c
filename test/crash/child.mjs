// The process the crash test kills: runs (or resumes) one agent run against the parent's
// scripted server, with one tool per effect class, on the built code (dist/, which
// `npm test` builds first). `REIN_CRASH_AT=<point>:<hit>` arms a crash point; the parent
// may also kill it at any moment after it printed `ready`.
//
// argv[2]: JSON { mode: 'run' | 'resume' | 'approve', db, runId, model, dist, driver, gated?, leadModel? }.
// With `leadModel`, the run is a tree: a lead agent (on that model) whose `worker` tool is a
// sub-agent with the effect tools, in the same store; the lead also calls `do_idempotent`.
// With `gated`, the agent also has a `gated` tool that its approval policy asks a person
// for (the run pauses durably), and `approve` approves every call the run waits for.
// stdout: `ready`, then one JSON line with the result and the counts of this process.
import { setTimeout as sleep } from 'node:timers/promises';

const cfg = JSON.parse(process.argv[2]);
const dist = (path) => import(new URL(path, cfg.dist).href);
const [{ Agent }, { SqliteStore }, { openSqliteFile }, { defineTool }, { crashPoint }, { agentTool }] = await Promise.all([
  dist('loop/agent.js'),
  dist('store/sqlite.js'),
  dist('store/sqlite-file.js'),
  dist('tools/define.js'),
  dist('loop/crash-points.js'),
  dist('loop/agent-tool.js'),
]);

let appends = 0;
const store = new SqliteStore({
  path: cfg.db,
  driver: cfg.driver,
  // Called inside every append's transaction, after its rows are written, before COMMIT.
  probeSynchronous: () => {
    appends++;
    crashPoint('inside-append');
  },
});

// The tools' side effects live in tables of their own, in the same file, written through
// a second connection (as a real tool's database would be): fx_exec counts every execution,
// fx_applied holds each key's applied effect (`count` = how many times it was applied).
const fx = openSqliteFile(cfg.db, 'the crash test', { driver: cfg.driver, busyTimeoutMs: 5000 });
fx.exec('PRAGMA journal_mode = WAL');
fx.exec('PRAGMA synchronous = NORMAL');
fx.exec(`CREATE TABLE IF NOT EXISTS fx_exec (key TEXT NOT NULL, tool TEXT NOT NULL, n INTEGER NOT NULL, PRIMARY KEY (key, tool));
  CREATE TABLE IF NOT EXISTS fx_applied (key TEXT PRIMARY KEY, tool TEXT NOT NULL, output TEXT NOT NULL, count INTEGER NOT NULL)`);
const countExec = fx.prepare('INSERT INTO fx_exec (key, tool, n) VALUES (?, ?, 1) ON CONFLICT (key, tool) DO UPDATE SET n = n + 1');
const applyOnce = fx.prepare('INSERT INTO fx_applied (key, tool, output, count) VALUES (?, ?, ?, 1) ON CONFLICT (key) DO NOTHING');
const applyAgain = fx.prepare(
  'INSERT INTO fx_applied (key, tool, output, count) VALUES (?, ?, ?, 1) ON CONFLICT (key) DO UPDATE SET count = count + 1',
);
const lookup = fx.prepare('SELECT output FROM fx_applied WHERE key = ?');
// The write-point rule: a call's tool_started is durable before the tool runs.
fx.exec('CREATE TABLE IF NOT EXISTS fx_early (key TEXT NOT NULL)');
const startLogged = fx.prepare(
  "SELECT count(*) FROM events WHERE run_id = ? AND type = 'tool_started' AND json_extract(data, '$.idempotencyKey') = ?",
);
const early = fx.prepare('INSERT INTO fx_early (key) VALUES (?)');

let executions = 0;
function effectTool(effect, apply) {
  const name = `do_${effect}`;
  return defineTool({
    name,
    description: `A ${effect} action.`,
    parameters: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] },
    effect,
    ...(effect === 'reconcilable'
      ? {
          reconcile: (key) => {
            const output = lookup.value(key);
            return output === undefined ? { done: false } : { done: true, output };
          },
        }
      : {}),
    execute: async ({ n }, ctx) => {
      executions++;
      if (startLogged.value(ctx.runId, ctx.idempotencyKey) === 0) early.run(ctx.idempotencyKey);
      // A little time inside the tool, so random kills land there too.
      await sleep(2);
      const output = `${name} did ${n}`;
      countExec.run(ctx.idempotencyKey, name);
      apply?.run(ctx.idempotencyKey, name, output);
      crashPoint('after-tool-effect');
      return output;
    },
  });
}

// The approval rule: the gated tool runs only after an approving `approval_decided` of its
// call is durable, at a lower seq than the call's tool_started; fx_unapproved holds the keys
// of executions that broke it.
fx.exec('CREATE TABLE IF NOT EXISTS fx_unapproved (key TEXT NOT NULL)');
const approvedBefore = fx.prepare(`SELECT count(*) FROM events s JOIN events d ON d.run_id = s.run_id AND d.seq < s.seq
  WHERE s.run_id = ? AND s.type = 'tool_started' AND json_extract(s.data, '$.idempotencyKey') = ?
    AND d.type = 'approval_decided' AND json_extract(d.data, '$.toolCallId') = json_extract(s.data, '$.toolCallId') AND json_extract(d.data, '$.approved') = 1`);
const unapproved = fx.prepare('INSERT INTO fx_unapproved (key) VALUES (?)');
function gatedTool() {
  return defineTool({
    name: 'gated',
    description: 'An action a person must approve.',
    parameters: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] },
    effect: 'idempotent',
    execute: async ({ n }, ctx) => {
      executions++;
      if (startLogged.value(ctx.runId, ctx.idempotencyKey) === 0) early.run(ctx.idempotencyKey);
      if (approvedBefore.value(ctx.runId, ctx.idempotencyKey) === 0) unapproved.run(ctx.idempotencyKey);
      await sleep(2);
      const output = `gated did ${n}`;
      countExec.run(ctx.idempotencyKey, 'gated');
      applyOnce.run(ctx.idempotencyKey, 'gated', output);
      crashPoint('after-tool-effect');
      return output;
    },
  });
}

const tools = [
  effectTool('pure'),
  effectTool('idempotent', applyOnce),
  effectTool('reconcilable', applyAgain),
  effectTool('unsafe', applyAgain),
];
if (cfg.gated) tools.push(gatedTool());
const worker = new Agent({
  ...(cfg.leadModel ? { name: 'worker' } : {}),
  model: cfg.model,
  tools,
  store,
  retry: { baseDelayMs: 5, maxDelayMs: 200, jitter: false },
  toolTimeoutMs: 30_000,
  ...(cfg.gated ? { approvalPolicy: (call) => (call.name === 'gated' ? 'ask' : 'allow') } : {}),
});

const agent = cfg.leadModel
  ? new Agent({
      name: 'lead',
      model: cfg.leadModel,
      tools: [agentTool(worker, { name: 'worker', description: 'Does the four things.' }), tools[1]],
      store,
      retry: { baseDelayMs: 5, maxDelayMs: 200, jitter: false },
      toolTimeoutMs: 30_000,
    })
  : worker;

process.stdout.write('ready\n');
const started = performance.now();
const result =
  cfg.mode === 'run'
    ? await agent.run(cfg.gated ? 'do the gated things' : 'do the four things', { runId: cfg.runId })
    : cfg.mode === 'approve'
      ? await agent.approve(cfg.runId)
      : await agent.resume(cfg.runId);
const ms = Math.round(performance.now() - started);
await store.close();
fx.close();
process.stdout.write(`${JSON.stringify({ status: result.status, reason: result.reason, error: result.error, ms, appends, executions })}\n`);

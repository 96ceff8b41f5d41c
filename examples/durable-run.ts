// A durable run: with a store, every event is logged as it happens (here to SQLite), so a
// run that stopped half-way — a crash, Ctrl-C, a failure — continues later from the end of
// its log, in any process, without doing a completed step twice. Here the first agent is
// stopped right after its first tool call; a second agent, on a store opened afresh as
// another process would, resumes the run.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, defineTool, jsonSchema, type RunStore } from 'rein';
import { openStore } from 'rein/store';
import { startScriptedServer, text, toolCall } from 'rein/testing';

const folder = mkdtempSync(join(tmpdir(), 'rein-durable-'));
const database = join(folder, 'rein.db'); // by default a program's runs go to .rein/rein.db

const bookings: string[] = [];
const book = defineTool({
  name: 'book_room',
  description: 'Book a meeting room for a day.',
  parameters: jsonSchema<{ room: string; day: string }>({
    type: 'object',
    properties: { room: { type: 'string' }, day: { type: 'string' } },
    required: ['room', 'day'],
  }),
  risk: 'write',
  // Doing it twice with the same key does nothing more: if a crash cuts the call off before
  // its result is logged, a resume runs it again with the same idempotencyKey.
  effect: 'idempotent',
  execute: ({ room, day }, ctx) => {
    if (!bookings.includes(ctx.idempotencyKey)) bookings.push(ctx.idempotencyKey);
    return `booked ${room} for ${day}`;
  },
});
const invite = defineTool({
  name: 'send_invite',
  description: 'Send the meeting invitation.',
  parameters: jsonSchema<{ to: string }>({ type: 'object', properties: { to: { type: 'string' } }, required: ['to'] }),
  risk: 'write', // effect left `unsafe` (the default): never run twice, even after a crash
  execute: ({ to }) => `invited ${to}`,
});

// The scripted model answers from what it is sent, so the resumed run gets the next answer.
const server = await startScriptedServer({
  script: (request) => {
    const results = request.messages.filter((m) => m.role === 'tool').length;
    if (results === 0) return toolCall('book_room', { room: 'Lovelace', day: 'Tuesday' });
    if (results === 1) return toolCall('send_invite', { to: 'team@example.com' });
    return text('The Lovelace room is booked for Tuesday and the team is invited.');
  },
});
try {
  // The same agent in both processes: a run whose tools, prompt or model changed is not resumed.
  const agentWith = (store: RunStore) => new Agent({ model: server.model(), tools: [book, invite], store });

  // First "process": stopped (as by Ctrl-C) once the booking is logged.
  const first = await openStore(database);
  const run = agentWith(first).run('Book the Lovelace room for Tuesday and invite the team.');
  run.subscribe((event) => {
    if (event.type === 'tool_finished') run.abort('stopped for the example');
  });
  const stopped = await run;
  console.log(`first: ${stopped.status} after ${stopped.totals.toolCalls} tool call`);
  await first.close();

  // Second "process": the same agent, the store opened again; the run continues from its log.
  const second = await openStore(database);
  console.log(`stored: ${(await second.getRun(run.runId))?.status}`);
  const resumed = agentWith(second).resume(run.runId);
  resumed.subscribe((event) => {
    if (event.type === 'run_resumed') console.log(`resumed from: ${event.from}`);
    if (event.type === 'tool_finished') console.log(`ran: ${event.name}`);
  });
  const result = await resumed;
  console.log(`second: ${result.status} (${result.reason}): ${result.text}`);
  console.log(`bookings made: ${bookings.length}`);
  const events = await second.loadEvents(run.runId);
  console.log(
    `log: ${events.length} events, ${events.filter((e) => e.type === 'tool_finished').length} tool results, stored: ${(await second.getRun(run.runId))?.status}`,
  );
  await second.close();
} finally {
  await server.close();
  rmSync(folder, { recursive: true, force: true });
}

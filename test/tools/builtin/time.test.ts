import { describe, expect, it } from 'vitest';
import { createCurrentTimeTool, timeIn } from '../../../src/tools/builtin/time.js';
import { seedTools } from '../../../src/tools/builtin/index.js';
import { createDispatcher } from '../../../src/tools/dispatch.js';
import { ToolRegistry } from '../../../src/tools/registry.js';

const instant = new Date('2025-03-30T12:34:56.789Z'); // Berlin switched to summer time that morning
const ctx = { signal: new AbortController().signal, runId: 'r', idempotencyKey: 'k' };

function dispatcherAt(defaultTimeZone = 'UTC') {
  return createDispatcher(new ToolRegistry([createCurrentTimeTool({ now: () => instant, defaultTimeZone })]));
}
const ask = (rawArguments: string, defaultTimeZone?: string) =>
  dispatcherAt(defaultTimeZone).dispatch({ type: 'tool_call', id: 'c', name: 'get_current_time', arguments: {}, rawArguments }, ctx);

describe('timeIn', () => {
  it.each([
    ['Europe/Berlin', '2025-03-30T14:34:56+02:00', '+02:00'],
    ['America/New_York', '2025-03-30T08:34:56-04:00', '-04:00'],
    ['Asia/Kolkata', '2025-03-30T18:04:56+05:30', '+05:30'],
    ['UTC', '2025-03-30T12:34:56+00:00', '+00:00'],
  ])('resolves %s', (zone, local, offset) => {
    expect(timeIn(instant, zone)).toEqual({ utc: '2025-03-30T12:34:56.789Z', timeZone: zone, local, offset, weekday: 'Sunday' });
  });

  it('matches zone names case-insensitively and returns the canonical name', () => {
    expect(timeIn(instant, 'europe/berlin').timeZone).toBe('Europe/Berlin');
  });

  it('rejects an unknown zone with a hint', () => {
    expect(() => timeIn(instant, 'Mars/Olympus')).toThrow('unknown time zone "Mars/Olympus": use an IANA name');
  });
});

describe('get_current_time', () => {
  it('reports the local time of the requested zone and UTC', async () => {
    const outcome = await ask('{"timezone": "Asia/Tokyo"}');
    expect(outcome.result.isError).toBe(false);
    expect(outcome.result.content).toEqual([
      {
        type: 'text',
        text: 'Current time in Asia/Tokyo: Sunday, 2025-03-30 21:34:56 (UTC+09:00)\nISO 8601: 2025-03-30T21:34:56+09:00\nUTC: 2025-03-30T12:34:56.789Z',
      },
    ]);
    expect(outcome.result.details).toMatchObject({ timeZone: 'Asia/Tokyo', offset: '+09:00' });
  });

  it('uses the default zone when none is given', async () => {
    const outcome = await ask('{}', 'Europe/Berlin');
    expect(outcome.result.details).toMatchObject({ timeZone: 'Europe/Berlin', local: '2025-03-30T14:34:56+02:00' });
  });

  it('answers a bad zone with a clear error result', async () => {
    const outcome = await ask('{"timezone": "Mars/Olympus"}');
    expect(outcome).toMatchObject({ errorCode: 'tool_failed', result: { isError: true } });
    expect(outcome.result.content[0]).toMatchObject({ text: expect.stringContaining('unknown time zone "Mars/Olympus"') });
  });

  it('works with the real clock and host zone', async () => {
    const registry = new ToolRegistry(seedTools());
    const outcome = await createDispatcher(registry).dispatch(
      { type: 'tool_call', id: 'c', name: 'get_current_time', arguments: {}, rawArguments: '' },
      ctx,
    );
    expect(outcome.result.isError).toBe(false);
    expect(Date.parse((outcome.result.details as { utc: string }).utc)).not.toBeNaN();
  });
});

describe('seedTools', () => {
  it('returns the three read-only seed tools', () => {
    const tools = seedTools();
    expect(tools.map((t) => t.name).sort()).toEqual(['calculate', 'get_current_time', 'roll_dice']);
    expect(tools.every((t) => t.risk === 'read')).toBe(true);
  });
});

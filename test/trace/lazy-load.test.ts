// A run that nothing observes loads neither rein's telemetry nor @opentelemetry/api (a fresh
// process's first run pays for neither), and an SDK registered later is honoured by the
// same agent's next run. In a child process of its own: the API must not be loaded before.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

const script = fileURLToPath(new URL('./fixtures/lazy-otel.mjs', import.meta.url));

it('the first run with no SDK loads no OpenTelemetry; a later run after an SDK registered is traced', async () => {
  const stdout = await new Promise<string>((resolve, reject) =>
    execFile(process.execPath, [script], { timeout: 60_000 }, (error, out, err) =>
      error ? reject(new Error(`${error.message}\n${err}`)) : resolve(out),
    ),
  );
  expect(JSON.parse(stdout)).toEqual({
    first: 'final_answer',
    second: 'final_answer',
    loadedByFirstRun: false,
    spans: ['chat scripted', 'invoke_agent'],
    traceIdOfSecond: true,
  });
});

// The OTLP SDK the CLI starts from the OTEL_* variables: an endpoint that is no http(s) URL
// is refused up front, and what OpenTelemetry reports about a failed export reaches the
// person as one line with the error's message, never a stack.
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { checkEndpoint, diagText, startOtlpSdk } from '../../src/trace/otlp.js';

/** A port on 127.0.0.1 that nothing listens on (taken, then let go). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('checkEndpoint', () => {
  it('takes http and https URLs; refuses anything else naming the variable, not the value', () => {
    expect(() => checkEndpoint({ OTEL_EXPORTER_OTLP_ENDPOINT: 'https://collector:4318' }, 'traces')).not.toThrow();
    expect(() => checkEndpoint({ OTEL_EXPORTER_OTLP_ENDPOINT: 'not a url pw=hunter2' }, 'metrics')).toThrow(
      /^OTEL_EXPORTER_OTLP_ENDPOINT is not a URL: set it to the OTLP\/HTTP collector's http:\/\/ or https:\/\/ URL, e.g. http:\/\/127.0.0.1:4318/,
    );
    const error = (() => {
      try {
        checkEndpoint({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://ok:4318', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'ftp://u:hunter2@x' }, 'traces');
      } catch (e) {
        return e as Error;
      }
      return undefined;
    })();
    expect(error?.message).toMatch(/^OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is a ftp: URL/);
    expect(error?.message).not.toContain('hunter2');
  });
});

describe('diagText', () => {
  it("gives an error's message, not its stack", () => {
    const json = JSON.stringify({ stack: 'Error: export failed\n    at run (x.js:1:1)', message: 'export failed', name: 'Error' });
    expect(diagText(json, [])).toBe('export failed');
    expect(diagText('export failed', [new Error('connect ECONNREFUSED')])).toBe('export failed connect ECONNREFUSED');
    expect(diagText('Error: boom\n    at a (b.js:1:1)\n    at c (d.js:2:2)', [])).toBe('Error: boom');
  });
});

describe('startOtlpSdk against an endpoint nothing listens on', () => {
  it('reports the failed export on one line without a stack, and shuts down', async () => {
    const port = await closedPort();
    const said: string[] = [];
    const sdk = await startOtlpSdk(
      { OTEL_EXPORTER_OTLP_ENDPOINT: `http://user:pw@127.0.0.1:${port}`, OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_TIMEOUT: '2000' },
      { version: '0.0.0', report: (message) => said.push(message) },
    );
    sdk?.meterProvider?.getMeter('test').createCounter('runs').add(1);
    await sdk?.shutdown();
    expect(said.length).toBeGreaterThan(0);
    for (const line of said) {
      expect(line).toMatch(/^OpenTelemetry: .*ECONNREFUSED/);
      expect(line).not.toMatch(/\n|"stack"|\bat .*\.js:\d+/);
    }
  });
});

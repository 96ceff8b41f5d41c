// The clients of `bench/serve.mjs`, in their own process (their CPU is not the server's).
// `runs <url> <token> <agent> <n> <follow|poll>`: n runs one after another, each followed
// to its end over its event stream, or by reading its record every 100 ms.
// `streams <url> <token> <runId> <n>`: n event streams of one run; prints "ready" once all
// are open, then one JSON line: events received in all, and the time from the first to the last.
const [mode, url, token, a, b, c] = process.argv.slice(2);
const headers = { authorization: `Bearer ${token}` };

async function follow(runId, onEvent) {
  const response = await fetch(`${url}/v1/runs/${runId}/events`, { headers });
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffered = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return;
    buffered += decoder.decode(value, { stream: true });
    let end;
    while ((end = buffered.indexOf('\n\n')) !== -1) {
      const frame = buffered.slice(0, end);
      buffered = buffered.slice(end + 2);
      if (frame.startsWith('id: ')) onEvent(frame);
    }
  }
}

if (mode === 'runs') {
  for (let i = 0; i < Number(b); i++) {
    const res = await fetch(`${url}/v1/runs`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify({ agent: a, input: 'Add the numbers.' }),
    });
    const { runId } = await res.json();
    if (c === 'follow') await follow(runId, () => undefined);
    else {
      for (;;) {
        const detail = await (await fetch(`${url}/v1/runs/${runId}`, { headers })).json();
        if (detail.record.status !== 'running' && !detail.record.live) break;
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  }
  console.log('done');
} else {
  let events = 0;
  let first = 0;
  let last = 0;
  const n = Number(b);
  const streams = [];
  let open = 0;
  for (let i = 0; i < n; i++) {
    streams.push(
      follow(a, () => {
        events++;
        last = performance.now();
        first ||= last;
      }),
    );
  }
  // The streams are open once each has its first bytes (a comment the server sends at once).
  void open;
  console.log('ready');
  await Promise.all(streams);
  console.log(JSON.stringify({ events, ms: last - first }));
}

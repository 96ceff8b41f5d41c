// Two hand-written floors: the least code that runs the benchmark's agent loop, over
// `fetch` and over `node:http` with keep-alive. rein is measured against them.
import http from 'node:http';

const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });

function tools() {
  return [
    {
      type: 'function',
      function: {
        name: 'add',
        description: 'Add two numbers.',
        parameters: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] },
      },
    },
  ];
}

/** Accumulates one streamed chat completion from SSE text, manual framing. */
class Accumulator {
  buffer = '';
  content = '';
  calls = [];
  feed(text) {
    this.buffer += text;
    let end;
    while ((end = this.buffer.indexOf('\n\n')) !== -1) {
      const frame = this.buffer.slice(0, end);
      this.buffer = this.buffer.slice(end + 2);
      if (!frame.startsWith('data: ')) continue;
      const data = frame.slice(6);
      if (data === '[DONE]') continue;
      const chunk = JSON.parse(data);
      const delta = chunk.choices?.[0]?.delta;
      if (!delta) continue;
      if (delta.content) this.content += delta.content;
      for (const tc of delta.tool_calls ?? []) {
        const call = (this.calls[tc.index] ??= { id: '', name: '', arguments: '' });
        if (tc.id) call.id = tc.id;
        if (tc.function?.name) call.name = tc.function.name;
        if (tc.function?.arguments) call.arguments += tc.function.arguments;
      }
    }
  }
}

async function loop(url, model, task, post) {
  const messages = [{ role: 'user', content: task }];
  let requests = 0;
  for (;;) {
    const acc = new Accumulator();
    await post(url, JSON.stringify({ model, messages, tools: tools(), stream: true, stream_options: { include_usage: true } }), acc);
    requests++;
    if (acc.calls.length === 0) return { requests, text: acc.content };
    messages.push({
      role: 'assistant',
      content: acc.content || null,
      tool_calls: acc.calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } })),
    });
    for (const c of acc.calls) {
      const { a, b } = JSON.parse(c.arguments);
      messages.push({ role: 'tool', tool_call_id: c.id, content: String(a + b) });
    }
  }
}

async function postFetch(url, body, acc) {
  const res = await fetch(`${url}/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    acc.feed(decoder.decode(value, { stream: true }));
  }
}

function postHttp(url, body, acc) {
  return new Promise((resolve, reject) => {
    const req = http.request(
      `${url}/chat/completions`,
      { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
      (res) => {
        res.setEncoding('utf8');
        res.on('data', (text) => acc.feed(text));
        res.on('end', resolve);
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

export const fetchFloor = (url, model, task) => loop(url, model, task, postFetch);
export const httpFloor = (url, model, task) => loop(url, model, task, postHttp);

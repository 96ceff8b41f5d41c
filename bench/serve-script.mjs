// Script of `bench/serve.mjs`'s model server: `calculate` tool turns (a tool every served
// agent has), then an answer. The model id says how many (`bench-8`); `-wait` holds the
// first answer back 1.5 s, so clients can connect before the run goes on.
export default function script(request) {
  const turns = Number(/bench-(\d+)/.exec(request.model ?? '')?.[1] ?? 8);
  const done = request.messages.filter((m) => m.role === 'tool').length;
  const delayMs = done === 0 && /-wait$/.test(request.model ?? '') ? 1500 : 0;
  if (done < turns)
    return {
      text: done === 0 ? 'Let me add these up.' : '',
      toolCalls: [{ name: 'calculate', arguments: { expression: `${done} + ${done + 1}` } }],
      delayMs,
    };
  return { text: `All ${turns} additions are done.` };
}

// Script of the benchmark's scripted model server: `add` tool turns, then a final answer.
// The number of tool turns comes from the model id (`bench-8`, `bench-32`), so one server
// process serves every workload.
export default function script(request) {
  const turns = Number(/(\d+)$/.exec(request.model ?? '')?.[1] ?? 8);
  let done = 0;
  for (const m of request.messages) if (m.role === 'tool') done++;
  if (done < turns) {
    return { text: done === 0 ? 'Let me add these up.' : '', toolCalls: [{ name: 'add', arguments: { a: done, b: done + 1 } }] };
  }
  return { text: `All ${turns} additions are done; the last sum was ${2 * turns - 1}.` };
}

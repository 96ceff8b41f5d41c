// Script of the benchmark's scripted model server: `add` tool turns, then a final answer.
// The number of tool turns comes from the model id (`bench-8`, `bench-32`), so one server
// process serves every workload.
export default function script(request) {
  // `bench-8`, or `bench-8-d50` for an answer that waits 50 ms (a model's latency).
  const [, turnsText = '8', delayText] = /(\d+)(?:-d(\d+))?$/.exec(request.model ?? '') ?? [];
  const turns = Number(turnsText);
  const delayMs = delayText === undefined ? undefined : Number(delayText);
  let done = 0;
  for (const m of request.messages) if (m.role === 'tool') done++;
  if (done < turns) {
    return {
      text: done === 0 ? 'Let me add these up.' : '',
      toolCalls: [{ name: 'add', arguments: { a: done, b: done + 1 } }],
      ...(delayMs ? { delayMs } : {}),
    };
  }
  return { text: `All ${turns} additions are done; the last sum was ${2 * turns - 1}.`, ...(delayMs ? { delayMs } : {}) };
}

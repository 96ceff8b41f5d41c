// Approvals: a permission policy decides each call (allow, ask or deny, naming the rule
// that decided), and `hooks.onConfirm` answers the calls it asks about, with the arguments
// that will run. Here the "person" is a rule of thumb; at a terminal it would be a
// question (`rein run` asks y / n / always). A refusal reaches the model as an error
// result with the reason, and the run goes on.
import { Agent, defineTool, jsonSchema, toolResultText } from 'rein';
import { createPermissionPolicy } from 'rein/permissions';
import { startScriptedServer, text, toolCall, toolCalls } from 'rein/testing';

const balance = defineTool({
  name: 'balance',
  description: 'The account balance in euros.',
  parameters: { type: 'object', properties: {} },
  risk: 'read',
  effect: 'pure',
  execute: () => '€1,200.00',
});
const transfer = defineTool({
  name: 'transfer',
  description: 'Send money from the account.',
  parameters: jsonSchema<{ to: string; euros: number }>({
    type: 'object',
    properties: { to: { type: 'string' }, euros: { type: 'number', exclusiveMinimum: 0 } },
    required: ['to', 'euros'],
  }),
  risk: 'write', // by default a policy asks before a write
  execute: ({ to, euros }) => `sent €${euros.toFixed(2)} to ${to}`,
});
const close = defineTool({
  name: 'close_account',
  description: 'Close the account for good.',
  parameters: { type: 'object', properties: {} },
  risk: 'write',
  execute: () => 'closed',
});

const policy = createPermissionPolicy({ deny: ['close_account'] }); // reads run, writes ask

const server = await startScriptedServer({
  script: [
    toolCall('balance'),
    toolCalls(
      { name: 'transfer', arguments: { to: 'Ann', euros: 40 } },
      { name: 'transfer', arguments: { to: 'Bob', euros: 900 } },
      { name: 'close_account', arguments: {} },
    ),
    text('Sent €40 to Ann. The €900 to Bob was declined, and closing the account is not allowed.'),
  ],
});
try {
  const agent = new Agent({
    model: server.model(),
    tools: [balance, transfer, close],
    approvalPolicy: (call, tool) => policy.decide(call, tool),
    hooks: {
      // Asked only about the calls the policy asks about, after their arguments were validated.
      onConfirm: (call, args) => {
        const euros = Number(args.euros);
        return euros <= 100 ? true : { allow: false, reason: `€${euros} is over the €100 limit for transfers without a second signature` };
      },
    },
    toolExecution: 'sequential', // so the output below comes in one order
  });
  const run = agent.run('Pay Ann €40 and Bob €900, then close the account.');
  run.subscribe((event) => {
    if (event.type === 'permission_decided') console.log(`policy: ${event.name} → ${event.decision} (${event.rule})`);
    if (event.type === 'approval_requested') console.log(`asked: ${event.name} ${JSON.stringify(event.arguments)}`);
    if (event.type === 'approval_decided') console.log(`person: ${event.approved ? 'approved' : `declined: ${event.reason}`}`);
    if (event.type === 'tool_finished')
      console.log(`${event.name}: ${event.result.isError ? 'refused: ' : ''}${toolResultText(event.result.content)}`);
  });
  const result = await run;
  console.log(`answer: ${result.text}`);
} finally {
  await server.close();
}

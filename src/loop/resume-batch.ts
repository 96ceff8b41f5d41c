/**
 * Finishing the tool batch a crashed process left open. A call whose `tool_finished` is
 * logged is never run again. A call that never started runs now. A call that started but
 * never finished is resolved by its tool's declared effect (see `ToolEffect`): `pure` and
 * `idempotent` run again (with the same idempotency key), `reconcilable` asks its
 * `reconcile(key)`, and `unsafe` never runs twice: its outcome is recorded as `unknown` and
 * the model is told so. Calls are resolved one after another, in call order.
 */
import type { ToolCall } from '../model/types.js';
import { normalizeOutput } from '../tools/output.js';
import type { DispatchOutcome } from '../tools/types.js';
import type { PendingBatch } from './resume-state.js';
import type { Confirm, LoopDeps } from './deps.js';
import { PAUSED, checkCall, contextOf, failedCheck, emitFinished, idempotencyKey, prepare, startedEvent } from './tool-calls.js';
import {
  NO_ONE_TO_ASK,
  approvedCheck,
  decide,
  declined,
  deniedOutcome,
  personCheck,
  policyRefusal,
  requestApproval,
  verdictOf,
} from './approvals.js';
import { crashPoint } from './crash-points.js';
import { errorOutcome } from './error-outcome.js';
import { takeChildPaused } from './run-tree.js';
import { answerOrWait, handAnswers, WAITS_FOR_ANSWER } from './call-questions.js';
import { dropCallAnswers } from '../tools/call-side-channel.js';

/** Outcomes of every call of the batch, in call order. */
export async function resumeBatch(deps: LoopDeps, batch: PendingBatch): Promise<DispatchOutcome[] | typeof PAUSED> {
  const signal = deps.controls.abortController.signal;
  // Nothing of a batch runs while one of its calls still waits for a person.
  for (const id of batch.approvalsRequested.keys()) if (!batch.approvalsDecided.has(id) && !batch.finished.has(id)) return PAUSED;
  // Nor while a call's question waits for a person's answer.
  for (const id of batch.questionsWaiting) if (!batch.finished.has(id)) return PAUSED;
  const outcomes: DispatchOutcome[] = [];
  for (let index = 0; index < batch.calls.length; index++) {
    const modelCall = batch.calls[index] as ToolCall;
    const logged = batch.finished.get(modelCall.id);
    if (logged) {
      outcomes.push({ result: logged.result, terminate: logged.terminate, arguments: modelCall.arguments, durationMs: 0 });
      continue;
    }
    // The policy and the log see the arguments that will run, as in a batch.
    const call = await checkCall(deps, modelCall);
    crashPoint('before-resume-call');
    const decision = batch.approvalsDecided.get(call.id);
    if (decision && !decision.approved) {
      outcomes.push(await record(deps, batch.step, call, deniedOutcome(call, decision.reason ?? declined(undefined))));
      continue;
    }
    const started = batch.started.has(call.id);
    let needsPerson = false;
    if (!decision && !started && !failedCheck(call)) {
      // Not decided by a person: the policy decides now, as it would have in the batch.
      const verdict = await decide(deps, batch.step, call);
      if (verdict.decision === 'deny') {
        outcomes.push(await record(deps, batch.step, call, deniedOutcome(call, policyRefusal(verdict))));
        continue;
      }
      needsPerson = verdict.decision === 'ask';
    }
    const key = idempotencyKey(deps.runId, batch.assistantSeq, index);
    const ctx = { signal, runId: deps.runId, idempotencyKey: key, step: batch.step };
    const tool = deps.toolOf(call.name);
    const effect = tool?.effect ?? 'unsafe';
    if (started && effect === 'unsafe') {
      outcomes.push(await record(deps, batch.step, call, unknownOutcome(call), 'unknown'));
      continue;
    }
    if (started && effect === 'reconcilable' && tool?.reconcile) {
      const answer = await tool.reconcile(key, { signal, runId: deps.runId });
      if (answer.done) {
        const output = normalizeOutput(answer.output ?? `tool "${call.name}" had completed before the run was interrupted`);
        const outcome: DispatchOutcome = {
          result: { role: 'tool', toolCallId: call.id, toolName: call.name, content: output.content, isError: output.isError },
          terminate: output.terminate && !output.isError,
          arguments: call.arguments,
          durationMs: 0,
        };
        outcomes.push(await record(deps, batch.step, call, outcome, 'reconciled'));
        continue;
      }
    }
    // A call that started and runs again: a person is asked first when the policy wants
    // one (its question is asked after its tool_started, so it may never have been asked).
    if (!decision && started && !failedCheck(call)) needsPerson = (await verdictOf(deps, call)).decision === 'ask';
    // An approved call runs only with the arguments that were approved.
    let confirm: Confirm | undefined = decision ? approvedCheck(batch.approvalsRequested.get(call.id)) : undefined;
    if (needsPerson) {
      if (deps.hooks.onConfirm) confirm = personCheck(deps, batch.step, call);
      else if (deps.log) {
        // Validated and patched (nothing runs): the arguments a person approves are the ones that will run.
        const prepared = await prepare(deps, call, ctx);
        if (!prepared.ok) {
          outcomes.push(await record(deps, batch.step, call, prepared.outcome));
          continue;
        }
        requestApproval(deps, batch.step, call, prepared.args);
        await deps.log.flush();
        return PAUSED;
      } else {
        outcomes.push(await record(deps, batch.step, call, deniedOutcome(call, NO_ONE_TO_ASK)));
        continue;
      }
    }
    // Never started, or safe to run again: run it now, with the key it always had.
    deps.emit(startedEvent(batch.step, call, key));
    await deps.log?.flush(effect === 'unsafe' ? 'full' : 'normal');
    crashPoint('before-tool-execute');
    if (confirm === undefined && deps.approvalPolicy && failedCheck(call))
      confirm = () => ({ allow: false, reason: 'its arguments could not be checked before the permission decision' });
    // The answers a person gave to what its tool asked before: asked again, it answers with them.
    handAnswers(deps, call, batch.answers.get(call.id));
    let dispatched: DispatchOutcome;
    try {
      dispatched = await deps.dispatch(call, contextOf(call, ctx), confirm);
    } finally {
      dropCallAnswers(deps.runId, call.id);
    }
    // Its sub-agent waits for a person: the batch waits with it (the calls after it run on the next resume).
    if (takeChildPaused(deps.runId, call.id)) {
      await deps.log?.flush();
      return PAUSED;
    }
    // Its tool was asked something new that only a person can answer: the batch waits again.
    const outcome = answerOrWait(deps, batch.step, call, dispatched);
    if (outcome === WAITS_FOR_ANSWER) {
      await deps.log?.flush();
      return PAUSED;
    }
    outcomes.push(await record(deps, batch.step, call, outcome));
  }
  return outcomes;
}

async function record(
  deps: LoopDeps,
  step: number,
  call: ToolCall,
  outcome: DispatchOutcome,
  kind?: 'unknown' | 'reconciled',
): Promise<DispatchOutcome> {
  emitFinished(deps, step, call, outcome, kind);
  await deps.log?.flush();
  return outcome;
}

function unknownOutcome(call: ToolCall): DispatchOutcome {
  const text =
    `tool "${call.name}" was running when the process stopped, and it cannot be run twice safely: ` +
    'it may or may not have taken effect. Check its effect before calling it again.';
  return errorOutcome(call, 'unknown_outcome', text);
}

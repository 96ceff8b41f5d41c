// The run viewer in Debian's Chromium (playwright-core, never a browser download): sign-in
// without the token in a URL, the run list and a run page (screenshots kept in
// test-artifacts/), a live run's timeline growing, steering, a paused call approved from
// the page, a phone-sized screen, a sub-agent's run nested (collapsible) under its parent's
// call, live and from the log, and no request leaving the server.
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { TOKEN, agentFile, call, startInProcess, until, type InProcess } from './helpers.js';
import { toolLoop } from './scripts.js';

const CHROMIUM = '/usr/bin/chromium';
const artifacts = fileURLToPath(new URL('../../test-artifacts/', import.meta.url));
let context: BrowserContext;
let profile: string;
let env: InProcess | undefined;

beforeAll(async () => {
  expect(
    existsSync(CHROMIUM),
    `${CHROMIUM} is missing: apt-get install -y --no-install-recommends chromium fonts-liberation (.ci/run does)`,
  ).toBe(true);
  await mkdir(artifacts, { recursive: true });
  profile = await mkdtemp(join(tmpdir(), 'rein-chromium-'));
  // A fresh profile (its --user-data-dir) per run; no network beyond what the page asks of the server.
  context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
    viewport: { width: 1200, height: 900 },
  });
});

afterAll(async () => {
  await context?.close();
  if (profile) await rm(profile, { recursive: true, force: true });
});

afterEach(async () => {
  for (const page of context.pages()) await page.close();
  await context.clearCookies();
  await env?.close();
  env = undefined;
});

/** A page that records every URL it requests. */
async function openPage(): Promise<{ page: Page; requests: string[] }> {
  const page = await context.newPage();
  page.setDefaultTimeout(15_000);
  const requests: string[] = [];
  page.on('request', (r) => requests.push(r.url()));
  return { page, requests };
}

async function signIn(page: Page, url: string): Promise<void> {
  const response = await page.goto(`${url}/`);
  expect(response?.status()).toBe(401);
  await page.fill('#token', TOKEN);
  await Promise.all([page.waitForURL(`${url}/`), page.click('button[type=submit]')]);
  await page.waitForSelector('h1:text("Runs")');
}

describe('the run viewer', { timeout: 90_000 }, () => {
  it('signs in with the token in a form (a session cookie, HttpOnly, SameSite=Strict; the token in no URL), lists runs, draws a run; works on a phone-sized screen, offline', async () => {
    env = await startInProcess({ agents: { calc: agentFile('calc', { tools: '[calculate]' }) }, script: toolLoop({ calls: 2 }) });
    const made = await call(env.url, '/v1/runs', { body: { agent: 'calc', input: 'add numbers twice' } });
    await until(
      async () => ((await call(env!.url, `/v1/runs/${made.body.runId}`)).body.record.status === 'done' ? true : undefined),
      'the run to finish',
    );
    const { page, requests } = await openPage();
    const wrong = await page.goto(`${env.url}/`);
    expect(wrong?.status()).toBe(401);
    await page.fill('#token', 'not-the-token');
    await page.click('button[type=submit]');
    await page.waitForSelector('.error');
    expect(await page.textContent('.error')).toMatch(/not the server's token/);
    await signIn(page, env.url);
    const cookies = await context.cookies(env.url);
    expect(cookies).toEqual([expect.objectContaining({ name: 'rein_session', httpOnly: true, sameSite: 'Strict' })]);
    expect(cookies[0]!.value).not.toContain(TOKEN);
    await page.waitForSelector(`tr[data-run="${made.body.runId}"]`);
    const row = await page.textContent(`tr[data-run="${made.body.runId}"]`);
    expect(row).toMatch(/done/);
    expect(row).toMatch(/calc/);
    expect(row).toMatch(/add numbers twice/);
    expect(row).toMatch(/openai\/scripted/);
    await page.screenshot({ path: join(artifacts, 'viewer-list.png'), fullPage: true });

    await page.selectOption('#status-filter', 'failed');
    await page.waitForSelector('.note:text("No runs yet")');
    await page.selectOption('#status-filter', '');
    await page.click(`tr[data-run="${made.body.runId}"] a`);
    await page.waitForSelector('li.finish.done');
    expect(await page.locator('li.tool.ok').count()).toBe(2);
    expect(await page.locator('li.request').count()).toBe(3);
    expect(await page.textContent('#run-status')).toBe('done');
    await page.screenshot({ path: join(artifacts, 'viewer-run.png'), fullPage: true });

    // A phone-sized screen: nothing wider than the screen.
    await page.setViewportSize({ width: 390, height: 844 });
    await page.reload();
    await page.waitForSelector('li.finish.done');
    expect(await page.evaluate('document.documentElement.scrollWidth <= window.innerWidth')).toBe(true);
    await page.screenshot({ path: join(artifacts, 'viewer-run-phone.png'), fullPage: true });
    await page.goto(`${env.url}/#/`);
    await page.waitForSelector(`tr[data-run="${made.body.runId}"]`);
    expect(await page.evaluate('document.documentElement.scrollWidth <= window.innerWidth')).toBe(true);
    await page.screenshot({ path: join(artifacts, 'viewer-list-phone.png'), fullPage: true });

    // Offline: every request went to the server itself, and no URL held the token.
    expect(requests.filter((u) => !u.startsWith(env!.url))).toEqual([]);
    expect(requests.filter((u) => u.includes(TOKEN))).toEqual([]);
    expect(page.url()).not.toContain(TOKEN);
    expect((await readFile(join(artifacts, 'viewer-run.png'))).length).toBeGreaterThan(1000);
  });

  it("a live run's timeline grows while it works, and a steer typed on the page reaches the model", async () => {
    const releases: Array<() => void> = [];
    const script = toolLoop({ calls: 3 });
    env = await startInProcess({
      agents: { calc: agentFile('calc', { tools: '[calculate]' }) },
      script: async (request, info) => {
        // Each answer waits until the test lets it go.
        await new Promise<void>((r) => releases.push(r));
        return script(request, info);
      },
    });
    const made = await call(env.url, '/v1/runs', { body: { agent: 'calc', input: 'three steps, slowly' } });
    const { page } = await openPage();
    await signIn(page, env.url);
    await page.goto(`${env.url}/#/runs/${made.body.runId}`);
    await page.waitForSelector('li.start');
    await page.waitForSelector('p.working:not([hidden])');
    expect(await page.locator('li.tool').count()).toBe(0);
    const release = async (n: number) => {
      await until(async () => releases.length >= n, `model request ${n}`);
      releases[n - 1]!();
    };
    await release(1);
    await page.waitForSelector('li.tool.ok >> nth=0');
    expect(await page.locator('li.tool').count()).toBe(1);
    await page.fill('#steer-text', 'keep the numbers small');
    await page.click('form.steer button[type=submit]');
    await page.waitForSelector('.steer .note:text("Queued")');
    await release(2);
    await page.waitForSelector('li.tool.ok >> nth=1');
    expect(await page.locator('li.tool').count()).toBe(2);
    expect(await page.textContent('#run-status')).toBe('running');
    await release(3);
    // The steer entered before the second or third model call (whichever came after it was queued).
    await page.waitForSelector('li.injected');
    expect(await page.textContent('li.injected')).toMatch(/keep the numbers small/);
    await release(4);
    await page.waitForSelector('li.finish.done');
    expect(await page.locator('li.tool.ok').count()).toBe(3);
    expect(await page.textContent('#run-status')).toBe('done');
    expect(env.model.received.at(-1)?.request?.messages.some((m) => m.role === 'user' && m.content === 'keep the numbers small')).toBe(
      true,
    );
    await page.screenshot({ path: join(artifacts, 'viewer-live.png'), fullPage: true });
  });

  it('a paused call is approved from the page and the run finishes', async () => {
    env = await startInProcess({
      agents: { writer: agentFile('writer', { tools: '[write_file]' }) },
      script: toolLoop({ tool: 'write_file', calls: 1, args: () => ({ path: 'approved.txt', content: 'from the viewer\n' }) }),
    });
    const made = await call(env.url, '/v1/runs', { body: { agent: 'writer', input: 'write approved.txt' } });
    await until(
      async () => ((await call(env!.url, `/v1/runs/${made.body.runId}`)).body.record.status === 'paused' ? true : undefined),
      'the run to pause',
    );
    const { page } = await openPage();
    await signIn(page, env.url);
    await page.goto(`${env.url}/#/runs/${made.body.runId}`);
    await page.waitForSelector('.approvals article.pending');
    expect(await page.textContent('.approvals')).toMatch(/write_file/);
    expect(await page.textContent('.approvals')).toMatch(/approved\.txt/);
    expect(await page.textContent('#run-status')).toBe('paused');
    await page.screenshot({ path: join(artifacts, 'viewer-approval.png'), fullPage: true });
    await page.click('.approvals button.approve');
    await page.waitForSelector('li.finish.done');
    await until(async () => ((await page.textContent('#run-status')) === 'done' ? true : undefined), 'the page to show done');
    expect(await readFile(join(env.project, 'approved.txt'), 'utf8')).toBe('from the viewer\n');
    expect(await page.locator('li.approval.approved').count()).toBe(1);
  });
  it("a sub-agent's run is nested under the parent's call, live and from the log, and collapses", async () => {
    // The child's second model call waits until the test lets it go: the page must show the child working.
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    env = await startInProcess({
      agents: { lead: agentFile('lead', { tools: '[calculate]', agents: '[helper]' }, 'You lead.') },
      script: async (request) => {
        const tools = request.messages.filter((m) => m.role === 'tool');
        if (request.system?.includes('You lead.')) {
          if (tools.length === 0) return { toolCalls: [{ name: 'helper', arguments: { task: 'add two numbers' }, id: 'call_lead_1' }] };
          return { text: `lead: ${tools[0]?.role === 'tool' ? tools[0].content : ''}` };
        }
        if (tools.length === 0) return { toolCalls: [{ name: 'calculate', arguments: { expression: '20 + 22' }, id: 'call_helper_1' }] };
        await held;
        return { text: 'the helper says 42' };
      },
    });
    await writeFile(
      join(env.project, '.rein/agents/helper.md'),
      agentFile('helper', { tools: '[calculate]', baseUrl: env.model.url }, 'You help.'),
    );
    const made = await call(env.url, '/v1/runs', { body: { agent: 'lead', input: 'delegate the sum' } });
    const runId = made.body.runId as string;
    const { page, requests } = await openPage();
    await signIn(page, env.url);
    await page.goto(`${env.url}/#/runs/${runId}`);

    // Live: the child appears under the lead's call while it works, its own calculate call inside it.
    const child = page.locator('li.tool[data-call="call_lead_1"] details.child-run');
    await child.waitFor();
    await page.waitForSelector('li.tool[data-call="call_lead_1"] details.child-run li.tool.ok[data-call="call_helper_1"]');
    expect(await child.getAttribute('data-status')).toBe('running');
    expect(await child.getAttribute('open')).not.toBeNull();
    expect(await child.locator(':scope > summary').textContent()).toMatch(/sub-agent helper/);
    expect(await page.locator('li.finish').count()).toBe(0);
    // The child's tool is the child's, not the lead's: the lead's own timeline has only its sub-agent call.
    expect(await page.locator('#main > ol.timeline > li.turn > ol.turn-body > li.tool').count()).toBe(1);
    await page.screenshot({ path: join(artifacts, 'viewer-child-live.png'), fullPage: true });
    release();
    await page.waitForSelector('details.child-run[data-status="done"]');
    await page.waitForSelector('#main > ol.timeline > li.finish.done');
    expect(await child.locator(':scope > summary').textContent()).toMatch(/done.*2 steps/);
    expect(await child.locator('li.finish.done').count()).toBe(1);
    expect(await child.locator('li.answer').textContent()).toMatch(/the helper says 42/);
    // Collapsible: the summary line folds the child's timeline away.
    await child.locator(':scope > summary').click();
    expect(await child.getAttribute('open')).toBeNull();
    expect(await child.locator('ol.timeline').isVisible()).toBe(false);

    // From the log: the same nesting, the ended child folded to its line until opened.
    await page.reload();
    await page.waitForSelector('#main > ol.timeline > li.finish.done');
    const again = page.locator('li.tool[data-call="call_lead_1"] details.child-run');
    await page.waitForSelector('li.tool[data-call="call_lead_1"] details.child-run[data-status="done"]');
    expect(await again.getAttribute('open')).toBeNull();
    expect(await again.locator(':scope > summary').textContent()).toMatch(/sub-agent helper.*done.*2 steps/);
    await again.locator(':scope > summary').click();
    await again.locator('li.tool.ok[data-call="call_helper_1"]').waitFor();
    expect(await again.locator('li.tool.ok').count()).toBe(1);
    await page.screenshot({ path: join(artifacts, 'viewer-child-log.png'), fullPage: true });

    // The child's own page links back to its parent; the run list marks it as a sub-agent's run.
    const childId = await again.getAttribute('data-run');
    expect(childId).toMatch(new RegExp(`^${runId.replaceAll('.', '\\.')}\\.`));
    await again.locator('a.child-link').click();
    await page.waitForSelector('a.parent-link');
    expect(await page.getAttribute('a.parent-link', 'href')).toBe(`#/runs/${encodeURIComponent(runId)}`);
    await page.goto(`${env.url}/#/`);
    await page.waitForSelector(`tr[data-run="${childId}"] .sub-mark`);
    expect(requests.filter((u) => !u.startsWith(env!.url))).toEqual([]);
  });
  it("a call a sub-agent waits on is listed on the root's page, approved there, and the tree finishes", async () => {
    env = await startInProcess({
      agents: { lead: agentFile('lead', { tools: '[calculate]', agents: '[writer]' }, 'You lead.') },
      script: (request) => {
        const tools = request.messages.filter((m) => m.role === 'tool');
        if (request.system?.includes('You lead.')) {
          if (tools.length === 0) return { toolCalls: [{ name: 'writer', arguments: { task: 'write the note' }, id: 'call_lead_1' }] };
          return { text: `lead: ${tools[0]?.role === 'tool' ? tools[0].content : ''}` };
        }
        if (tools.length === 0)
          return {
            toolCalls: [{ name: 'write_file', arguments: { path: 'child-note.txt', content: 'from the child\n' }, id: 'call_w_1' }],
          };
        return { text: 'wrote the note' };
      },
    });
    await writeFile(join(env.project, '.rein/agents/writer.md'), agentFile('writer', { tools: '[write_file]' }, 'You write.'));
    const made = await call(env.url, '/v1/runs', { body: { agent: 'lead', input: 'take a note' } });
    const runId = made.body.runId as string;
    const paused = await until(async () => {
      const { body } = await call(env!.url, `/v1/runs/${runId}`);
      return body.record.status === 'paused' && !body.record.live ? body : undefined;
    }, 'the tree to pause');
    const childId = paused.children[0].id as string;
    expect(paused.pendingApprovals).toEqual([
      expect.objectContaining({ toolCallId: 'call_w_1', name: 'write_file', runId: childId, depth: 1, argumentsHash: expect.any(String) }),
    ]);
    // The child's own detail leaves its call to the root.
    expect((await call(env.url, `/v1/runs/${childId}`)).body.pendingApprovals).toEqual([]);

    const { page } = await openPage();
    await signIn(page, env.url);
    await page.goto(`${env.url}/#/runs/${runId}`);
    await page.waitForSelector(`.approvals article.pending[data-run="${childId}"]`);
    expect(await page.textContent('.approvals')).toMatch(/write_file[\s\S]*In sub-agent run/);
    await page.waitForSelector('details.child-run[data-status="paused"]');
    await page.click('.approvals button.approve');
    await page.waitForSelector('#main > ol.timeline > li.finish.done');
    await page.waitForSelector('details.child-run[data-status="done"]');
    const child = page.locator('li.tool[data-call="call_lead_1"] details.child-run');
    await child.evaluate((d) => d.setAttribute('open', ''));
    await child.locator('li.approval.approved').waitFor();
    expect(await child.locator('li.tool.ok[data-call="call_w_1"]').count()).toBe(1);
    expect(await readFile(join(env.project, 'child-note.txt'), 'utf8')).toBe('from the child\n');
    await page.screenshot({ path: join(artifacts, 'viewer-child-approval.png'), fullPage: true });
  });
  it('four children at once: three follow their streams live, the fourth waits for a slot (a browser has six connections to a server), then all finish', async () => {
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    env = await startInProcess({
      agents: { lead: agentFile('lead', { tools: '[calculate]', agents: '[helper]' }, 'You lead.') },
      script: async (request) => {
        const tools = request.messages.filter((m) => m.role === 'tool');
        if (request.system?.includes('You lead.')) {
          if (tools.length === 0)
            return { toolCalls: [1, 2, 3, 4].map((n) => ({ name: 'helper', arguments: { task: `part ${n}` }, id: `call_lead_${n}` })) };
          return { text: 'lead: all four done' };
        }
        await held;
        return { text: 'part done' };
      },
    });
    await writeFile(join(env.project, '.rein/agents/helper.md'), agentFile('helper', { tools: '[calculate]' }, 'You help.'));
    const made = await call(env.url, '/v1/runs', { body: { agent: 'lead', input: 'four parts' } });
    const { page } = await openPage();
    await signIn(page, env.url);
    await page.goto(`${env.url}/#/runs/${made.body.runId}`);
    await until(async () => (await page.locator('details.child-run').count()) === 4, 'four children on the page');
    await until(async () => (await page.locator('details.child-run li.start').count()) === 3, 'three children followed');
    expect(await page.locator('details.child-run .badge:text-is("waiting")').count()).toBe(1);
    release();
    await page.waitForSelector('#main > ol.timeline > li.finish.done');
    await until(async () => (await page.locator('details.child-run[data-status="done"]').count()) === 4, 'four children done');
    expect(await page.locator('details.child-run li.finish.done').count()).toBe(4);
  });
});

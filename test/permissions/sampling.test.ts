// The permission decision on an MCP server's sampling request: `mcp_sampling` rules with an
// optional glob on the server's name, precedence as for tools, `ask` by default.
import { describe, expect, it } from 'vitest';
import { createPermissionPolicy } from '../../src/permissions/policy.js';
import { decideSampling } from '../../src/permissions/sampling.js';

describe('decideSampling', () => {
  it('asks by default, and tool rules (even `*`) do not cover sampling', () => {
    const policy = createPermissionPolicy({ allow: ['*', 'docs__*'] });
    expect(decideSampling(policy, 'docs')).toEqual({
      decision: 'ask',
      rule: 'default: sampling asks',
      reason: 'MCP server "docs"\'s sampling requests need a person\'s approval unless a rule says otherwise',
    });
  });

  it('matches the server by name or glob, case-insensitively', () => {
    const policy = createPermissionPolicy({ allow: ['mcp_sampling(docs)', 'MCP_SAMPLING(git*)'] });
    expect(decideSampling(policy, 'docs')).toMatchObject({ decision: 'allow', rule: 'allow mcp_sampling(docs)' });
    expect(decideSampling(policy, 'github')).toMatchObject({ decision: 'allow', rule: 'allow MCP_SAMPLING(git*)' });
    expect(decideSampling(policy, 'web').decision).toBe('ask');
  });

  it('deny outranks everything, yolo allows what no deny refuses, ask outranks allow, a session allow outranks ask', () => {
    const policy = createPermissionPolicy({ deny: ['mcp_sampling(web)'], ask: ['mcp_sampling(docs)'], allow: ['mcp_sampling'] });
    expect(decideSampling(policy, 'web')).toMatchObject({ decision: 'deny', rule: 'deny mcp_sampling(web)' });
    expect(decideSampling(policy, 'docs')).toMatchObject({ decision: 'ask', rule: 'ask mcp_sampling(docs)' });
    expect(decideSampling(policy, 'other')).toMatchObject({ decision: 'allow', rule: 'allow mcp_sampling' });
    policy.allowForSession('mcp_sampling(docs)');
    expect(decideSampling(policy, 'docs')).toMatchObject({ decision: 'allow', rule: 'session: allow mcp_sampling(docs)' });
    policy.denyForSession('mcp_sampling(other)');
    expect(decideSampling(policy, 'other')).toMatchObject({ decision: 'deny', rule: 'session: deny mcp_sampling(other)' });
    const yolo = createPermissionPolicy({ mode: 'yolo', deny: ['mcp_sampling(web)'] });
    expect(decideSampling(yolo, 'docs')).toMatchObject({ decision: 'allow', rule: 'mode yolo: allow all' });
    expect(decideSampling(yolo, 'web').decision).toBe('deny');
  });
});

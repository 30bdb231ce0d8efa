/**
 * The demo's scripted agent session: each step is a change to the throwaway repo (if any) and the
 * hook payload Claude Code would send for it, in the documented shapes. Pure: builds data only;
 * the demo command applies the edits and plays the payloads through the real hooks.
 */

export interface DemoStep {
  /** What the step shows, printed as the demo plays it. */
  say: string;
  event: 'SessionStart' | 'UserPromptSubmit' | 'PostToolUse' | 'PostToolUseFailure' | 'Stop' | 'SessionEnd';
  payload: Record<string, unknown>;
  /** Files to write (repo-relative path → content) before the hook fires. */
  writes?: Record<string, string>;
}

/** The agent's self-report, as the last block of its final answer (a `reflection` fence). */
export const DEMO_SELF_REPORT = {
  confidence: 0.7,
  most_likely_wrong: {
    surface: 'auth',
    description: 'refreshIfNeeded keeps the old token object when it is not expired; callers that mutate it share state',
  },
  known_not_in_diff: 'the refresh endpoint on the server still issues one-hour tokens; nothing here changes that',
};

export const DEMO_SESSION_ID = '5d1c0e7a-2b9f-4c3e-8a61-7f0d9e2b4c18';

export const DEMO_BASE_FILES: Record<string, string> = {
  'README.md': '# acme-app\n\nA small service with a login flow.\n',
  'package.json': '{\n  "name": "acme-app",\n  "version": "1.0.0",\n  "type": "module",\n  "scripts": { "test": "node --test" }\n}\n',
  'src/auth/session.ts': 'export function isExpired(issuedAt: number, now: number): boolean {\n  return now - issuedAt > 3600_000;\n}\n',
  'src/app.ts': "import { isExpired } from './auth/session.js';\n\nexport const app = { isExpired };\n",
};

const TOKEN_TS =
  "import { isExpired } from './session.js';\n\n" +
  'export function refreshIfNeeded(token: { issuedAt: number }, now: number): { issuedAt: number } {\n' +
  '  return isExpired(token.issuedAt, now) ? { issuedAt: now } : token;\n}\n';
const TOKEN_TEST =
  "import { test } from 'node:test';\nimport assert from 'node:assert';\n\n" + "test('refreshes an expired token', () => {\n  assert.ok(true);\n});\n";

export function demoSession(repo: string, transcript: string): DemoStep[] {
  const common = { session_id: DEMO_SESSION_ID, transcript_path: transcript, cwd: repo };
  const tool = (n: number) => `toolu_01DemoStep${String(n).padStart(10, '0')}`;
  return [
    {
      say: 'session starts',
      event: 'SessionStart',
      payload: { ...common, hook_event_name: 'SessionStart', source: 'startup', model: 'claude-sonnet-4-5' },
    },
    {
      say: 'the user asks for token refresh',
      event: 'UserPromptSubmit',
      payload: {
        ...common,
        permission_mode: 'acceptEdits',
        hook_event_name: 'UserPromptSubmit',
        prompt:
          'Add token refresh to the auth flow and cover it with a test. The staging key is sk-ant-api03-DEMOdemoDEMOdemoDEMOdemoDEMOdemo0000 if you need it.',
      },
    },
    {
      say: 'the agent writes src/auth/token.ts (a new auth file)',
      event: 'PostToolUse',
      writes: { 'src/auth/token.ts': TOKEN_TS },
      payload: {
        ...common,
        permission_mode: 'acceptEdits',
        hook_event_name: 'PostToolUse',
        tool_name: 'Write',
        tool_input: { file_path: `${repo}/src/auth/token.ts`, content: TOKEN_TS },
        tool_response: { type: 'create', filePath: `${repo}/src/auth/token.ts`, content: TOKEN_TS, structuredPatch: [], originalFile: null },
        tool_use_id: tool(1),
        duration_ms: 41,
      },
    },
    {
      say: 'the agent edits README.md',
      event: 'PostToolUse',
      writes: { 'README.md': `${DEMO_BASE_FILES['README.md']}\nTokens are refreshed when they expire.\n` },
      payload: {
        ...common,
        permission_mode: 'acceptEdits',
        hook_event_name: 'PostToolUse',
        tool_name: 'Edit',
        tool_input: { file_path: `${repo}/README.md`, old_string: 'login flow.', new_string: 'login flow.\n\nTokens are refreshed when they expire.' },
        tool_response: {
          filePath: `${repo}/README.md`,
          oldString: 'login flow.',
          newString: 'login flow.\n\nTokens are refreshed when they expire.',
          structuredPatch: [],
          userModified: false,
          replaceAll: false,
        },
        tool_use_id: tool(2),
        duration_ms: 18,
      },
    },
    {
      say: 'the agent adds a test',
      event: 'PostToolUse',
      writes: { 'test/token.test.ts': TOKEN_TEST },
      payload: {
        ...common,
        permission_mode: 'acceptEdits',
        hook_event_name: 'PostToolUse',
        tool_name: 'Write',
        tool_input: { file_path: `${repo}/test/token.test.ts`, content: TOKEN_TEST },
        tool_response: { type: 'create', filePath: `${repo}/test/token.test.ts`, content: TOKEN_TEST, structuredPatch: [], originalFile: null },
        tool_use_id: tool(3),
        duration_ms: 22,
      },
    },
    {
      say: 'the first test run fails',
      event: 'PostToolUseFailure',
      payload: {
        ...common,
        permission_mode: 'acceptEdits',
        hook_event_name: 'PostToolUseFailure',
        tool_name: 'Bash',
        tool_input: { command: 'npm test', description: 'Run the tests' },
        tool_use_id: tool(4),
        error: 'Exit code 1\nnot ok 1 - refreshes an expired token\n  expected issuedAt to change',
        duration_ms: 2140,
      },
    },
    {
      say: 'the second test run passes',
      event: 'PostToolUse',
      payload: {
        ...common,
        permission_mode: 'acceptEdits',
        hook_event_name: 'PostToolUse',
        tool_name: 'Bash',
        tool_input: { command: 'npm test', description: 'Run the tests' },
        tool_response: { stdout: 'ok 1 - refreshes an expired token\n# pass 1\n# fail 0', stderr: '', interrupted: false, isImage: false },
        tool_use_id: tool(5),
        duration_ms: 1980,
      },
    },
    {
      say: 'the turn ends; the final answer carries the self-report',
      event: 'Stop',
      payload: {
        ...common,
        permission_mode: 'acceptEdits',
        hook_event_name: 'Stop',
        stop_hook_active: false,
        last_assistant_message:
          'Token refresh is in src/auth/token.ts with a test; npm test passes.\n\n```reflection\n' + `${JSON.stringify(DEMO_SELF_REPORT)}\n\`\`\`\n`,
      },
    },
  ];
}

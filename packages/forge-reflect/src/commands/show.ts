import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { UserError } from '../errors.js';
import { printable } from '../output.js';
import { redactText } from '../log/redact.js';
import { recordFromText } from '../report/sidecar-record.js';
import { resolveStateDir } from '../state-dir.js';
import { reportDirs } from './report.js';
import { isSidecarName } from '../sidecar/files.js';

/** A path as given, or the one sidecar in the report folders whose name starts with the id. */
export function resolveSidecar(ref: string, dirs: readonly string[]): string {
  if (existsSync(ref)) return ref;
  const matches: string[] = [];
  for (const dir of dirs) {
    let names: string[] = [];
    try {
      names = readdirSync(dir);
    } catch {
      continue;
    }
    for (const name of names) if (isSidecarName(name) && name.startsWith(ref)) matches.push(join(dir, name));
  }
  if (matches.length === 1) return matches[0] as string;
  if (matches.length === 0)
    throw new UserError(`no sidecar ${JSON.stringify(ref)}: give a file path or the start of a sidecar's name (see forge-reflect report)`);
  throw new UserError(`${matches.length} sidecars start with ${JSON.stringify(ref)}; give more of the name`);
}

export async function run(args: Record<string, unknown>): Promise<number> {
  const ref = String(args.sidecar);
  const dirs = reportDirs(args.dir as string[] | undefined, resolveStateDir());
  const path = resolveSidecar(ref, dirs);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new UserError(`cannot read ${path} (${(error as NodeJS.ErrnoException).code ?? String(error)})`);
  }
  if (args.json) {
    process.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
    return 0;
  }
  const r = recordFromText(path, text);
  if (!r.valid) {
    process.stdout.write(`${printable(path)}\n  invalid: ${printable(r.error ?? '')}\n`);
    return 1;
  }
  const s = JSON.parse(text) as import('@forge-reflect/reflection-types').ReflectionV1Dto;
  const lines = [
    path,
    `  task          ${s.task_ref}   (attempt ${s.provenance.reflection_attempt}, ${s.provenance.reflection_mode})`,
    `  when          ${s.timestamp}`,
    `  agent         ${s.agent}   session ${s.session_id}   repo ${s.repo}`,
    `  risk floor    ${s.risk.surface} (score ${s.risk.score}) ${s.risk.needs_review ? 'NEEDS REVIEW' : 'no review required'}`,
    `                ${s.risk.reason}`,
    `  confidence    ${s.confidence === null ? 'not reported' : s.confidence}`,
    `  likely wrong  ${s.most_likely_wrong ? `[${s.most_likely_wrong.surface}] ${s.most_likely_wrong.description}` : 'not reported'}`,
    `  not in diff   ${s.known_not_in_diff ?? 'not reported'}`,
    `  degraded      ${s.provenance.degraded ? 'yes (self-report missing or invalid, or git unavailable)' : 'no'}`,
    `  files (${s.files_changed.length})`,
    ...s.files_changed.map((f) => `    ${f}`),
  ];
  // Redacted as the event log is: a hand-made or older sidecar may hold what the agent pasted.
  process.stdout.write(`${lines.map((line) => printable(redactText(line))).join('\n')}\n`);
  return 0;
}

/**
 * `forge-reflect doctor [--repo DIR] [--repair] [--json]`: one line per check, ✓ / ! / ✗, the fix
 * under every problem; exit 1 when something is broken. `--repair` moves a corrupt event log
 * aside (events.db.corrupt-<time>) and starts a fresh one; sidecars and the spool are not touched,
 * so the next drain refills the log with whatever is still spooled.
 */
import { existsSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import {
  checkEventLog,
  checkHooks,
  checkLastSidecar,
  checkMode,
  checkNode,
  checkRegistrations,
  checkSpool,
  checkStateDir,
  checkTools,
  type DoctorContext,
} from '../doctor/checks.js';
import type { Check } from '../runtimes/module.js';
import { checkCli, checkPlugins } from '../doctor/plugins.js';
import { openEventLog } from '../log/event-log.js';
import { resolveRepo } from '../install/kit.js';
import { painter, useColour, writeJson } from '../output.js';
import { eventsDbPathOf, resolveStateDir } from '../state-dir.js';
import { reportDirs } from './report.js';

function repoOrNull(flag: unknown): string | null {
  try {
    return resolveRepo(flag);
  } catch (error) {
    if (flag !== undefined) throw error;
    return null;
  }
}

export function repairEventLog(stateDir: string, now = new Date()): string | null {
  const path = eventsDbPathOf(stateDir);
  if (!existsSync(path)) return null;
  const aside = `${path}.corrupt-${now.toISOString().replace(/[:.]/g, '')}`;
  renameSync(path, aside);
  for (const suffix of ['-wal', '-shm']) if (existsSync(path + suffix)) renameSync(path + suffix, aside + suffix);
  openEventLog(stateDir).close();
  return aside;
}

export async function run(args: Record<string, unknown>): Promise<number> {
  const repo = repoOrNull(args.repo);
  const stateDir = args.repo !== undefined && !process.env.FORGE_DIR ? join(repo as string, '.forge') : resolveStateDir();
  const ctx: DoctorContext = { repo, stateDir, sidecarDir: reportDirs(undefined, stateDir)[0] as string, env: process.env, now: Date.now() };
  // The kit installed as a runtime's plugin or extension needs no vendored hooks nor settings
  // registration: then their absence is no failure, and each plugin says whether it records.
  const plugins = repo === null ? [] : checkPlugins(repo, process.env);
  let registered = [checkHooks(ctx), ...checkRegistrations(ctx)];
  if (plugins.length > 0) {
    registered = registered.filter(
      (c) => !(c.status === 'fail' && (c.name === 'hook registrations' || (c.name === 'hooks vendored' && /is missing/.test(c.detail)))),
    );
  }
  const checks: Check[] = [
    checkNode(),
    checkTools(),
    ...registered,
    ...plugins,
    checkCli(repo, process.env),
    checkMode(ctx),
    checkStateDir(ctx),
    checkSpool(ctx),
    checkLastSidecar(ctx),
  ];
  let log = await checkEventLog(ctx);
  let repaired: string | null = null;
  if (args.repair && log.status === 'fail') {
    repaired = repairEventLog(stateDir);
    log = await checkEventLog(ctx);
    if (repaired) log = { ...log, detail: `${log.detail} (the broken file was moved to ${repaired})` };
  }
  checks.push(log);
  const broken = checks.filter((c) => c.status === 'fail').length;
  if (args.json) {
    writeJson({ ok: broken === 0, repaired, checks });
  } else {
    const paint = painter(useColour());
    for (const c of checks) {
      const mark = c.status === 'ok' ? paint.ok('✓') : c.status === 'warn' ? paint.dim('!') : paint.bad('✗');
      process.stdout.write(`${mark} ${c.name.padEnd(20)} ${c.detail}\n`);
      if (c.fix) process.stdout.write(`  ${' '.repeat(20)} fix: ${c.fix}\n`);
    }
    process.stdout.write(broken === 0 ? 'everything needed works\n' : `${broken} problem(s) to fix\n`);
  }
  return broken === 0 ? 0 : 1;
}

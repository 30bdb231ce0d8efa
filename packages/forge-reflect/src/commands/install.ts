/**
 * `forge-reflect install [--runtime <runtime>|all]…`: vendors the hooks into a repository (once, in
 * .claude/hooks/forge-reflect/, whichever runtimes) and merges each runtime's native registration,
 * generated from runtimes/hook-map.ts, into that runtime's own file (its module in runtimes/ names
 * it). Everything is checked and planned first; only then, and not with --dry-run, is anything
 * written. A second run finds nothing to do and writes nothing. What install created is recorded in
 * a manifest so `uninstall` can take exactly that out again.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { UserError } from '../errors.js';
import { ensureStateDir } from '../state-dir.js';
import { dirOf, ensureDirs, lstatOrNull, missingDirs, readOrNull, refuseSymlinks, sha256, unlinkQuiet } from '../install/files.js';
import { writeAtomic } from '../atomic-write.js';
import {
  backupPathOf,
  claudeMdSnippet,
  type KitFile,
  kitFiles,
  loadRegistration,
  readSettingsFile,
  resolveRepo,
  type SettingsFile,
  SLASH_COMMAND,
  slashCommandSource,
  STATE_DIR,
  VENDORED_DIR,
} from '../install/kit.js';
import { emptyManifest, MANIFEST_NAME, readManifestFile, serializeManifest, type InstallManifest, type SettingsEntry } from '../install/manifest.js';
import { applyPlan, emptyPlan, type Plan } from '../install/plan.js';
import { changeCount, changesText, dryRunSummary, printReport, type Report } from '../install/report.js';
import { dropStaleHandlers, mergeRegistration, registrationCommands, serializeJson } from '../install/settings-merge.js';
import { planHookFiles } from '../install/hook-files.js';
import { parseRuntimes, runtimeModule, type RuntimeId } from '../runtimes/index.js';
import type { Registration } from '../runtimes/module.js';
import { findPlugins } from '../doctor/plugins.js';

const LINK_FIX = 'replace the link with a real folder, then run install again';

export const NEXT_STEPS = [
  'export REFLECTION_MODE=solo in the shell you start Claude Code from (unset or off: the hooks do nothing)',
  'restart Claude Code in this repository (it reads hooks at start) and trust the folder when asked: hooks of an untrusted folder do not run',
  'after a turn, check the sidecars: forge-reflect validate .forge/reflections',
];

/**
 * How a person runs this CLI in `repo`: the project's own copy when the kit is its devDependency,
 * else this very file. Never a bare name or `npx forge-reflect`: the registry's `forge-reflect` is
 * not ours, and npx fetches it whenever the local copy is missing.
 */
export function cliInvocation(repo: string, self: string = process.argv[1] ?? 'forge-reflect'): string {
  if (existsSync(join(repo, 'node_modules', '.bin', 'forge-reflect'))) return './node_modules/.bin/forge-reflect';
  return /\s/.test(self) ? JSON.stringify(self) : self;
}

/** The steps after install, for the runtimes installed: the mode, each runtime's trust, a check. */
export function nextSteps(runtimes: readonly RuntimeId[], repo: string, env: NodeJS.ProcessEnv = process.env): string[] {
  const labels = runtimes.map((r) => runtimeModule(r).label).join(' / ');
  const steps = [`export REFLECTION_MODE=solo in the shell you start ${labels} from (unset or off: the hooks do nothing)`];
  if (runtimes.includes('claude-code')) steps.push(NEXT_STEPS[1] as string);
  for (const r of runtimes) steps.push(...runtimeModule(r).trustSteps(repo, env));
  if (runtimes.some((r) => r !== 'claude-code')) steps.push(`forge-reflect doctor checks the trust of every installed runtime`);
  steps.push(NEXT_STEPS[2] as string);
  return steps;
}

function union(a: readonly string[], b: readonly string[]): string[] {
  return [...new Set([...a, ...b])];
}

/** Whether git would commit the file (1: not ignored); undefined when git cannot tell. */
function gitIgnores(repo: string, rel: string): boolean | undefined {
  const result = spawnSync('git', ['-C', repo, 'check-ignore', '-q', '--', rel], { stdio: 'ignore', timeout: 10_000 });
  return result.status === 0 ? true : result.status === 1 ? false : undefined;
}

/** One runtime's registration and the file it goes in. */
interface Target {
  runtime: RuntimeId;
  rel: string;
  registration: Registration;
}

/** The flags and runtimes of one install. */
interface Request {
  repo: string;
  dryRun: boolean;
  local: boolean;
  withInstructions: boolean;
  json: boolean;
  runtimes: RuntimeId[];
  targets: Target[];
}

/** What the steps share: the request, what the repo holds, the manifest being built and the plan. */
interface Install extends Request {
  /** Runtimes registered by hook files (Cline): they have no settings file to merge. */
  byFiles: Target[];
  settingsTargets: Array<Target & { settings: SettingsFile }>;
  kit: KitFile[];
  previous: InstallManifest | null;
  previousManifestBytes: Buffer | null;
  manifest: InstallManifest;
  plan: Plan;
}

export async function run(args: Record<string, unknown>): Promise<number> {
  const install = checkRepo(resolveRequest(args));
  planFolders(install);
  planVendoredFiles(install);
  if (install.withInstructions) planSlashCommand(install);
  for (const target of install.settingsTargets) planSettingsMerge(install, target);
  for (const target of install.byFiles) planHookFileRegistration(install, target);
  planManifest(install);
  planStateDir(install);
  noteSettingsScope(install);
  notePlugins(install);
  applyPlan(install.plan, install.dryRun);
  printReport(installReport(install), install.json, installSummary(install));
  return 0;
}

function resolveRequest(args: Record<string, unknown>): Request {
  const repo = resolveRepo(args.repo);
  const runtimes = parseRuntimes(args.runtime);
  const targets = runtimes.map((runtime) => ({
    runtime,
    rel: runtimeModule(runtime).registrationFile(Boolean(args.local)),
    registration: loadRegistration(runtime),
  }));
  return {
    repo,
    dryRun: Boolean(args.dryRun),
    local: Boolean(args.local),
    withInstructions: Boolean(args.withInstructions),
    json: Boolean(args.json),
    runtimes,
    targets,
  };
}

/** The refusals that come before any planning, and what the repo already holds. */
function checkRepo(request: Request): Install {
  const { repo, targets } = request;
  const byFiles = targets.filter((t) => runtimeModule(t.runtime).hookFiles !== undefined);
  const settingsTargets = targets.filter((t) => !byFiles.includes(t)).map((t) => ({ ...t, settings: readSettingsFile(repo, t.rel, 'install') }));
  for (const t of targets) refuseSymlinks(repo, dirOf(t.rel), LINK_FIX);
  refuseSymlinks(repo, `${VENDORED_DIR}/lib`, LINK_FIX);
  refuseSymlinks(repo, STATE_DIR, LINK_FIX);
  if (request.withInstructions) refuseSymlinks(repo, '.claude/commands', LINK_FIX);
  const kit = kitFiles();
  const { manifest: previous, bytes: previousManifestBytes } = readManifestFile(repo);
  return {
    ...request,
    byFiles,
    settingsTargets,
    kit,
    previous,
    previousManifestBytes,
    manifest: previous ? structuredClone(previous) : emptyManifest(),
    plan: emptyPlan(),
  };
}

function planFolders({ repo, withInstructions, settingsTargets, manifest, plan }: Install): void {
  let newDirs = union(missingDirs(repo, `${VENDORED_DIR}/lib`), withInstructions ? missingDirs(repo, '.claude/commands') : []);
  for (const t of settingsTargets) newDirs = union(newDirs, missingDirs(repo, dirOf(t.rel)));
  manifest.created_dirs = union(manifest.created_dirs, newDirs);
  if (newDirs.length > 0) plan.writes.push(() => ensureDirs(repo, newDirs));
}

/** The vendored hooks: each written when it is not the kit's; one the kit dropped removed. */
function planVendoredFiles({ repo, kit, manifest, plan }: Install): void {
  for (const file of kit) {
    const rel = `${VENDORED_DIR}/${file.rel}`;
    const dest = join(repo, rel);
    const stats = lstatOrNull(dest);
    const same = stats?.isFile() && (stats.mode & 0o777) === file.mode && readOrNull(dest)?.equals(file.bytes);
    if (same) continue;
    plan.steps.push({ action: stats ? 'update' : 'create', path: rel, detail: stats ? 'replaced with the kit’s version' : `mode ${file.mode.toString(8)}` });
    plan.writes.push(() => writeAtomic(dest, file.bytes, file.mode));
  }
  const current = new Set(kit.map((f) => f.rel));
  for (const old of manifest.files.filter((f) => !current.has(f))) {
    const path = join(repo, VENDORED_DIR, old);
    if (lstatOrNull(path)?.isFile()) {
      plan.steps.push({ action: 'remove', path: `${VENDORED_DIR}/${old}`, detail: 'no longer part of the kit' });
      plan.writes.push(() => unlinkQuiet(path));
    }
  }
  manifest.files = kit.map((f) => f.rel);
}

/** The slash command; a reflect.md that is not ours is never overwritten. */
function planSlashCommand({ repo, previous, manifest, plan }: Install): void {
  const source = slashCommandSource();
  const dest = join(repo, SLASH_COMMAND);
  const stats = lstatOrNull(dest);
  const existing = readOrNull(dest);
  if (stats && !stats.isFile()) {
    throw new UserError(`${dest} is not a regular file; move it aside or leave out --with-instructions; nothing was changed`);
  }
  if (existing === null) {
    plan.steps.push({ action: 'create', path: SLASH_COMMAND, detail: 'the /reflect slash command' });
    plan.writes.push(() => writeAtomic(dest, source, 0o644));
  } else if (!existing.equals(source)) {
    if (previous?.slash_command?.sha256 !== sha256(existing)) {
      throw new UserError(`${dest} exists and is not forge-reflect's; rename it or leave out --with-instructions; nothing was changed`);
    }
    plan.steps.push({ action: 'update', path: SLASH_COMMAND, detail: 'replaced with the kit’s version' });
    plan.writes.push(() => writeAtomic(dest, source, 0o644));
  }
  manifest.slash_command = { path: SLASH_COMMAND, sha256: sha256(source) };
}

/** A runtime's registration file: a stale group of ours replaced, ours appended, the rest as it was. */
function planSettingsMerge({ repo, manifest, plan }: Install, { runtime, rel, registration, settings }: Target & { settings: SettingsFile }): void {
  const stale = dropStaleHandlers(settings.value, registrationCommands(registration));
  const merged = mergeRegistration(stale.settings, registration);
  if (merged.added.length === 0 && stale.dropped.length === 0) return;
  const prior = manifest.settings[rel];
  const entry: SettingsEntry = {
    existed_before: prior ? prior.existed_before : settings.exists,
    created_hooks_key: (prior?.created_hooks_key ?? false) || merged.createdHooksKey,
    created_events: union(prior?.created_events ?? [], merged.createdEvents),
    backup: prior?.backup ?? null,
  };
  // The backup keeps the file as it was before install first changed it.
  const keptBackup = entry.backup !== null && lstatOrNull(join(repo, entry.backup))?.isFile() === true;
  if (settings.exists && entry.existed_before && !keptBackup && settings.bytes) {
    const bytes = settings.bytes;
    const backupRel = backupPathOf(rel);
    entry.backup = backupRel;
    plan.steps.push({ action: lstatOrNull(join(repo, backupRel)) ? 'update' : 'create', path: backupRel, detail: `backup of ${rel} before this change` });
    plan.writes.push(() => writeAtomic(join(repo, backupRel), bytes, settings.mode));
  }
  manifest.settings[rel] = entry;
  for (const { event, commands } of stale.dropped) {
    plan.steps.push({ action: 'update', path: rel, detail: `hooks.${event}: removed an older forge-reflect command (${commands.length})` });
  }
  for (const { event, commands } of merged.added) {
    const created = merged.createdEvents.includes(event);
    plan.steps.push({
      action: settings.exists ? 'update' : 'create',
      path: rel,
      detail: `hooks.${event}: ${created ? 'added with' : 'appended'} the forge-reflect group for ${runtime} (${commands.map((c) => /reflect-[a-z]+-hook\.sh/.exec(c)?.[0] ?? c).join(', ')})`,
    });
  }
  const text = serializeJson(merged.settings, settings.format);
  plan.writes.push(() => writeAtomic(settings.path, text, settings.mode));
  if (merged.present.length > 0 && merged.added.length > 0) {
    plan.notes.push(`${merged.present.length} of the kit's hook groups were already in ${rel} and were left as they are`);
  }
}

/** A runtime's hook files (Cline's wrappers), each written only when it is not already the kit's. */
function planHookFileRegistration({ repo, manifest, previous, plan }: Install, target: Target): void {
  const files = planHookFiles(repo, runtimeModule(target.runtime).hookFiles?.() ?? [], manifest, previous, LINK_FIX);
  plan.steps.push(...files.steps);
  if (files.newDirs.length > 0) plan.writes.push(() => ensureDirs(repo, files.newDirs));
  plan.writes.push(...files.writes);
}

/** The manifest, written after everything it describes. */
function planManifest({ repo, manifest, previousManifestBytes, plan }: Install): void {
  const manifestText = serializeManifest(manifest);
  if (previousManifestBytes !== null && previousManifestBytes.toString('utf8') === manifestText) return;
  plan.steps.push({
    action: previousManifestBytes === null ? 'create' : 'update',
    path: `${VENDORED_DIR}/${MANIFEST_NAME}`,
    detail: 'what install created, for uninstall',
  });
  plan.writes.push(() => writeAtomic(join(repo, VENDORED_DIR, MANIFEST_NAME), manifestText, 0o644));
}

/** The state folder: private, never committed. */
function planStateDir({ repo, plan }: Install): void {
  const state = join(repo, STATE_DIR);
  const stateStats = lstatOrNull(state);
  if (stateStats === null) {
    plan.steps.push({ action: 'create', path: `${STATE_DIR}/`, detail: 'state folder (0700) with a .gitignore of *' });
  } else if (lstatOrNull(join(state, '.gitignore')) === null) {
    plan.steps.push({ action: 'create', path: `${STATE_DIR}/.gitignore`, detail: '* (nothing in .forge/ is committed)' });
  }
  if (stateStats === null || lstatOrNull(join(state, '.gitignore')) === null) plan.writes.push(() => ensureStateDir(state));
}

function noteSettingsScope({ repo, local, runtimes, targets, plan }: Install): void {
  if (local && !runtimes.includes('claude-code')) plan.notes.push('--local applies to Claude Code only; the other runtimes have one project file each');
  const settingsRel = (targets[0] as Target).rel;
  if (settingsRel.endsWith('settings.local.json') && gitIgnores(repo, settingsRel) === false) {
    plan.notes.push(`${settingsRel} is not ignored by git; add it to .gitignore if the hooks should stay yours alone`);
  }
}

/**
 * The kit installed as this runtime's plugin or extension too: the settings registration records
 * and the plugin's hooks stay quiet in this repository (hooks/lib/common.sh forge_plugin_defers).
 */
function notePlugins({ repo, runtimes, plan }: Install): void {
  for (const p of findPlugins(repo, process.env).filter((f) => runtimes.includes(f.runtime) && f.enabled)) {
    plan.notes.push(
      `${runtimeModule(p.runtime).label} also has the forge-reflect plugin (${p.source}): in this repository the settings registration records and the plugin's hooks stay quiet, so each event is stored once (forge-reflect doctor lists both)` +
        (p.runtime === 'codex' ? '; for Codex only once the project hooks are trusted (until then the plugin records)' : ''),
    );
  }
}

function installSummary({ dryRun, targets, plan }: Install): string {
  const changes = changeCount(plan.steps);
  const where = targets.map((t) => t.rel).join(', ');
  if (changes === 0) return `Already installed: nothing changed (hooks registered in ${where}).`;
  return dryRun ? dryRunSummary(changes) : `Installed: ${changesText(changes)} (hooks registered in ${where}).`;
}

function installReport({ repo, dryRun, local, withInstructions, runtimes, targets, plan }: Install): Report {
  const cli = cliInvocation(repo);
  return {
    command: 'install',
    repo,
    settings_file: (targets[0] as Target).rel,
    runtimes,
    registration_files: targets.map((t) => t.rel),
    dry_run: dryRun,
    changed: changeCount(plan.steps) > 0 && !dryRun,
    steps: plan.steps,
    notes: plan.notes,
    next_steps: [
      ...nextSteps(runtimes, repo).map((step) => step.replace(/forge-reflect (validate|doctor)/, `${cli} $1`)),
      ...(withInstructions
        ? []
        : [
            `so the agent ends its answer with a self-report (confidence, likely flaw): ${cli} install --with-instructions adds the /reflect command and prints a CLAUDE.md snippet`,
          ]),
      `to undo: ${cli} uninstall${runtimes.map((r) => ` --runtime ${r}`).join('')}${local ? ' --local' : ''} (keeps .forge/)`,
    ],
    ...(withInstructions ? { claude_md_snippet: claudeMdSnippet() } : {}),
  };
}

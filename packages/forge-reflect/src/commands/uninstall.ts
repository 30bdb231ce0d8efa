/**
 * `forge-reflect uninstall`: takes out exactly what install put in. Our hook groups (recognised
 * by their command pointing into `.claude/hooks/forge-reflect/`), the event keys and the `hooks`
 * key install created, the settings file itself when install created it and nothing else is left
 * in it, the vendored folder, the slash command when it is still ours, and the folders install
 * created once they are empty. When nothing else changed since install, the settings file comes
 * back byte for byte (from the backup). `.forge/` holds the user's data and is kept.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { UserError } from '../errors.js';
import { dirOf, lstatOrNull, readOrNull, refuseSymlinks, rmdirIfEmpty, sha256, unlinkQuiet } from '../install/files.js';
import { writeAtomic } from '../atomic-write.js';
import {
  kitFiles,
  readSettingsFile,
  resolveRepo,
  type SettingsFile,
  settingsFileFor,
  SLASH_COMMAND,
  slashCommandSource,
  STATE_DIR,
  VENDORED_DIR,
} from '../install/kit.js';
import { MANIFEST_NAME, readManifestFile, serializeManifest, type InstallManifest } from '../install/manifest.js';
import { applyPlan, emptyPlan, type Plan } from '../install/plan.js';
import { changeCount, changesText, dryRunSummary, printReport, type Report } from '../install/report.js';
import { hasOurHandlers, parseSettingsText, sameJson, serializeJson, unmergeRegistration } from '../install/settings-merge.js';
import { parseRuntimes, RUNTIME_IDS, runtimeModule, type RuntimeId } from '../runtimes/index.js';
import { hookFilesInstalled, unplanHookFiles } from '../install/hook-files.js';

const LINK_FIX = 'replace the link with a real folder, then run uninstall again';

/** The vendored file names when there is no manifest: the kit's own list, else the known ones. */
function knownFiles(): string[] {
  try {
    return kitFiles().map((f) => f.rel);
  } catch {
    return [
      'reflect-stop-hook.sh',
      'reflect-event-hook.sh',
      'lib/common.sh',
      'lib/fallback-sidecar.sh',
      'lib/risk-table.sh',
      'lib/snapshot.sh',
      'lib/reflect-helper.cjs',
      'lib/reflect-helper.mjs',
    ];
  }
}

/** The uninstall line that removes the registration in a file. */
function hintFor(rel: string): string {
  if (rel === SETTINGS_LOCAL_REL) return 'uninstall --local';
  const runtime = RUNTIME_IDS.find((r) => runtimeModule(r).registrationFiles.includes(rel)) ?? 'claude-code';
  return `uninstall --runtime ${runtime}`;
}
const SETTINGS_LOCAL_REL = settingsFileFor(true);

/** Whether another registration file still registers our hooks; undefined when it cannot be read. */
function otherStillRegisters(repo: string, rel: string): boolean | undefined {
  const stats = lstatOrNull(join(repo, rel));
  if (stats === null) return false;
  if (!stats.isFile()) return undefined;
  const parsed = parseSettingsText(readFileSync(join(repo, rel), 'utf8'));
  return parsed.ok ? hasOurHandlers(parsed.value) : undefined;
}

/** The flags and runtimes of one uninstall. */
interface Request {
  repo: string;
  dryRun: boolean;
  json: boolean;
  runtimes: RuntimeId[];
  /** Each runtime's registration file, in the order of `runtimes`. */
  targetRels: string[];
  /** Every other file that may register the hooks: the kit stays while one of them does. */
  otherRels: string[];
}

interface SettingsTarget {
  rel: string;
  settings: SettingsFile;
}

/** What the steps share: the request, what install left, the plan and the paths it removes. */
interface Uninstall extends Request {
  /** Runtimes registered by hook files (Cline): they have no settings file. */
  fileRuntimes: RuntimeId[];
  settingsTargets: SettingsTarget[];
  manifestPath: string;
  manifestBytes: Buffer | null;
  manifest: InstallManifest | null;
  plan: Plan;
  /** Absolute paths this run removes, to tell which folders end up empty. */
  gone: Set<string>;
}

/** A registration file that may still use the kit; `registers` undefined when it cannot be read. */
interface OtherRegistration {
  rel: string;
  registers: boolean | undefined;
}

/** The hook files this run forgets in the manifest, and their folders. */
interface HookFilesRemoved {
  forgotten: string[];
  dirs: string[];
}

export async function run(args: Record<string, unknown>): Promise<number> {
  const uninstall = findInstalled(resolveRequest(args));
  for (const target of uninstall.settingsTargets) removeSettingsRegistration(uninstall, target);
  const hookFiles = removeHookFiles(uninstall);
  const blocking = stillRegistering(uninstall);
  const wholeKit = blocking.length === 0;
  if (wholeKit) {
    removeVendoredFiles(uninstall);
    removeSlashCommand(uninstall);
    removeKitFolders(uninstall);
  } else {
    noteKeptKit(uninstall, blocking);
    const emptied = removeEmptiedRegistrationFolders(uninstall, hookFiles.dirs);
    forgetInManifest(uninstall, hookFiles.forgotten, emptied);
  }
  applyPlan(uninstall.plan, uninstall.dryRun);
  noteStateDir(uninstall);
  printReport(uninstallReport(uninstall), uninstall.json, uninstallSummary(uninstall, wholeKit));
  return 0;
}

function resolveRequest(args: Record<string, unknown>): Request {
  const repo = resolveRepo(args.repo);
  const runtimes = parseRuntimes(args.runtime);
  const targetRels = runtimes.map((r) => runtimeModule(r).registrationFile(Boolean(args.local)));
  return {
    repo,
    dryRun: Boolean(args.dryRun),
    json: Boolean(args.json),
    runtimes,
    targetRels,
    otherRels: RUNTIME_IDS.flatMap((r) => runtimeModule(r).registrationFiles).filter((rel) => !targetRels.includes(rel)),
  };
}

/** Reads the settings files and the manifest, with every refusal made before anything is planned. */
function findInstalled(request: Request): Uninstall {
  const { repo, runtimes, targetRels } = request;
  const fileRuntimes = runtimes.filter((r) => runtimeModule(r).hookFiles !== undefined);
  const settingsRels = targetRels.filter((_, i) => !fileRuntimes.includes(runtimes[i] as RuntimeId));
  const settingsTargets = settingsRels.map((rel) => ({ rel, settings: readSettingsFile(repo, rel, 'uninstall') }));
  refuseSymlinks(repo, `${VENDORED_DIR}/lib`, LINK_FIX);
  refuseSymlinks(repo, '.claude/commands', LINK_FIX);
  const { path: manifestPath, bytes: manifestBytes, manifest } = readManifestFile(repo);
  if (manifestBytes !== null && manifest === null) {
    throw new UserError(`${manifestPath} is not an install manifest; move it aside and run uninstall again (our hooks are then found by their command)`);
  }
  return { ...request, fileRuntimes, settingsTargets, manifestPath, manifestBytes, manifest, plan: emptyPlan(), gone: new Set() };
}

function planRemoval({ repo, plan, gone }: Uninstall, rel: string, detail: string): void {
  const path = join(repo, rel);
  plan.steps.push({ action: 'remove', path: rel, detail });
  gone.add(path);
  plan.writes.push(() => unlinkQuiet(path));
}

/** A folder out, as planRemoval a file: once the writes before it have emptied it. */
function planRmdir({ repo, plan, gone }: Uninstall, rel: string, detail: string): void {
  const path = join(repo, rel);
  plan.steps.push({ action: 'remove', path: `${rel}/`, detail });
  gone.add(path);
  plan.writes.push(() => {
    rmdirIfEmpty(path);
  });
}

/** Our groups out of one registration file; the file itself goes when install created it and nothing else is in it. */
function removeSettingsRegistration(uninstall: Uninstall, { rel, settings }: SettingsTarget): void {
  const { repo, manifest, plan } = uninstall;
  if (!settings.exists) return;
  const entry = manifest?.settings[rel];
  let finalBytes: Buffer | null = settings.bytes;
  const un = unmergeRegistration(settings.value, {
    dropEmptyEvent: (event, emptiedByUs) => (entry ? entry.created_events.includes(event) : emptiedByUs),
    dropEmptyHooks: (emptiedByUs) => (entry ? entry.created_hooks_key : emptiedByUs),
  });
  const backupBytes = entry?.backup ? readOrNull(join(repo, entry.backup)) : null;
  const backup = backupBytes === null ? null : parseSettingsText(backupBytes.toString('utf8'));
  const touched = un.removed.length > 0 || un.removedEvents.length > 0 || un.removedHooksKey;
  if (entry && !entry.existed_before && sameJson(un.settings, {})) {
    planRemoval(uninstall, rel, 'install created it and nothing else is in it');
    finalBytes = null;
  } else if (touched) {
    // Same content as before install: its exact bytes back. Else our parts out, the rest kept.
    const restored = backup?.ok === true && backupBytes !== null && sameJson(backup.value, un.settings);
    const bytes = restored && backupBytes !== null ? backupBytes : Buffer.from(serializeJson(un.settings, settings.format));
    for (const { event } of un.removed) {
      const key = un.removedEvents.includes(event) ? ' and the key install added' : '';
      plan.steps.push({ action: 'update', path: rel, detail: `hooks.${event}: removed the forge-reflect group${key}` });
    }
    for (const event of un.removedEvents.filter((e) => !un.removed.some((r) => r.event === e))) {
      plan.steps.push({ action: 'update', path: rel, detail: `hooks.${event}: removed the empty key install added` });
    }
    if (un.removedHooksKey) plan.steps.push({ action: 'update', path: rel, detail: 'removed the empty "hooks" key install added' });
    if (restored) plan.notes.push(`${rel} is back to its exact bytes from before install`);
    finalBytes = bytes;
    plan.writes.push(() => writeAtomic(settings.path, bytes, settings.mode));
  }
  if (entry?.backup && backupBytes !== null) {
    if (finalBytes !== null && finalBytes.equals(backupBytes)) planRemoval(uninstall, entry.backup, 'the backup install made; the settings are restored');
    else plan.notes.push(`kept ${entry.backup}: ${rel} as it was before install (it has changed since, so it was not restored)`);
  }
}

/** Each runtime's hook files, while they are what install wrote. */
function removeHookFiles({ repo, fileRuntimes, manifest, plan, gone }: Uninstall): HookFilesRemoved {
  const removed: HookFilesRemoved = { forgotten: [], dirs: [] };
  for (const r of fileRuntimes) {
    const hookFiles = runtimeModule(r).hookFiles?.() ?? [];
    const files = unplanHookFiles(repo, hookFiles, manifest, gone);
    plan.steps.push(...files.steps);
    plan.writes.push(...files.writes);
    plan.notes.push(...files.notes);
    removed.forgotten.push(...files.forgotten);
    for (const f of hookFiles) {
      for (let dir = f.rel; dir.includes('/'); ) {
        dir = dirOf(dir);
        if (!removed.dirs.includes(dir)) removed.dirs.push(dir);
      }
    }
  }
  return removed;
}

/** The registration files (and other runtimes' hook files) that still use the kit, or may. */
function stillRegistering({ repo, runtimes, otherRels, manifest }: Uninstall): OtherRegistration[] {
  const others = otherRels.map((rel) => ({ rel, registers: otherStillRegisters(repo, rel) }));
  for (const r of RUNTIME_IDS.filter((id) => !runtimes.includes(id))) {
    const hookFiles = runtimeModule(r).hookFiles?.();
    if (hookFiles && hookFilesInstalled(repo, hookFiles, manifest)) others.push({ rel: runtimeModule(r).registrationFile(false), registers: true });
  }
  return others.filter((o) => o.registers !== false);
}

function noteKeptKit({ plan }: Uninstall, blocking: readonly OtherRegistration[]): void {
  for (const o of blocking) {
    plan.notes.push(
      o.registers === undefined
        ? `kept ${VENDORED_DIR}/: ${o.rel} could not be read to see whether it still uses the hooks`
        : `kept ${VENDORED_DIR}/: ${o.rel} still registers the hooks (${hintFor(o.rel)} removes those too)`,
    );
  }
}

/**
 * The registration folders install created (.codex/, .gemini/), then the hook files' folders
 * deepest first, each when this run left it empty. Returns the folders removed.
 */
function removeEmptiedRegistrationFolders(uninstall: Uninstall, hookDirs: readonly string[]): string[] {
  const { repo, targetRels, manifest, gone } = uninstall;
  const emptied: string[] = [];
  const dirs = [...targetRels.map(dirOf).filter((dir) => dir !== '.claude'), ...[...hookDirs].sort((a, b) => b.split('/').length - a.split('/').length)];
  for (const dir of dirs) {
    if (!manifest?.created_dirs.includes(dir)) continue;
    if (emptiedByThisRun(join(repo, dir), gone) !== true) continue;
    planRmdir(uninstall, dir, 'created by install, now empty');
    emptied.push(dir);
  }
  return emptied;
}

/** While the kit stays, the manifest forgets the registrations, hook files and folders this run removed. */
function forgetInManifest({ targetRels, manifest, manifestPath, plan }: Uninstall, hookForgotten: readonly string[], emptied: readonly string[]): void {
  const forgotten = targetRels.filter((rel) => manifest?.settings[rel] !== undefined);
  if (!manifest || (forgotten.length === 0 && emptied.length === 0 && hookForgotten.length === 0)) return;
  const rest: InstallManifest = {
    ...manifest,
    settings: { ...manifest.settings },
    created_dirs: manifest.created_dirs.filter((d) => !emptied.includes(d)),
  };
  for (const rel of forgotten) delete rest.settings[rel];
  if (rest.hook_files) rest.hook_files = Object.fromEntries(Object.entries(rest.hook_files).filter(([rel]) => !hookForgotten.includes(rel)));
  const text = serializeManifest(rest);
  plan.steps.push({
    action: 'update',
    path: `${VENDORED_DIR}/${MANIFEST_NAME}`,
    detail: `forgot ${[...forgotten, ...hookForgotten, ...emptied.map((d) => `${d}/`)].join(', ')}`,
  });
  plan.writes.push(() => writeAtomic(manifestPath, text, 0o644));
}

function removeVendoredFiles(uninstall: Uninstall): void {
  const { repo, manifest, manifestBytes } = uninstall;
  for (const rel of manifest?.files ?? knownFiles()) {
    const path = join(repo, VENDORED_DIR, rel);
    if (lstatOrNull(path)?.isFile()) planRemoval(uninstall, `${VENDORED_DIR}/${rel}`, 'vendored by install');
  }
  if (manifestBytes !== null) planRemoval(uninstall, `${VENDORED_DIR}/${MANIFEST_NAME}`, 'install manifest');
}

/** The slash command, while it is still ours. */
function removeSlashCommand(uninstall: Uninstall): void {
  const { repo, manifest, plan } = uninstall;
  const slashBytes = readOrNull(join(repo, SLASH_COMMAND));
  if (slashBytes === null) return;
  const ours = manifest?.slash_command
    ? manifest.slash_command.sha256 === sha256(slashBytes)
    : (() => {
        try {
          return slashBytes.equals(slashCommandSource());
        } catch {
          return false;
        }
      })();
  if (ours) planRemoval(uninstall, SLASH_COMMAND, 'the /reflect slash command install added');
  else if (manifest?.slash_command) plan.notes.push(`kept ${SLASH_COMMAND}: it was edited after install`);
}

/** Folders: ours, and those install created, deepest first, each only when nothing else is in it. */
function removeKitFolders(uninstall: Uninstall): void {
  const { repo, manifest, plan, gone } = uninstall;
  const dirs = [...new Set([`${VENDORED_DIR}/lib`, VENDORED_DIR, ...(manifest?.created_dirs ?? [])])].sort(
    (a, b) => b.split('/').length - a.split('/').length || b.localeCompare(a),
  );
  for (const rel of dirs) {
    const path = join(repo, rel);
    if (!lstatOrNull(path)?.isDirectory()) continue;
    const emptied = emptiedByThisRun(path, gone);
    if (emptied === undefined) continue;
    if (emptied) {
      planRmdir(uninstall, rel, rel.startsWith(VENDORED_DIR) ? 'vendored folder' : 'created by install, now empty');
    } else if (rel === VENDORED_DIR || rel === `${VENDORED_DIR}/lib`) {
      plan.notes.push(`kept ${rel}/: it holds files install did not put there`);
    }
  }
}

/** Whether everything in the folder is removed by this run; undefined when it cannot be read. */
function emptiedByThisRun(path: string, gone: ReadonlySet<string>): boolean | undefined {
  let entries: string[];
  try {
    entries = readdirSync(path);
  } catch {
    return undefined;
  }
  return entries.every((name) => gone.has(join(path, name)));
}

function noteStateDir({ repo, plan }: Uninstall): void {
  if (lstatOrNull(join(repo, STATE_DIR)) !== null) {
    plan.notes.push(`kept ${STATE_DIR}/: your reflections and event log; delete it yourself if you no longer want them`);
  }
}

function uninstallSummary({ dryRun, targetRels, plan }: Uninstall, wholeKit: boolean): string {
  const changes = changeCount(plan.steps);
  if (changes === 0) return `Nothing to uninstall: no forge-reflect hooks in ${targetRels.join(', ')}${wholeKit ? ' and no vendored files' : ''}.`;
  return dryRun ? dryRunSummary(changes) : `Uninstalled: ${changesText(changes)}.`;
}

function uninstallReport({ repo, dryRun, runtimes, targetRels, plan }: Uninstall): Report {
  const changed = changeCount(plan.steps) > 0 && !dryRun;
  return {
    command: 'uninstall',
    repo,
    settings_file: targetRels[0] as string,
    runtimes,
    registration_files: targetRels,
    dry_run: dryRun,
    changed,
    steps: plan.steps,
    notes: plan.notes,
    next_steps: changed ? [`restart ${runtimes.map((r) => runtimeModule(r).label).join(' / ')} in this repository so it stops running the removed hooks`] : [],
  };
}

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
import { lstatOrNull, readOrNull, refuseSymlinks, rmdirIfEmpty, sha256, unlinkQuiet } from '../install/files.js';
import { writeAtomic } from '../atomic-write.js';
import { kitFiles, readSettingsFile, resolveRepo, settingsFileFor, SLASH_COMMAND, slashCommandSource, STATE_DIR, VENDORED_DIR } from '../install/kit.js';
import { MANIFEST_NAME, parseManifest, serializeManifest, type InstallManifest } from '../install/manifest.js';
import { changeCount, printReport, type Report, type Step } from '../install/report.js';
import { hasOurHandlers, parseSettingsText, sameJson, serializeJson, unmergeRegistration } from '../install/settings-merge.js';
import { parseRuntimes, RUNTIME_IDS, runtimeModule } from '../runtimes/index.js';
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

export async function run(args: Record<string, unknown>): Promise<number> {
  const repo = resolveRepo(args.repo);
  const dryRun = Boolean(args.dryRun);
  const local = Boolean(args.local);
  const runtimes = parseRuntimes(args.runtime);
  const targetRels = runtimes.map((r) => (r === 'claude-code' ? settingsFileFor(local) : runtimeModule(r).registrationFile(false)));
  const settingsRel = targetRels[0] as string;
  // Every other file that may register the hooks: the kit stays while one of them does.
  const otherRels = RUNTIME_IDS.flatMap((r) => runtimeModule(r).registrationFiles).filter((rel) => !targetRels.includes(rel));

  // Runtimes registered by hook files (Cline) have no settings file.
  const fileRuntimes = runtimes.filter((r) => runtimeModule(r).hookFiles !== undefined);
  const settingsRels = targetRels.filter((_, i) => !fileRuntimes.includes(runtimes[i] as (typeof runtimes)[number]));
  const targets = settingsRels.map((rel) => ({ rel, settings: readSettingsFile(repo, rel, 'uninstall') }));
  refuseSymlinks(repo, `${VENDORED_DIR}/lib`, LINK_FIX);
  refuseSymlinks(repo, '.claude/commands', LINK_FIX);
  const manifestPath = join(repo, VENDORED_DIR, MANIFEST_NAME);
  const manifestBytes = readOrNull(manifestPath);
  const manifest: InstallManifest | null = manifestBytes === null ? null : parseManifest(manifestBytes.toString('utf8'));
  if (manifestBytes !== null && manifest === null) {
    throw new UserError(`${manifestPath} is not an install manifest; move it aside and run uninstall again (our hooks are then found by their command)`);
  }

  const steps: Step[] = [];
  const writes: Array<() => void> = [];
  const notes: string[] = [];
  /** Absolute paths this run removes, to tell which folders end up empty. */
  const gone = new Set<string>();
  const remove = (rel: string, detail: string) => {
    const path = join(repo, rel);
    steps.push({ action: 'remove', path: rel, detail });
    gone.add(path);
    writes.push(() => unlinkQuiet(path));
  };

  // Each registration file.
  for (const { rel: settingsRel, settings } of targets) {
    const entry = manifest?.settings[settingsRel];
    let finalBytes: Buffer | null = settings.bytes;
    if (settings.exists) {
      const un = unmergeRegistration(settings.value, {
        dropEmptyEvent: (event, emptiedByUs) => (entry ? entry.created_events.includes(event) : emptiedByUs),
        dropEmptyHooks: (emptiedByUs) => (entry ? entry.created_hooks_key : emptiedByUs),
      });
      const backupBytes = entry?.backup ? readOrNull(join(repo, entry.backup)) : null;
      const backup = backupBytes === null ? null : parseSettingsText(backupBytes.toString('utf8'));
      const touched = un.removed.length > 0 || un.removedEvents.length > 0 || un.removedHooksKey;
      if (entry && !entry.existed_before && sameJson(un.settings, {})) {
        remove(settingsRel, 'install created it and nothing else is in it');
        finalBytes = null;
      } else if (touched) {
        // Same content as before install: its exact bytes back. Else our parts out, the rest kept.
        const restored = backup?.ok === true && backupBytes !== null && sameJson(backup.value, un.settings);
        const bytes = restored && backupBytes !== null ? backupBytes : Buffer.from(serializeJson(un.settings, settings.format));
        for (const { event } of un.removed) {
          const key = un.removedEvents.includes(event) ? ' and the key install added' : '';
          steps.push({ action: 'update', path: settingsRel, detail: `hooks.${event}: removed the forge-reflect group${key}` });
        }
        for (const event of un.removedEvents.filter((e) => !un.removed.some((r) => r.event === e))) {
          steps.push({ action: 'update', path: settingsRel, detail: `hooks.${event}: removed the empty key install added` });
        }
        if (un.removedHooksKey) steps.push({ action: 'update', path: settingsRel, detail: 'removed the empty "hooks" key install added' });
        if (restored) notes.push(`${settingsRel} is back to its exact bytes from before install`);
        finalBytes = bytes;
        writes.push(() => writeAtomic(settings.path, bytes, settings.mode));
      }
      if (entry?.backup && backupBytes !== null) {
        if (finalBytes !== null && finalBytes.equals(backupBytes)) remove(entry.backup, 'the backup install made; the settings are restored');
        else notes.push(`kept ${entry.backup}: ${settingsRel} as it was before install (it has changed since, so it was not restored)`);
      }
    }
  }

  // Each runtime's hook files, while they are what install wrote.
  const hookForgotten: string[] = [];
  const hookDirs: string[] = [];
  for (const r of fileRuntimes) {
    const hookFiles = runtimeModule(r).hookFiles?.() ?? [];
    const plan = unplanHookFiles(repo, hookFiles, manifest, gone);
    steps.push(...plan.steps);
    writes.push(...plan.writes);
    notes.push(...plan.notes);
    hookForgotten.push(...plan.forgotten);
    for (const f of hookFiles)
      for (let dir = f.rel; dir.includes('/'); ) if (!hookDirs.includes((dir = dir.slice(0, dir.lastIndexOf('/'))))) hookDirs.push(dir);
  }

  // The rest of the kit goes only when no settings file (nor another runtime's hook files) registers it any more.
  const others = otherRels.map((rel) => ({ rel, registers: otherStillRegisters(repo, rel) }));
  for (const r of RUNTIME_IDS.filter((id) => !runtimes.includes(id))) {
    const hookFiles = runtimeModule(r).hookFiles?.();
    if (hookFiles && hookFilesInstalled(repo, hookFiles, manifest)) others.push({ rel: runtimeModule(r).registrationFile(false), registers: true });
  }
  const blocking = others.filter((o) => o.registers !== false);
  const wholeKit = blocking.length === 0;
  if (!wholeKit) {
    for (const o of blocking) {
      notes.push(
        o.registers === undefined
          ? `kept ${VENDORED_DIR}/: ${o.rel} could not be read to see whether it still uses the hooks`
          : `kept ${VENDORED_DIR}/: ${o.rel} still registers the hooks (${hintFor(o.rel)} removes those too)`,
      );
    }
    // The registration folders install created (.codex/, .gemini/) go when this left them empty.
    const forgotten = targetRels.filter((rel) => manifest?.settings[rel] !== undefined);
    const emptied: string[] = [];
    /** A folder install created goes when this run left nothing else in it. */
    const removeIfEmptied = (dir: string) => {
      if (!manifest?.created_dirs.includes(dir)) return;
      const path = join(repo, dir);
      let entries: string[] = [];
      try {
        entries = readdirSync(path);
      } catch {
        return;
      }
      if (!entries.every((name) => gone.has(join(path, name)))) return;
      steps.push({ action: 'remove', path: `${dir}/`, detail: 'created by install, now empty' });
      emptied.push(dir);
      gone.add(path);
      writes.push(() => {
        rmdirIfEmpty(path);
      });
    };
    for (const rel of targetRels) {
      const dir = rel.slice(0, rel.lastIndexOf('/'));
      if (dir !== '.claude') removeIfEmptied(dir);
    }
    // The hook files' folders install created, deepest first, when this left them empty.
    for (const dir of [...hookDirs].sort((a, b) => b.split('/').length - a.split('/').length)) removeIfEmptied(dir);
    if (manifest && (forgotten.length > 0 || emptied.length > 0 || hookForgotten.length > 0)) {
      const rest: InstallManifest = {
        ...manifest,
        settings: { ...manifest.settings },
        created_dirs: manifest.created_dirs.filter((d) => !emptied.includes(d)),
      };
      for (const rel of forgotten) delete rest.settings[rel];
      if (rest.hook_files) rest.hook_files = Object.fromEntries(Object.entries(rest.hook_files).filter(([rel]) => !hookForgotten.includes(rel)));
      const text = serializeManifest(rest);
      steps.push({
        action: 'update',
        path: `${VENDORED_DIR}/${MANIFEST_NAME}`,
        detail: `forgot ${[...forgotten, ...hookForgotten, ...emptied.map((d) => `${d}/`)].join(', ')}`,
      });
      writes.push(() => writeAtomic(manifestPath, text, 0o644));
    }
  } else {
    for (const rel of manifest?.files ?? knownFiles()) {
      const path = join(repo, VENDORED_DIR, rel);
      if (lstatOrNull(path)?.isFile()) remove(`${VENDORED_DIR}/${rel}`, 'vendored by install');
    }
    if (manifestBytes !== null) remove(`${VENDORED_DIR}/${MANIFEST_NAME}`, 'install manifest');

    const slash = join(repo, SLASH_COMMAND);
    const slashBytes = readOrNull(slash);
    if (slashBytes !== null) {
      const ours = manifest?.slash_command
        ? manifest.slash_command.sha256 === sha256(slashBytes)
        : (() => {
            try {
              return slashBytes.equals(slashCommandSource());
            } catch {
              return false;
            }
          })();
      if (ours) remove(SLASH_COMMAND, 'the /reflect slash command install added');
      else if (manifest?.slash_command) notes.push(`kept ${SLASH_COMMAND}: it was edited after install`);
    }

    // Folders: ours, and those install created, deepest first, each only when nothing else is in it.
    const dirs = [...new Set([`${VENDORED_DIR}/lib`, VENDORED_DIR, ...(manifest?.created_dirs ?? [])])].sort(
      (a, b) => b.split('/').length - a.split('/').length || b.localeCompare(a),
    );
    for (const rel of dirs) {
      const path = join(repo, rel);
      if (!lstatOrNull(path)?.isDirectory()) continue;
      let entries: string[];
      try {
        entries = readdirSync(path);
      } catch {
        continue;
      }
      if (entries.every((name) => gone.has(join(path, name)))) {
        steps.push({ action: 'remove', path: `${rel}/`, detail: rel.startsWith(VENDORED_DIR) ? 'vendored folder' : 'created by install, now empty' });
        gone.add(path);
        writes.push(() => {
          rmdirIfEmpty(path);
        });
      } else if (rel === VENDORED_DIR || rel === `${VENDORED_DIR}/lib`) {
        notes.push(`kept ${rel}/: it holds files install did not put there`);
      }
    }
  }

  if (!dryRun) for (const write of writes) write();

  const changes = changeCount(steps);
  if (lstatOrNull(join(repo, STATE_DIR)) !== null) {
    notes.push(`kept ${STATE_DIR}/: your reflections and event log; delete it yourself if you no longer want them`);
  }
  const summary =
    changes === 0
      ? `Nothing to uninstall: no forge-reflect hooks in ${targetRels.join(', ')}${wholeKit ? ' and no vendored files' : ''}.`
      : dryRun
        ? `Dry run: ${changes} change${changes === 1 ? '' : 's'} would be made; nothing was written.`
        : `Uninstalled: ${changes} change${changes === 1 ? '' : 's'}.`;
  const report: Report = {
    command: 'uninstall',
    repo,
    settings_file: settingsRel,
    runtimes,
    registration_files: targetRels,
    dry_run: dryRun,
    changed: changes > 0 && !dryRun,
    steps,
    notes,
    next_steps:
      changes > 0 && !dryRun
        ? [`restart ${runtimes.map((r) => runtimeModule(r).label).join(' / ')} in this repository so it stops running the removed hooks`]
        : [],
  };
  printReport(report, Boolean(args.json), summary);
  return 0;
}

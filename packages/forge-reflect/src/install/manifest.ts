/**
 * The install manifest (`.claude/hooks/forge-reflect/install-manifest.json`): what install created,
 * so uninstall removes exactly that and nothing of the user's. No timestamps, stable key order:
 * an install that changes nothing writes the same bytes (and so writes nothing).
 */
import { join } from 'node:path';
import { VENDORED_DIR } from '../runtimes/module.js';
import { readOrNull } from './files.js';
import { isJsonObject } from './settings-merge.js';

export const MANIFEST_NAME = 'install-manifest.json';
export const MANIFEST_SCHEMA = 'forge-reflect.install.v1';

export interface SettingsEntry {
  /** Whether the settings file existed before install first changed it. */
  existed_before: boolean;
  created_hooks_key: boolean;
  /** Event keys install added to `hooks` (they go again when they end up empty). */
  created_events: string[];
  /** Repo-relative path of the copy of the file as it was before install changed it, or null. */
  backup: string | null;
}

export interface InstallManifest {
  schema: typeof MANIFEST_SCHEMA;
  /** Vendored files, relative to the vendored folder. */
  files: string[];
  /** Folders install created (repo-relative), removed again when empty. */
  created_dirs: string[];
  /** Per settings file (repo-relative path). */
  settings: Record<string, SettingsEntry>;
  slash_command: { path: string; sha256: string } | null;
  /** Hook files install wrote (repo-relative path → sha256 of what it wrote): Cline's wrappers. */
  hook_files?: Record<string, string>;
}

export function emptyManifest(): InstallManifest {
  return { schema: MANIFEST_SCHEMA, files: [], created_dirs: [], settings: {}, slash_command: null };
}

const strings = (value: unknown): string[] => (Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : []);

/** Reads a manifest's text; null when it is not one (then uninstall falls back to recognising our hooks). */
export function parseManifest(text: string): InstallManifest | null {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  if (!isJsonObject(value) || value.schema !== MANIFEST_SCHEMA) return null;
  const settings: Record<string, SettingsEntry> = {};
  if (isJsonObject(value.settings)) {
    for (const [file, entry] of Object.entries(value.settings)) {
      if (!isJsonObject(entry)) continue;
      settings[file] = {
        existed_before: entry.existed_before !== false,
        created_hooks_key: entry.created_hooks_key === true,
        created_events: strings(entry.created_events),
        backup: typeof entry.backup === 'string' ? entry.backup : null,
      };
    }
  }
  const slash = value.slash_command;
  const hookFiles: Record<string, string> = {};
  if (isJsonObject(value.hook_files)) for (const [rel, sum] of Object.entries(value.hook_files)) if (typeof sum === 'string') hookFiles[rel] = sum;
  return {
    schema: MANIFEST_SCHEMA,
    files: strings(value.files),
    created_dirs: strings(value.created_dirs),
    settings,
    slash_command:
      isJsonObject(slash) && typeof slash.path === 'string' && typeof slash.sha256 === 'string' ? { path: slash.path, sha256: slash.sha256 } : null,
    ...(Object.keys(hookFiles).length > 0 ? { hook_files: hookFiles } : {}),
  };
}

export interface ManifestFile {
  path: string;
  /** The bytes as read; null when there is no manifest. */
  bytes: Buffer | null;
  /** Null when there is none or it is not a manifest. */
  manifest: InstallManifest | null;
}

export function readManifestFile(repo: string): ManifestFile {
  const path = join(repo, VENDORED_DIR, MANIFEST_NAME);
  const bytes = readOrNull(path);
  return { path, bytes, manifest: bytes === null ? null : parseManifest(bytes.toString('utf8')) };
}

export function serializeManifest(manifest: InstallManifest): string {
  const settings: Record<string, SettingsEntry> = {};
  for (const file of Object.keys(manifest.settings).sort()) {
    const e = manifest.settings[file] as SettingsEntry;
    settings[file] = { existed_before: e.existed_before, created_hooks_key: e.created_hooks_key, created_events: e.created_events, backup: e.backup };
  }
  const ordered = {
    schema: MANIFEST_SCHEMA,
    note: 'Written by `forge-reflect install`; `forge-reflect uninstall` reads it to remove exactly what install added.',
    files: [...manifest.files].sort(),
    created_dirs: [...new Set(manifest.created_dirs)].sort(),
    settings,
    slash_command: manifest.slash_command,
    // Only when there are any: a manifest without hook files keeps its bytes.
    ...(manifest.hook_files && Object.keys(manifest.hook_files).length > 0
      ? {
          hook_files: Object.fromEntries(
            Object.keys(manifest.hook_files)
              .sort()
              .map((rel) => [rel, (manifest.hook_files as Record<string, string>)[rel] as string]),
          ),
        }
      : {}),
  };
  return `${JSON.stringify(ordered, null, 2)}\n`;
}

/**
 * Dependency bumps are not failures: a commit by a dependency bot (Renovate, Dependabot, …), or a
 * `deps`-scoped / "bump X from A to B" commit that touches only manifests and lockfiles. Pure.
 */
import { parseConventional, subjectOf } from './commit-message.js';

/** Bot accounts that open dependency updates, matched on the author's name or email. */
const BOT_AUTHOR = /\b(renovate|dependabot|greenkeeper|depfu|snyk-bot|pyup-bot|whitesource|mend-bolt|renovate-bot|scala-steward)\b/i;
const DEPS_SCOPE = /^(deps|deps-dev|dev-deps|dependencies|dependency|devdependencies|lockfile)$/i;
const BUMP_SUBJECT = /\b(bump|update|upgrade|pin)\b.*\b(from|to|v?\d+\.\d+)/i;

/** Manifests and lockfiles of the common package managers (and the bots' own configuration). */
export const MANIFEST_PATH =
  /(^|\/)(package\.json|package-lock\.json|npm-shrinkwrap\.json|yarn\.lock|pnpm-lock\.yaml|pnpm-workspace\.yaml|bun\.lockb?|\.yarnrc\.yml|cargo\.toml|cargo\.lock|go\.mod|go\.sum|gemfile|gemfile\.lock|composer\.json|composer\.lock|poetry\.lock|pipfile|pipfile\.lock|pyproject\.toml|uv\.lock|requirements[^/]*\.txt|\.nvmrc|\.node-version|\.tool-versions|renovate\.json5?|\.renovaterc(\.json)?|\.github\/dependabot\.ya?ml)$/i;

export const LOCKFILE_PATH =
  /(^|\/)(package-lock\.json|npm-shrinkwrap\.json|yarn\.lock|pnpm-lock\.yaml|bun\.lockb?|cargo\.lock|go\.sum|gemfile\.lock|composer\.lock|poetry\.lock|pipfile\.lock|uv\.lock|[^/]+\.lock)$/i;

export interface BumpInput {
  author: string;
  message: string;
  files: readonly string[];
}

/** Why a commit is a dependency bump, or null when it is not one. */
export function dependencyBump(input: BumpInput): string | null {
  if (BOT_AUTHOR.test(input.author)) return `a dependency bot wrote it (${input.author})`;
  const onlyManifests = input.files.length > 0 && input.files.every((f) => MANIFEST_PATH.test(f));
  if (!onlyManifests) return null;
  const subject = subjectOf(input.message);
  const header = parseConventional(subject);
  if (header?.scope && header.scope.split(/[,\s]+/).some((s) => DEPS_SCOPE.test(s)))
    return `a ${header.type}(${header.scope}) commit touching only manifests and lockfiles`;
  if (BUMP_SUBJECT.test(header?.description ?? subject)) return 'a version bump touching only manifests and lockfiles';
  return null;
}

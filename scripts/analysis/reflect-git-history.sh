#!/usr/bin/env bash
# reflect-git-history.sh — P2: of the failures a git history shows, how many could only
# self-reflection have caught?
#
# Usage:
#   reflect-git-history.sh [--repo DIR] [--since DATE] [--window 14d] [--format json|markdown]
#   reflect-git-history.sh --help
#
#   --repo DIR      the repository (default .)
#   --since DATE    count signals from this date: 2025-01-01, 2025-01-01T00:00:00Z, 90d or
#                   "6 months ago" (default: the whole history)
#   --window D      how soon after a feature a fix counts as fixing it: 14d, 2w, 36h (default 14d)
#   --format F      json (default) or markdown
#
# Failure signals: reverts (`Revert "…"`, `Reapply "…"`, `revert:` headers, a `This reverts commit
# <sha>` body, with or without the subject) with the reverted commit and the delay; fixes (a
# fix/hotfix Conventional Commits type; in repositories where fewer than half the commits are
# Conventional, a fix keyword in the subject) touching a file a feature commit or feature merge
# changed inside the window. Renames carry a file's history; merges are diffed against their first
# parent and count as feature merges, never as signals themselves.
#
# Gate heuristic (pre-registered, first match wins):
#   CI               the fixing commit touches tests, CI configuration or build files, or its
#                    message names a failing build or test;
#   human review     the change it fixes touched a surface the risk floor marks needs_review;
#   self-reflection  everything else.
# Kill condition (printed to stderr before any result): KILL if the only-self-reflection bucket
# holds under 10% of the signals; INCONCLUSIVE with fewer than 10 signals or no commits in range.
#
# Requirements: bash, git, Node.js >= 20, and the forge-reflect kit built (npm run build) or
# `forge-reflect` on PATH. Offline; one streaming `git log` pass. JSON or markdown on stdout.
# Exit: 0 a report (whatever the verdict), 1 not a readable repository, 2 bad flags.
set -euo pipefail

usage() { sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; }
die() { printf 'reflect-git-history.sh: %s\n' "$1" >&2; exit 2; }

repo=. since='' window=14d format=json
while (($# > 0)); do
  case $1 in
    -h | --help) usage; exit 0 ;;
    --repo | --since | --window | --format)
      (($# >= 2)) || die "$1 needs a value; see --help"
      case $1 in
        --repo) repo=$2 ;; --since) since=$2 ;; --window) window=$2 ;; --format) format=$2 ;;
      esac
      shift 2 ;;
    *) die "unknown argument '$1'; see --help" ;;
  esac
done
[[ $window =~ ^[0-9]{1,6}[mhdw]$ && ! $window =~ ^0+[mhdw]$ ]] || die "--window '$window' is not a duration, e.g. 14d, 2w or 36h"
[[ $format == json || $format == markdown ]] || die "--format '$format' is not json or markdown"
if [[ ! -d $repo ]]; then
  printf 'reflect-git-history.sh: cannot read the repository %s; pass --repo a git repository folder\n' "$repo" >&2
  exit 1
fi

printf 'Kill condition (pre-registered): KILL if under 10%% of failure signals (reverts; fixes within %s of a feature) are catchable only by self-reflection (not CI, not human review).\n' "$window" >&2

cli="$(dirname "$0")/../../packages/forge-reflect/bin/forge-reflect.js"
args=(analyze git-history "--repo=$repo" "--window=$window" "--format=$format")
[[ -z $since ]] || args+=("--since=$since")
if [[ -f $cli ]]; then exec node "$cli" "${args[@]}"; fi
command -v forge-reflect >/dev/null 2>&1 || { printf 'reflect-git-history.sh: the forge-reflect CLI was not found; run npm run build in the kit or put forge-reflect on PATH\n' >&2; exit 1; }
exec forge-reflect "${args[@]}"

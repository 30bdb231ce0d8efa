#!/usr/bin/env bash
# reflect-git-history.sh — P2: of the failures a git history shows, how many could only
# self-reflection have caught?
#
# Usage:
#   reflect-git-history.sh [--repo DIR] [--since DATE] [--window 14d] [--format json|markdown]
#                          [--repo-name NAME] [--sample N --seed S --out SHEET.jsonl] [--labels SHEET.jsonl]
#   reflect-git-history.sh --help
#
#   --repo DIR        the repository (default .)
#   --since DATE      count signals from this date: 2025-01-01, 2025-01-01T00:00:00Z, 90d or
#                     "6 months ago" (default: the whole history)
#   --window D        how soon after the change that introduced it a failure counts: 14d, 2w, 36h (default 14d)
#   --format F        json (default) or markdown
#   --repo-name NAME  the repository's name, removed from paths before the risk-floor match
#                     (default: origin's URL, else the folder's name)
#   --sample N        also write a labelling sheet of N signals (stratified by bucket) to --out
#   --seed S          the sample's seed (default 0)
#   --out FILE        where the sheet goes (- for stdout, then no report)
#   --labels FILE     a filled sheet: agreement per bucket, and the verdict from the labels
#
# Example: label 50 signals, then read them back
#   reflect-git-history.sh --repo ../app --sample 50 --seed 1 --out sheet.jsonl
#   reflect-git-history.sh --repo ../app --labels sheet.jsonl --format markdown
#
# Failure signals: real reverts (a `Revert "…"`/`Reapply "…"` subject, a `revert:` header, or one
# `This reverts commit <sha>` paragraph of the commit's own, not a squash body quoting many), with
# the reverted commit as the cause; fixes (a fix/hotfix Conventional Commits type; in repositories
# where fewer than half the commits are Conventional, a fix keyword) whose deleted or modified lines
# blame (SZZ, at the fix's first parent) to commits inside the window: those commits, of any type,
# are the causes. Not counted, each counted apart: dependency bumps, quoted reverts, reverts of
# reverts, the other copies of a patch (paths reduced to base names), signals written with their
# cause (delay 0) or before it, fixes that only add lines, fixes with nothing to blame (tests, docs,
# lockfiles, generated files, comments), fixes whose lines predate the window. Delays and the window
# are by author date (a rebase keeps it), the committer date where that is missing or later.
#
# Gate heuristic (pre-registered, first match wins; docs/analysis.md):
#   CI               the fix adds or changes a test, its message names a failing build or test, or
#                    the defect sits in CI or build files only;
#   human review     the introducing change touched a surface the risk floor marks needs_review
#                    (the repository's own name removed from paths first);
#   self-reflection  everything else.
# Kill condition (printed to stderr before any result): KILL if the 95% Wilson interval of the
# only-self-reflection share lies below 10%, CONTINUE if at or above, INCONCLUSIVE if it straddles,
# with fewer than 10 signals, or when a shallow clone cannot blame back as far as the window needs.
#
# Requirements: bash, git, Node.js >= 20, and the forge-reflect kit built (npm run build) or
# `forge-reflect` on PATH. Offline; one `git log` pass for names and one for -U0 patches, plus
# `git blame` for lines that came in through a merge and `git diff-tree` for a --sample sheet.
# Exit: 0 a report (whatever the verdict), 1 not a readable repository or a labels file that does
# not match its sheet, 2 bad flags.
set -euo pipefail

usage() { sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; }
die() { printf 'reflect-git-history.sh: %s\n' "$1" >&2; exit 2; }

repo=. since='' window=14d format=json repo_name='' sample='' seed='' out='' labels=''
while (($# > 0)); do
  case $1 in
    -h | --help) usage; exit 0 ;;
    --repo | --since | --window | --format | --repo-name | --sample | --seed | --out | --labels)
      (($# >= 2)) || die "$1 needs a value; see --help"
      case $1 in
        --repo) repo=$2 ;; --since) since=$2 ;; --window) window=$2 ;; --format) format=$2 ;;
        --repo-name) repo_name=$2 ;; --sample) sample=$2 ;; --seed) seed=$2 ;; --out) out=$2 ;; --labels) labels=$2 ;;
      esac
      shift 2 ;;
    *) die "unknown argument '$1'; see --help" ;;
  esac
done
[[ $window =~ ^[0-9]{1,6}[mhdw]$ && ! $window =~ ^0+[mhdw]$ ]] || die "--window '$window' is not a duration, e.g. 14d, 2w or 36h"
[[ $format == json || $format == markdown ]] || die "--format '$format' is not json or markdown"
[[ -z $sample || $sample =~ ^[0-9]{1,6}$ ]] || die "--sample '$sample' is not a whole number, e.g. --sample 50"
[[ -z $seed || $seed =~ ^[0-9]{1,10}$ ]] || die "--seed '$seed' is not a whole number, e.g. --seed 1"
[[ -z $sample || -n $out ]] || die "--sample needs --out FILE.jsonl (the labelling sheet), e.g. --sample 50 --seed 1 --out sheet.jsonl"
[[ -z $sample || -z $labels ]] || die "--sample writes a sheet and --labels reads one; use one at a time"
if [[ ! -d $repo ]]; then
  printf 'reflect-git-history.sh: cannot read the repository %s; pass --repo a git repository folder\n' "$repo" >&2
  exit 1
fi

printf 'Kill condition (pre-registered): KILL if the 95%% Wilson interval of the share of failure signals (real reverts; fixes whose deleted lines blame to a commit within %s) catchable only by self-reflection (not CI, not human review) lies below 10%%; INCONCLUSIVE if it straddles 10%%.\n' "$window" >&2

cli="$(dirname "$0")/../../packages/forge-reflect/bin/forge-reflect.js"
args=(analyze git-history "--repo=$repo" "--window=$window" "--format=$format")
[[ -z $since ]] || args+=("--since=$since")
[[ -z $repo_name ]] || args+=("--repo-name=$repo_name")
[[ -z $sample ]] || args+=("--sample=$sample" "--out=$out")
[[ -z $seed ]] || args+=("--seed=$seed")
[[ -z $labels ]] || args+=("--labels=$labels")
if [[ -f $cli ]]; then exec node "$cli" "${args[@]}"; fi
command -v forge-reflect >/dev/null 2>&1 || { printf 'reflect-git-history.sh: the forge-reflect CLI was not found; run npm run build in the kit or put forge-reflect on PATH\n' >&2; exit 1; }
exec forge-reflect "${args[@]}"

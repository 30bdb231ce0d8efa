#!/usr/bin/env bash
# reflect-board-history.sh — P3: how many completed tasks get a machine-detectable outcome?
#
# Usage:
#   reflect-board-history.sh --board FILE [--board FILE ...] [--window 30d] [--format json|markdown]
#   reflect-board-history.sh --data-dir DIR [--window 30d] [--format json|markdown]
#   reflect-board-history.sh --help
#
#   --board FILE    a task export: JSON or JSON Lines of tasks {id, status, completed_at, events}
#                   and outcome events {task_id, type, at}, or GitHub Issues JSON as the REST API
#                   returns it (issues, and issue events for reopenings). Shapes: docs/analysis.md
#   --data-dir DIR  a folder of task files kept in git (JSON, or text with a `status:` line); each
#                   file's status is read at every commit that touched it
#   --window D      how long after completion an outcome counts: 30d, 4w (default 30d)
#   --format F      json (default) or markdown
#
# A machine-detectable outcome is a later event inside the window that says the task was right or
# wrong: reopened, a revert of its commits, a linked bug, a recorded `forge-reflect outcome`.
# Kill condition (printed to stderr before any result): KILL if under 20% of completed tasks have
# one; INCONCLUSIVE with no completed tasks.
#
# Requirements: bash, Node.js >= 20, git (for --data-dir), and the forge-reflect kit built
# (npm run build) or `forge-reflect` on PATH. Offline. JSON or markdown on stdout.
# Exit: 0 a report (whatever the verdict), 1 unreadable input, 2 bad flags.
set -euo pipefail

usage() { sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; }
die() { printf 'reflect-board-history.sh: %s\n' "$1" >&2; exit 2; }
unreadable() { printf 'reflect-board-history.sh: cannot read %s; %s\n' "$1" "$2" >&2; exit 1; }

boards=() dirs=() window=30d format=json
while (($# > 0)); do
  case $1 in
    -h | --help) usage; exit 0 ;;
    --board | --data-dir | --window | --format)
      (($# >= 2)) || die "$1 needs a value; see --help"
      case $1 in
        --board) boards+=("$2") ;; --data-dir) dirs+=("$2") ;; --window) window=$2 ;; --format) format=$2 ;;
      esac
      shift 2 ;;
    *) die "unknown argument '$1'; see --help" ;;
  esac
done
((${#boards[@]} + ${#dirs[@]} > 0)) || die "give --board FILE or --data-dir DIR, e.g. --board issues.json"
[[ $window =~ ^[0-9]{1,6}[mhdw]$ && ! $window =~ ^0+[mhdw]$ ]] || die "--window '$window' is not a duration, e.g. 30d or 4w"
[[ $format == json || $format == markdown ]] || die "--format '$format' is not json or markdown"

args=(analyze board-history "--window=$window" "--format=$format")
for f in "${boards[@]+"${boards[@]}"}"; do
  [[ -r $f && -f $f ]] || unreadable "$f" 'pass a readable export file'
  args+=("--board=$f")
done
for d in "${dirs[@]+"${dirs[@]}"}"; do
  [[ -d $d ]] || unreadable "$d" 'pass a folder of task files inside a git repository'
  args+=("--data-dir=$d")
done

printf 'Kill condition (pre-registered): KILL if under 20%% of completed tasks have a machine-detectable outcome within %s of completion.\n' "$window" >&2

cli="$(dirname "$0")/../../packages/forge-reflect/bin/forge-reflect.js"
if [[ -f $cli ]]; then exec node "$cli" "${args[@]}"; fi
command -v forge-reflect >/dev/null 2>&1 || { printf 'reflect-board-history.sh: the forge-reflect CLI was not found; run npm run build in the kit or put forge-reflect on PATH\n' >&2; exit 1; }
exec forge-reflect "${args[@]}"

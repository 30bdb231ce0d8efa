#!/usr/bin/env bash
# reflect-stop-hook.sh: at the end of every agent turn (Stop), writes one reflection.v1 sidecar
# (the agent's self-report merged with the mechanical risk floor of everything the session changed)
# and spools the Stop and reflection.written events for the SQLite log.
#
# The kit's promise: with REFLECTION_MODE unset/off/unknown it does nothing at all; otherwise it
# exits 0, prints nothing on stdout, never emits a decision (it observes, it never steers), writes
# every file through a temp file and a rename, and degrades instead of failing: no git repo, no node,
# a slow git or helper, a bad self-report all still give a valid sidecar with degraded=true.
#
# Environment: REFLECTION_MODE (off|solo|orchestrated), FORGE_DIR (state dir, default
# <repo>/.forge), REFLECTION_DIR (sidecars, default $FORGE_DIR/reflections), REFLECTION_INPUT
# (self-report, default $FORGE_DIR/reflection-input.json), REFLECTION_TASK_REF, REFLECTION_AGENT,
# REFLECTION_ATTEMPT, REFLECTION_RISK_THRESHOLD, FORGE_REFLECT_CLI (the CLI used to drain the spool;
# default: forge-reflect on PATH; `off`: none).

case "${REFLECTION_MODE:-}" in solo | orchestrated) ;; *) exit 0 ;; esac
trap 'forge_stop_cleanup 2>/dev/null; exit 0' EXIT
trap 'exit 0' TERM INT HUP PIPE
if [[ -n ${FORGE_DEBUG:-} ]]; then exec >/dev/null; else exec >/dev/null 2>&1; fi
((${BASH_VERSINFO[0]:-0} >= 4)) || exit 0
umask 077
set -o noclobber

here=${BASH_SOURCE[0]%/*}
# shellcheck source=lib/common.sh
source "$here/lib/common.sh" || exit 0
# shellcheck source=lib/risk-table.sh
source "$here/lib/risk-table.sh" || FORGE_RISK_TABLE_MISSING=1

# Time limits, well inside the 30 s registration: all git calls together, then the node helper.
FORGE_GIT_BUDGET=${FORGE_GIT_BUDGET:-12}
[[ $FORGE_GIT_BUDGET =~ ^[1-9][0-9]?$ ]] || FORGE_GIT_BUDGET=12
FORGE_HELPER_SECONDS=5
# The bash fallback lists and classifies at most this many changed files: pure bash needs ~0.2 ms a
# file, so 100,000 untracked files would take ~20 s. The cut is named in risk.reason (degraded).
FORGE_FALLBACK_MAX_FILES=${FORGE_FALLBACK_MAX_FILES:-5000}
[[ $FORGE_FALLBACK_MAX_FILES =~ ^[1-9][0-9]{0,5}$ ]] || FORGE_FALLBACK_MAX_FILES=5000
FORGE_LOCK_STALE_SECONDS=60

work='' lock='' sidecar_tmp='' input_taken='' input=''
# shellcheck disable=SC2329 # called from the EXIT trap
forge_stop_cleanup() {
  [[ -n $sidecar_tmp ]] && rm -f -- "$sidecar_tmp"
  [[ -n ${FORGE_SPOOL_TMP:-} ]] && rm -f -- "$FORGE_SPOOL_TMP"
  # A self-report taken but never placed goes back where it was, unless a new one arrived meanwhile.
  if [[ -n $input_taken && -f $input_taken ]]; then
    if [[ -e $input || -L $input ]] || ! forge_no_links "$input"; then rm -f -- "$input_taken"; else mv -f -- "$input_taken" "$input"; fi
  fi
  [[ -n $work ]] && rm -rf -- "$work"
  [[ -n $lock ]] && rm -rf -- "$lock"
}

# forge_take_lock NAME: a per-session lock folder holding "<pid> <start second>". Stale when its
# process is gone or it is older than a minute, so a killed run never disables later ones.
forge_take_lock() {
  local path=$FORGE_STATE/locks/$1.lock held='' pid='' started=''
  forge_ensure_dir "$FORGE_STATE/locks" || return 1
  if ! mkdir -m 0700 -- "$path" 2>/dev/null; then
    [[ -f $path/owner ]] && IFS=' ' read -r pid started <"$path/owner"
    if [[ $pid =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null &&
      [[ $started =~ ^[0-9]+$ ]] && ((${FORGE_NOW_US:0:10} - started < FORGE_LOCK_STALE_SECONDS)); then
      held=1
    fi
    [[ -n $held ]] && return 1
    rm -rf -- "$path"
    mkdir -m 0700 -- "$path" 2>/dev/null || return 1
  fi
  lock=$path
  printf '%s %s\n' "$$" "$((10#${FORGE_NOW_US:0:10}))" >"$path/owner"
}

# forge_count_attempts DIR SAFE_SESSION TASK_JSON: 1 + the sidecars of this session and task.
forge_count_attempts() {
  local dir=$1 safe=$2 task=$3 file text count=1
  shopt -s nullglob
  for file in "$dir"/*-"$safe"-*.reflection.json; do
    text=''
    IFS= read -r -d '' -n 8192 text <"$file"
    [[ $text == *"\"task_ref\": $task"* || $text == *"\"task_ref\":$task"* ]] && count=$((count + 1))
  done
  shopt -u nullglob
  FORGE_ATTEMPT=$count
}

# forge_fallback_sidecar FILE: the sidecar in pure bash (risk from the generated twin of the risk
# floor, no self-report: it cannot be checked without node). Always degraded.
forge_fallback_sidecar() {
  local out=$1 record path json_files='' first=1 threshold more=''
  local -a files=()
  local -A seen=()
  if [[ $git_ok == 1 ]]; then
    while IFS= read -r -d '' record; do
      path=${record#*$'\t'}
      path=${path#*$'\t'}
      [[ $record == *$'\t'*$'\t'* && -n $path && -z ${seen[$path]:-} ]] || continue
      ((${#files[@]} < FORGE_FALLBACK_MAX_FILES)) || { more=1; break; }
      seen[$path]=1
      files+=("$path")
    done <"$work/numstat"
    while [[ -z $more ]] && IFS= read -r -d '' path; do
      [[ -n $path && -z ${seen[$path]:-} ]] || continue
      ((${#files[@]} < FORGE_FALLBACK_MAX_FILES)) || { more=1; break; }
      seen[$path]=1
      files+=("$path")
    done <"$work/untracked"
  fi
  # Sorted like the node helper: byte order, NUL-separated so any file name survives.
  if ((${#files[@]} > 1)); then
    mapfile -d '' -t files < <(printf '%s\0' "${files[@]}" | LC_ALL=C sort -z)
  fi
  if [[ -z ${FORGE_RISK_TABLE_MISSING:-} ]]; then
    forge_risk_threshold "${REFLECTION_RISK_THRESHOLD:-}" || FORGE_RISK_THRESHOLD=$FORGE_RISK_DEFAULT_THRESHOLD
    threshold=$FORGE_RISK_THRESHOLD
    forge_risk_evaluate "$threshold" "${files[@]}"
  else
    FORGE_RISK_SURFACE=none FORGE_RISK_SCORE=0 FORGE_RISK_NEEDS_REVIEW=false
    FORGE_RISK_REASON='risk floor unavailable: hooks/lib/risk-table.sh is missing'
  fi
  [[ -n $more ]] && FORGE_RISK_REASON+="; bash fallback: only the first $FORGE_FALLBACK_MAX_FILES changed files were listed and classified, the rest were not (node was unavailable or too slow)"
  for path in "${files[@]}"; do
    forge_json_string "$path"
    if [[ -n $first ]]; then json_files+=$'\n    '"$FORGE_JSON"; first=''; else json_files+=$',\n    '"$FORGE_JSON"; fi
  done
  [[ -n $json_files ]] && json_files+=$'\n  '
  forge_json_string "$FORGE_RISK_REASON"
  local reason_json=$FORGE_JSON
  {
    printf '{\n  "schema": "reflection.v1",\n'
    printf '  "task_ref": %s,\n  "agent": %s,\n  "session_id": %s,\n' "$task_json" "$agent_json" "$session_json"
    printf '  "timestamp": "%s",\n  "repo": %s,\n' "$FORGE_NOW_ISO" "$repo_json"
    printf '  "confidence": null,\n  "most_likely_wrong": null,\n  "known_not_in_diff": null,\n'
    printf '  "risk": {\n    "needs_review": %s,\n    "score": %s,\n    "surface": "%s",\n    "reason": %s\n  },\n' \
      "$FORGE_RISK_NEEDS_REVIEW" "$FORGE_RISK_SCORE" "$FORGE_RISK_SURFACE" "$reason_json"
    printf '  "files_changed": [%s],\n' "$json_files"
    printf '  "provenance": {\n    "source": "stop-hook",\n    "reflection_attempt": %s,\n    "degraded": true,\n    "reflection_mode": "%s"\n  }\n}\n' \
      "$FORGE_ATTEMPT" "$REFLECTION_MODE"
  } >"$out"
}

# forge_git ARGS...: git in the work tree within what is left of the git budget. After one
# timeout no further git call is made: the sidecar is written degraded instead.
git_dead=''
forge_git() {
  local left=$((git_deadline - ${EPOCHREALTIME%%[.,]*})) rc
  [[ -z $git_dead ]] && ((left > 0)) || return 1
  forge_bounded "$left" git -C "$FORGE_ROOT" "$@" 2>/dev/null
  rc=$?
  ((rc == 124 || rc == 137)) && git_dead=1
  return "$rc"
}

# forge_sweep DIR: removes what killed runs left behind (`.tmp-<pid>-…` of a pid that is gone).
# A self-report such a run had taken goes back to its place first, unless a newer one is there.
forge_sweep() {
  local entry pid
  shopt -s nullglob
  for entry in "$1"/.tmp-*; do
    pid=${entry##*/.tmp-}
    pid=${pid#stop-}
    pid=${pid%%-*}
    if [[ ! $pid =~ ^[0-9]+$ ]] || ((pid == $$)) || kill -0 "$pid" 2>/dev/null; then continue; fi
    # A link with a leftover's name was planted, not left: remove the link, never follow it.
    if [[ -L $entry ]]; then
      rm -f -- "$entry"
      continue
    fi
    [[ -d $entry && -f $entry/input.json && ! -L $entry/input.json ]] && forge_fresh "$input" && forge_no_links "$input" &&
      mv -f -- "$entry/input.json" "$input"
    rm -rf -- "$entry"
  done
  shopt -u nullglob
}

forge_state_dir
forge_ensure_state || exit 0
forge_spool_open Stop stop-hook || exit 0

# Ids from the payload: the session as given (for the sidecar), and its safe form (for file names).
forge_payload_field "$FORGE_SPOOL_TMP" session_id sessionId conversation_id
session_id=${FORGE_FIELD:0:256}
session_id=${session_id:-unknown}
forge_safe_id "$session_id"
safe_session=$FORGE_SAFE_ID
forge_spool_commit

forge_take_lock "stop-$safe_session" || exit 0

input=${REFLECTION_INPUT:-$FORGE_STATE/reflection-input.json}
forge_sweep "$FORGE_STATE"
work=$FORGE_STATE/.tmp-stop-$$-$RANDOM
mkdir -m 0700 -- "$work" || exit 0

# What git says: everything since the session's base commit (or HEAD), and untracked files.
git_ok=0 repo='' branch='' head=''
git_deadline=$((${EPOCHREALTIME%%[.,]*} + FORGE_GIT_BUDGET))
if [[ -n $FORGE_ROOT ]] && command -v git >/dev/null 2>&1; then
  repo=${FORGE_ROOT%/}
  repo=${repo##*/}
  # One git call for the commit and the branch ("HEAD" when detached); an unborn branch has no
  # commit, so only then is the branch asked for on its own.
  head_and_branch=$(forge_git rev-parse 'HEAD^{commit}' --abbrev-ref HEAD) || head_and_branch=''
  head=${head_and_branch%%$'\n'*}
  branch=${head_and_branch#*$'\n'}
  [[ $head =~ ^[0-9a-f]{40,64}$ && $branch != "$head_and_branch" ]] || { head='' branch=''; }
  [[ $branch == HEAD ]] && branch=''
  [[ -n $head ]] || branch=$(forge_git symbolic-ref --short -q HEAD)
  base=$head
  if [[ -f $FORGE_STATE/sessions/$safe_session.base ]]; then
    IFS= read -r recorded <"$FORGE_STATE/sessions/$safe_session.base"
    [[ $recorded =~ ^[0-9a-f]{40,64}$ ]] && base=$recorded
  fi
  # No commit yet: everything is measured against the empty tree.
  [[ -n $base ]] || base=$(forge_git hash-object -t tree /dev/null)
  if [[ -n $base ]] &&
    { forge_git diff --numstat -z --no-renames "$base" -- >"$work/numstat" ||
      { [[ -n $head && $base != "$head" ]] && forge_git diff --numstat -z --no-renames "$head" -- >"$work/numstat"; }; } &&
    forge_git ls-files --others --exclude-standard -z >"$work/untracked"; then
    git_ok=1
  fi
fi

if [[ -n ${REFLECTION_TASK_REF:-} ]]; then
  task_ref=$REFLECTION_TASK_REF
elif [[ -n $repo && -n $branch ]]; then
  task_ref="$repo#$branch"
elif [[ -n $repo && -n $head ]]; then
  task_ref="$repo@${head:0:7}"
else
  task_ref=${repo:-unknown}
fi
task_ref=${task_ref:0:512}
forge_json_string "$task_ref"
task_json=$FORGE_JSON
agent=${REFLECTION_AGENT:-unknown}
forge_json_string "${agent:0:256}"
agent_json=$FORGE_JSON
forge_json_string "$session_id"
session_json=$FORGE_JSON
forge_json_string "${repo:-unknown}"
repo_json=$FORGE_JSON

dir=${REFLECTION_DIR:-$FORGE_STATE/reflections}
forge_ensure_dir "$dir" || exit 0

# The attempt: REFLECTION_ATTEMPT when set; in orchestrated mode the count `forge-reflect bounce`
# keeps for the task (bounces + 1); else 1 + the earlier sidecars of this session and task.
attempt_file=''
if [[ $REFLECTION_MODE == orchestrated ]]; then
  forge_task_key "$task_ref"
  attempt_file=$FORGE_STATE/attempts/$FORGE_TASK_KEY.attempt
fi
recorded_attempt=''
[[ -n $attempt_file && -f $attempt_file && ! -L $attempt_file ]] && IFS= read -r recorded_attempt <"$attempt_file"
if [[ ${REFLECTION_ATTEMPT:-} =~ ^[1-9][0-9]{0,8}$ ]]; then
  FORGE_ATTEMPT=$REFLECTION_ATTEMPT
elif [[ $recorded_attempt =~ ^[1-9][0-9]{0,8}$ ]]; then
  FORGE_ATTEMPT=$recorded_attempt
else
  forge_count_attempts "$dir" "$safe_session" "$task_json"
fi

stamp=${FORGE_NOW_ISO//[-:]/}
printf -v unique '%s%04x' "$$" "$RANDOM"
name="$stamp-$safe_session-$unique"
forge_sweep "$dir"
sidecar_tmp="$dir/.tmp-$$-$name.json"
sidecar="$dir/$name.reflection.json"
forge_fresh "$sidecar_tmp" || exit 0

# The self-report is taken first (moved into the work folder), so one written meanwhile waits for
# the next turn instead of being half-read or merged twice.
if [[ -f $input ]] && forge_no_links "$input"; then
  mv -f -- "$input" "$work/input.json" 2>/dev/null && input_taken=$work/input.json
fi

helper=$here/lib/reflect-helper.mjs
status='' degraded=true
if command -v node >/dev/null 2>&1 && [[ -f $helper ]]; then
  # The helper reads and writes local files only: it needs no extra CA certificates (loading them
  # costs ~40 ms a start) and takes none of the user's NODE_OPTIONS (a --require there would run
  # inside the hook). Both are dropped in the command substitution's subshell only.
  status=$(unset NODE_EXTRA_CA_CERTS NODE_OPTIONS
    FORGE_H_OUT=$sidecar_tmp FORGE_H_NUMSTAT=$work/numstat FORGE_H_UNTRACKED=$work/untracked \
    FORGE_H_GIT_OK=$git_ok FORGE_H_INPUT=$input_taken FORGE_H_SESSION_ID=$session_id FORGE_H_TASK_REF=$task_ref \
    FORGE_H_AGENT=${agent:0:256} FORGE_H_REPO=${repo:-unknown} FORGE_H_TIMESTAMP=$FORGE_NOW_ISO \
    FORGE_H_MODE=$REFLECTION_MODE FORGE_H_ATTEMPT=$FORGE_ATTEMPT \
    forge_bounded "$FORGE_HELPER_SECONDS" node "$helper" </dev/null 2>/dev/null) || status=''
  [[ -s $sidecar_tmp ]] || status=''
fi
case "$status" in
  ok*) [[ $git_ok == 1 ]] && degraded=false ;;
  absent* | invalid*) ;;
  *)
    rm -f -- "$sidecar_tmp"
    forge_fallback_sidecar "$sidecar_tmp" || exit 0
    status="invalid not checked: the node helper was unavailable, failed or timed out"
    [[ -n $input_taken ]] || status=absent
    ;;
esac

forge_fresh "$sidecar" || exit 0
mv -f -- "$sidecar_tmp" "$sidecar" || exit 0
sidecar_tmp=''

# The self-report is consumed: next to the sidecar it went into, or kept aside with the reason.
if [[ -n $input_taken ]]; then
  if [[ $status == ok* ]]; then
    mv -f -- "$input_taken" "$dir/$name.input.json" && input_taken=''
  elif forge_ensure_dir "$FORGE_STATE/rejected-input" && forge_fresh "$FORGE_STATE/rejected-input/$name.reason"; then
    printf '%s\n' "${status#invalid }" >"$FORGE_STATE/rejected-input/$name.reason"
    mv -f -- "$input_taken" "$FORGE_STATE/rejected-input/$name.json" && input_taken=''
  fi
fi

forge_json_string "$sidecar"
forge_spool_write reflection.written stop-hook \
  "{\"sidecar\":$FORGE_JSON,\"session_id\":$session_json,\"task_ref\":$task_json,\"degraded\":$degraded,\"self_report\":\"${status%% *}\"}"

# Drain the spool into SQLite when the kit's CLI is reachable, detached: the hook does not wait,
# and the child holds none of the hook's output pipes.
# FORGE_REFLECT_CLI=off: no drain from the hook (the next forge-reflect command drains instead).
cli=${FORGE_REFLECT_CLI:-}
[[ -n $cli ]] || cli=$(command -v forge-reflect 2>/dev/null)
[[ $cli == off ]] && cli=''
if [[ -n $cli && -x $cli ]]; then
  if command -v setsid >/dev/null 2>&1; then
    (cd "${FORGE_ROOT:-$PWD}" && FORGE_DIR=$FORGE_STATE setsid "$cli" ingest </dev/null >/dev/null 2>&1 &)
  else
    (cd "${FORGE_ROOT:-$PWD}" && FORGE_DIR=$FORGE_STATE "$cli" ingest </dev/null >/dev/null 2>&1 &)
  fi
fi
exit 0

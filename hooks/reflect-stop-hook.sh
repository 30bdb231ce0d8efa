#!/usr/bin/env bash
# reflect-stop-hook.sh [RUNTIME]: at the end of every agent turn (Stop), writes one reflection.v1 sidecar
# (the agent's self-report merged with the mechanical risk floor of everything the session changed)
# and spools the Stop and reflection.written events for the SQLite log.
#
# The kit's promise: with REFLECTION_MODE unset/off/unknown it does nothing at all; otherwise it
# exits 0, prints nothing on stdout, never emits a decision (it observes, it never steers), writes
# every file through a temp file and a rename, and degrades instead of failing: no git repo, no node,
# a slow git or helper, a bad self-report all still give a valid sidecar with degraded=true.
#
# RUNTIME (claude-code, codex, gemini, qwen, cline, opencode, copilot) is the runtime the registration
# names: the sidecar's agent unless REFLECTION_AGENT is set.
#
# Environment: REFLECTION_MODE (off|solo|orchestrated), FORGE_DIR (state dir, default
# <repo>/.forge), REFLECTION_DIR (sidecars, default $FORGE_DIR/reflections), REFLECTION_INPUT
# (self-report, default $FORGE_DIR/reflection-input.json), REFLECTION_TASK_REF, REFLECTION_AGENT,
# REFLECTION_ATTEMPT, REFLECTION_RISK_THRESHOLD, FORGE_REFLECT_CLI (the CLI used to drain the spool;
# default: <project>/node_modules/.bin/forge-reflect, then forge-reflect on PATH, then
# forge_cli_elsewhere in lib/common.sh; `off`: none).

case "${REFLECTION_MODE:-}" in solo | orchestrated) ;; *) exit 0 ;; esac
trap 'forge_stop_cleanup 2>/dev/null; exit 0' EXIT
trap 'exit 0' TERM INT HUP PIPE
if [[ -n ${FORGE_DEBUG:-} ]]; then exec >/dev/null; else exec >/dev/null 2>&1; fi
# Bytes, not characters, and ASCII ranges in globs (bash before 5.0 ranges by the locale's collation).
LC_ALL=C
umask 077
set -o noclobber

# Descriptors, fixed numbers (bash 3.2 cannot allocate one: {fd} is bash 4.1): 3 a spool file being
# written (lib/common.sh), 5 and 6 a git call (forge_git), 7 the session's lock, 8 what the helper
# says, 9 the helper's input where bash has no coproc.
here=${BASH_SOURCE[0]%/*}
# The node helper waits on its stdin for the facts (forge_helper_run) while the hook reads the
# payload, takes the lock and asks git, so node's own start overlaps them.
# It reads and writes local files only: it needs no extra CA certificates (loading them is a
# large part of a start) and takes none of the user's NODE_OPTIONS (a --require there would run inside the hook);
# both are dropped in its subshell only. A hook that stops before sending the facts (killed, or done
# early) closes the helper's input, and the helper then reads at most the Stop event's names
# (forge_stop_commit), moves that event into the spool, and writes nothing else.
# --preserve-symlinks-main: node takes the helper's path as given instead of resolving every folder
# of it with lstat and readlink; the helper requires nothing but node's own modules.
helper=$here/lib/reflect-helper.cjs helper_pid='' helper_out='' to_helper='' helper_fifo=''
node_ok=''
command -v node >/dev/null 2>&1 && [[ -f $helper ]] && node_ok=1
if ((BASH_VERSINFO[0] >= 4)); then
  # bash 4 and later: a coproc, started before bash has read the rest of this file. The end of the
  # pipe the helper reads is bash's own descriptor, which bash closes on exec, so no process the
  # hook starts holds it (bash also closes it, and says so in FORGE_HELPER[1], when it reaps a helper
  # that died: to_helper=coproc reads it from there). The end it writes is copied to descriptor 8,
  # so its status is still there to read after bash has reaped it. (In eval: bash 3.2 cannot parse
  # a coproc.)
  forge_helper_start() {
    [[ -n $node_ok ]] || return 1
    eval 'coproc FORGE_HELPER { unset NODE_EXTRA_CA_CERTS NODE_OPTIONS; exec node --preserve-symlinks-main "$helper" 2>/dev/null; }'
    helper_pid=$FORGE_HELPER_PID to_helper=coproc
    exec 8<&"${FORGE_HELPER[0]}"
    helper_out=8
    eval "exec ${FORGE_HELPER[0]}<&-"
  }
  forge_helper_start
else
  # bash 3.2: no coproc, so the helper's input is a FIFO in the state folder (FILE), opened by bash
  # read-write first (an open that never blocks, whoever comes first) as descriptor 9; its output
  # is a process substitution read on 8. Started once the state folder is known. Every process the
  # hook starts after it gets 9 closed where it could outlive the hook (git, the drain).
  forge_helper_start() {
    [[ -n $node_ok ]] && forge_fresh "$1" && mkfifo -m 600 "$1" 2>/dev/null || return 1
    exec 9<>"$1" || return 1
    # The closes are a statement of their own: bash 3.2 hands the program of an `exec` a copy of a
    # descriptor that the same `exec` closes, and the helper would then hold its own input open.
    exec 8< <(unset NODE_EXTRA_CA_CERTS NODE_OPTIONS; exec 9>&- 7>&-; exec node --preserve-symlinks-main "$helper" <"$1" 2>/dev/null)
    helper_pid=$! helper_out=8 to_helper=9 helper_fifo=$1
  }
fi
# Then bash steps aside for a moment: a read that can only time out (the helper says nothing before
# it has the facts, sent further down; a helper that died gives the pipe's end at once). Without
# it node's start competes with bash reading and running the rest of this file on a machine of two
# cores (docs/performance.md).
# Only with bash 5.2 or later and outside POSIX mode, which time a read out with pselect(2). Older
# bash, and POSIX mode, arm a SIGALRM whose handler only sets a flag: one that lands between bash's
# check of that flag and its read(2) would leave this read waiting for bytes the helper sends only
# once it has the facts, and the hook would hang until the runtime kills it.
if [[ -n $helper_out ]] && ((BASH_VERSINFO[0] * 100 + BASH_VERSINFO[1] >= 502)) && ! shopt -qo posix; then
  read -r -t 0.0001 -u "$helper_out" _
fi

# shellcheck source=lib/common.sh
source "$here/lib/common.sh" || exit 0

# Time limits, well inside the 30 s registration: all git calls together, then the node helper.
FORGE_GIT_BUDGET=${FORGE_GIT_BUDGET:-12}
[[ $FORGE_GIT_BUDGET =~ ^[1-9][0-9]?$ ]] || FORGE_GIT_BUDGET=12
FORGE_HELPER_SECONDS=5
# The bash fallback lists and classifies at most this many changed files: pure bash is slow per file,
# and 100,000 untracked files would outlast the budget. The cut is named in risk.reason (degraded).
FORGE_FALLBACK_MAX_FILES=${FORGE_FALLBACK_MAX_FILES:-5000}
[[ $FORGE_FALLBACK_MAX_FILES =~ ^[1-9][0-9]{0,5}$ ]] || FORGE_FALLBACK_MAX_FILES=5000
FORGE_LOCK_STALE_SECONDS=30   # past the hook's own worst case (12 s of git, 5 s of helper)

# work: the prefix of this run's temp files in the state dir, <prefix>.<part> for each of WORK_PARTS
# (no folder for them: a mkdir and an rm are two process starts). The helper removes the payload, the
# status and the committed list once the sidecar stands, and moves a self-report it merged beside
# it; a refused self-report and a refused answer block are moved on by the hook.
WORK_PARTS=(payload status committed untracked input.json block.txt fifo)
work='' lock='' sidecar_tmp='' input_taken='' input='' now_iso_us=0000000000000000
# shellcheck disable=SC2329 # called from the EXIT trap
forge_stop_cleanup() {
  local -a gone=()
  local part
  forge_stop_commit
  # A self-report taken but never placed goes back where it was, unless a new one arrived meanwhile
  # (then it goes with the other temp files).
  if [[ -n $input_taken && -f $input_taken && ! -e $input && ! -L $input ]] && forge_no_links "$input"; then
    mv -f -- "$input_taken" "$input"
  fi
  [[ -n $sidecar_tmp && (-e $sidecar_tmp || -L $sidecar_tmp) ]] && gone+=("$sidecar_tmp")
  [[ -n ${FORGE_SPOOL_TMP:-} && (-e $FORGE_SPOOL_TMP || -L $FORGE_SPOOL_TMP) ]] && gone+=("$FORGE_SPOOL_TMP")
  if [[ -n $work ]]; then
    for part in "${WORK_PARTS[@]}"; do
      [[ -e $work.$part || -L $work.$part ]] && gone+=("$work.$part")
    done
  fi
  # The session's lock, only while it names this run (a lock the helper let go may be another's).
  if [[ -n $lock_owner ]]; then
    forge_lock_ours && gone+=("$lock")
  elif [[ -n $lock ]]; then
    gone+=("$lock")
  fi
  # One rm for all, and none when nothing is left (each process start is on the Stop path's time).
  ((${#gone[@]} == 0)) || rm -rf -- "${gone[@]}"
}

# forge_take_lock NAME: one Stop per session at a time.
# Where /proc shows when a process started (Linux), without starting a process: the file
# locks/NAME.owner, created exclusively (noclobber: O_EXCL, never through a link), holding
# "<pid> <start>": this hook's pid and start time (clock ticks since boot, field 22 of
# /proc/<pid>/stat). That pair names one process for as long as the machine runs, so the lock is
# stale exactly when /proc shows no such process any more (its hook was SIGKILLed): it is then
# removed and taken again. An owner line not yet written is a taker between its open and its write
# when the file is not older than this run's payload, else stale. The helper lets the lock go once
# the sidecar and the count stand (FORGE_H_LOCK); the EXIT trap otherwise, only while it is ours.
# (flock(1) is a process beside node's start, on the Stop hook's time.)
# Elsewhere: flock(1)'s kernel lock on locks/NAME.lock.flock when present, else (a Mac) the file
# locks/NAME.pid, created exclusively as the owner file is, holding "<pid> <start second>", stale
# when its process is gone or it is older than FORGE_LOCK_STALE_SECONDS (a reused pid can then hold
# it that long at most); the helper lets it go as it does the owner file.
# Descriptor 7 is always open (/dev/null until a flock is taken), so the children that must not
# inherit the lock can close it with 7>&-.
# FORGE_PROC_ROOT (default /proc) lets the tests take the other platforms' paths.
FORGE_PROC_ROOT=${FORGE_PROC_ROOT:-/proc}
lock_owner=''
exec 7</dev/null
forge_take_lock() {
  local path=$FORGE_STATE/locks/$1.lock
  forge_ensure_dir "$FORGE_STATE/locks" || return 1
  if forge_proc_start "$$"; then
    forge_lock_file "$FORGE_STATE/locks/$1.owner" "$$ $FORGE_PROC_START" forge_lock_alive_proc
    return
  fi
  if command -v flock >/dev/null 2>&1; then
    [[ -L $path.flock ]] && return 1
    exec 7>&- 7>>"$path.flock" || return 1
    flock -n 7 || return 1
    return 0
  fi
  forge_lock_file "$FORGE_STATE/locks/$1.pid" "$$ $((10#${now_iso_us:0:10}))" forge_lock_alive_young
}

# forge_lock_file PATH OWNER ALIVE: takes the lock file PATH, created exclusively (noclobber: O_EXCL,
# never through a link) holding OWNER ("<pid> <start>"). A lock already there is held while ALIVE
# PID START says its owner is, else it is removed and taken again; one whose owner line is not yet
# written is a taker between its open and its write when the file is not older than this run's
# payload, else stale.
forge_lock_file() {
  local path=$1 owner=$2 alive=$3 pid started try
  for try in 1 2; do
    if printf '%s\n' "$owner" 2>/dev/null >"$path"; then
      lock=$path lock_owner=$owner
      return 0
    fi
    ((try == 1)) && [[ -f $path && ! -L $path ]] || return 1
    pid='' started=''
    IFS=' ' read -r pid started <"$path"
    if forge_decimal "$pid" && forge_decimal "$started" 20; then
      "$alive" "$pid" "$started" && return 1
    elif [[ ! $path -ot $work.payload ]]; then
      return 1
    fi
    rm -f -- "$path"
  done
  return 1
}

# The owner PID that started at START (clock ticks since boot) is still running (/proc).
# shellcheck disable=SC2329 # called by forge_lock_file, by name
forge_lock_alive_proc() {
  forge_proc_start "$1" && [[ $FORGE_PROC_START == "$2" ]]
}

# The owner PID lives and took the lock at START (epoch second) less than the stale time ago.
# shellcheck disable=SC2329 # called by forge_lock_file, by name
forge_lock_alive_young() {
  kill -0 "$1" 2>/dev/null && ((10#${now_iso_us:0:10} - $2 < FORGE_LOCK_STALE_SECONDS))
}

# forge_lock_ours: the session's lock file still names this run as its owner.
forge_lock_ours() {
  local owner=''
  [[ -n $lock_owner && -f $lock && ! -L $lock ]] || return 1
  IFS= read -r owner <"$lock"
  [[ $owner == "$lock_owner" ]]
}

# forge_proc_start PID: sets FORGE_PROC_START to when PID started (clock ticks since boot, field
# 22 of /proc/PID/stat; the fields after the command's closing parenthesis, which the command itself
# may contain), or fails when /proc does not show PID.
forge_proc_start() {
  local stat=''
  local -a fields
  FORGE_PROC_START=''
  [[ -r $FORGE_PROC_ROOT/$1/stat ]] || return 1
  IFS= read -r stat <"$FORGE_PROC_ROOT/$1/stat"
  read -r -a fields <<<"${stat##*) }"
  FORGE_PROC_START=${fields[19]:-}
  forge_decimal "$FORGE_PROC_START" 20
}

# forge_task_key TASK_REF: sets FORGE_TASK_KEY, the file-name key of a task: every byte outside
# [A-Za-z0-9-] becomes _ and two hex digits (acme#42 -> acme_2342), at most 200 characters. The
# CLI (bounce) writes <state>/attempts/<key>.attempt with the same rule.
# A run of kept bytes is taken whole: one step per encoded byte, not per byte (a 40-character
# branch name was ~160 bash commands).
forge_task_key() {
  local LC_ALL=C s=$1 out='' keep hex
  while [[ -n $s ]]; do
    keep=${s%%[^A-Za-z0-9-]*}
    out+=$keep
    s=${s:${#keep}}
    [[ -n $s ]] || break
    # bash 3.2 gives a byte above 127 as a negative number: its low 8 bits are the byte.
    printf -v hex '%d' "'${s:0:1}"
    printf -v hex '_%02x' $((hex & 255))
    out+=$hex
    s=${s:1}
  done
  FORGE_TASK_KEY=${out:0:200}
}

# forge_count_attempts FILE: 1 + the sidecars already written for this session and task, kept as
# a count in FILE (one small read, however long the session: no scan of earlier sidecars).
forge_count_attempts() {
  local count=''
  [[ -f $1 && ! -L $1 ]] && IFS= read -r count <"$1"
  [[ $count =~ ^[0-9]{1,9}$ ]] || count=0
  FORGE_ATTEMPT=$((10#$count + 1))
}


# forge_git ARGS...: git in the work tree within what is left of the git budget. After one
# timeout no further git call is made: the sidecar is written degraded instead.
# Without a `timeout` process: git runs in a process substitution, which writes git's pid and then,
# once git has exited, its status to a pipe; bash reads both with time-limited `read`s (the budget
# spent: git, its own children (pkill -P, where there is one) and the substitution are killed).
# bash never `wait`s for the substitution: a `wait` for one already reaped could wait on the node
# helper instead, which waits on this hook (a deadlock seen once in the suite). The user's
# core.fsmonitor is used as it is: git's daemon, where git starts one, holds none of these
# descriptors (git gives it /dev/null for all three) and is what any `git status` there starts.
# bash 4.0 to 5.0 time a read out with a SIGALRM handler that only sets a flag, which can land
# before the read(2) it was meant to end (bash 3.2 jumps out of the read instead; 5.1 and later use
# pselect): there, forge_bounded.
git_dead=''
forge_git() {
  local left=$((git_deadline - SECONDS)) rc pid
  [[ -z $git_dead ]] && ((left > 0)) || return 1
  if ((BASH_VERSINFO[0] == 4 || (BASH_VERSINFO[0] == 5 && BASH_VERSINFO[1] == 0))); then
    # 7>&- 9>&-: git and what it starts never hold this session's lock or the helper's input.
    forge_bounded "$left" git -C "$FORGE_ROOT" "$@" 2>/dev/null 7>&- 9>&-
    rc=$?
    ((rc == 124 || rc == 137)) && git_dead=1
    return "$rc"
  fi
  local git_pid='' status=''
  exec 5>&1
  exec 6< <(
    # Neither this substitution nor git holds the input of the helper (it must see its end when the
    # hook stops) or the lock of this session.
    forge_to_helper && eval "exec $FORGE_TO_HELPER>&-"
    exec 7>&- 8<&-
    # Job control: git leads a process group of its own, so what it starts is killed with it
    # where there is no pkill (the stand-in). No quote marks in this substitution, comments
    # included: bash 3.2 matches them when it reads the substitution, at run time.
    set -m
    git -C "$FORGE_ROOT" "$@" >&5 2>/dev/null 5>&- &
    printf '%s\n' "$!"
    wait "$!"
    printf '%s\n' "$?"
  )
  pid=$!
  exec 5>&-
  IFS= read -r -t "$left" -u 6 git_pid && left=$((git_deadline - SECONDS)) &&
    ((left > 0)) && IFS= read -r -t "$left" -u 6 status
  if [[ ! $status =~ ^[0-9]{1,3}$ ]]; then
    git_dead=1
    if [[ $git_pid =~ ^[0-9]+$ ]]; then
      command -v pkill >/dev/null 2>&1 && pkill -KILL -P "$git_pid"
      kill -KILL -- "-$git_pid" 2>/dev/null
      kill -KILL "$git_pid" 2>/dev/null
      # The substitution reaps the killed git and writes its status: once that is read, git is gone.
      IFS= read -r -t 1 -u 6 status || kill -KILL "$pid" 2>/dev/null
    else
      kill -KILL "$pid" 2>/dev/null
    fi
  fi
  exec 6<&-
  [[ -n $git_dead ]] && return 1
  return "$status"
}

# forge_sweep DIR: removes what killed runs left behind (`.tmp-<pid>-…` of a pid that is gone), with
# one rm. A self-report such a run had taken (`.tmp-stop-<pid>-<n>.input.json`, or `input.json` in
# the folder older versions used) goes back to its place first, unless a newer one is there.
forge_sweep() {
  local entry pid taken
  local -a gone=()
  shopt -s nullglob
  for entry in "$1"/.tmp-*; do
    pid=${entry##*/.tmp-}
    pid=${pid#stop-}
    pid=${pid%%-*}
    if [[ ! $pid =~ ^[0-9]+$ ]] || ((pid == $$)) || kill -0 "$pid" 2>/dev/null; then continue; fi
    # A link with a leftover's name was planted, not left: the link goes (rm never follows it).
    if [[ ! -L $entry ]]; then
      taken=''
      [[ -f $entry && $entry == *.input.json ]] && taken=$entry
      [[ -d $entry && -f $entry/input.json && ! -L $entry/input.json ]] && taken=$entry/input.json
      if [[ -n $taken ]] && forge_fresh "$input" && forge_no_links "$input" && mv -f -- "$taken" "$input"; then
        [[ $taken == "$entry" ]] && continue
      fi
    fi
    gone+=("$entry")
  done
  shopt -u nullglob
  ((${#gone[@]} == 0)) || rm -rf -- "${gone[@]}"
}

# forge_to_helper: sets FORGE_TO_HELPER to the descriptor of the helper's input, or fails when
# there is none (any more).
forge_to_helper() {
  FORGE_TO_HELPER=$to_helper
  [[ $to_helper == coproc ]] && FORGE_TO_HELPER=${FORGE_HELPER[1]:-}
  [[ -n $FORGE_TO_HELPER ]]
}

# forge_helper_send NAME=VALUE...: sends facts to the helper as NUL-separated records, leaving its
# input open for more. Fails when it cannot be reached: a helper already gone costs a write error,
# not the SIGPIPE trap's exit.
forge_helper_send() {
  local rc=0
  forge_to_helper || return 1
  trap '' PIPE
  printf '%s\0' "$@" >&"$FORGE_TO_HELPER" || rc=1
  trap 'exit 0' PIPE
  return "$rc"
}

# forge_helper_run NAME=VALUE...: sends the last facts and the end record (FORGE_H_END) and waits, at
# most FORGE_HELPER_SECONDS, for the end of the helper's stdout: it closes it once it is done with
# every file (FORGE_H_CLOSE_STDOUT). The helper's input stays open until this hook exits: the helper
# waits for that before its own last steps (starting the drain, node's teardown), so they do not
# compete with this hook's for the CPU. Sets
# FORGE_HELPER_STATUS to its one status line, which it writes only once the sidecar is written; a
# helper that fails says nothing or something else, which the caller refuses. Fails when the helper
# could not be reached or ran out of time (then it is killed first, so it writes nothing after the
# bash fallback has).
forge_helper_run() {
  local rc=0
  FORGE_HELPER_STATUS=''
  forge_helper_send "$@" FORGE_H_CLOSE_STDOUT=1 FORGE_H_END=1 || rc=1
  if ((rc == 0)); then
    # Out of time: above 128, or (bash 3.2, which keeps nothing of a read that timed out) nothing.
    IFS= read -r -d '' -t "$FORGE_HELPER_SECONDS" FORGE_HELPER_STATUS <&"$helper_out"
    if (($? > 128)) || [[ -z $FORGE_HELPER_STATUS ]]; then
      kill -KILL "$helper_pid" 2>/dev/null
      wait "$helper_pid"
      rc=1
    fi
  fi
  exec 8<&-
  helper_pid=''
  FORGE_HELPER_STATUS=${FORGE_HELPER_STATUS%$'\n'}
  return "$rc"
}

# forge_stop_commit: moves the Stop event into the spool with forge_spool_commit, unless the helper
# already has. (Both may try: the one name moves once, and neither ever replaces a file.)
stop_tmp='' stop_name=''
forge_stop_commit() {
  [[ -n $stop_name ]] || return 0
  FORGE_SPOOL_TMP=$stop_tmp FORGE_SPOOL_NAME=$stop_name forge_spool_commit
  stop_name=''
}


# forge_stop_work_names: this run's temp names (see WORK_PARTS), every one new (noclobber does the
# rest); on bash 3.2 the helper starts now that the state folder is known (bash 4: a coproc, above).
forge_stop_work_names() {
  work=$FORGE_STATE/.tmp-stop-$$-$RANDOM
  for part in "${WORK_PARTS[@]}"; do
    forge_fresh "$work.$part" || work=''   # not ours: never touched, not even by the cleanup
  done
  [[ -z $helper_pid && -n $work ]] && ((BASH_VERSINFO[0] < 4)) && forge_helper_start "$work.fifo"
  return 0
}

# forge_stop_ids: the session id as given (for the sidecar) and its safe form (for file names).
# (Cline names its session only in sessionContext.rootSessionId.)
forge_stop_ids() {
  forge_payload_field "$FORGE_SPOOL_TMP" session_id sessionId conversation_id rootSessionId
  session_id=${FORGE_FIELD:0:256}
  session_id=${session_id:-unknown}
  forge_safe_id "$session_id"
  safe_session=$FORGE_SAFE_ID
}

# forge_stop_subagent: Copilot CLI fires Stop for a subagent's turn as well, under the subagent's id
# and naming its parent (parent_agent_id). That is the subagent's event: spooled as it came (the
# drain logs it as the subagent's, in the parent's session), never a turn with a sidecar of its own.
# Cline's TaskComplete of a spawn_agent subagent names its parent the same way (null for the task's own).
forge_stop_subagent() {
  [[ $FORGE_RUNTIME == copilot || $FORGE_RUNTIME == cline ]] || return 0
  forge_payload_field "$FORGE_SPOOL_TMP" parent_agent_id parentAgentId
  [[ -n $FORGE_FIELD ]] || return 0
  forge_spool_commit
  exit 0
}

# forge_stop_error_end EVENT: Copilot CLI ends a turn that fails on a model error with ErrorOccurred
# and SessionEnd (reason "error"), and no Stop; its registration (second argument SessionEnd) sends
# SessionEnd here too. Any other end records nothing here; an error end gets the turn's sidecar
# (degraded: no answer), and no event (the event hook logs the SessionEnd).
stop_no_event=''
forge_stop_error_end() {
  [[ $FORGE_RUNTIME == copilot && ${1:-} == SessionEnd ]] || return 0
  forge_payload_field "$FORGE_SPOOL_TMP" reason
  if [[ $FORGE_FIELD != error ]]; then
    rm -f -- "$FORGE_SPOOL_TMP"
    FORGE_SPOOL_TMP=''
    exit 0
  fi
  stop_no_event=1
}

# forge_stop_hand_over: the Stop event to the helper: this run's temp names, its copy of the payload, the
# Stop event's names; the turn's time.
forge_stop_hand_over() {
  # The helper reads the Stop event's text from this run's temp payload: written again from memory
  # when the payload was read whole, else a second link to the same file.
  # A payload that cannot be written only costs the self-report in the answer: the run goes on.
  if [[ -n $work && -n $FORGE_PAYLOAD_WHOLE ]]; then
    printf '%s%s' "$FORGE_SPOOL_ENVELOPE" "$FORGE_PAYLOAD" >"$work.payload"
  elif [[ -n $work ]]; then
    # cat, not cp: the redirection is under noclobber, so nothing is written through a planted name.
    ln -- "$FORGE_SPOOL_TMP" "$work.payload" 2>/dev/null || cat -- "$FORGE_SPOOL_TMP" 2>/dev/null >"$work.payload"
  fi
  if [[ -n $stop_no_event ]]; then
    rm -f -- "$FORGE_SPOOL_TMP"
    FORGE_SPOOL_TMP='' FORGE_SPOOL_NAME=''
  fi
  # The Stop event is complete: the helper moves it into the spool as soon as it has started (a drain
  # may take it any time after). It is told the names now, so it does so even if this hook is killed
  # from here on; this hook does it when there is no helper, and on the way out if the helper did not
  # (forge_stop_commit). That saves an `mv` while node starts.
  stop_tmp=$FORGE_SPOOL_TMP stop_name=$FORGE_SPOOL_NAME
  FORGE_SPOOL_TMP=''
  # First of all the folder of the helper's V8 code cache (it reads that before it compiles itself).
  forge_helper_send FORGE_H_CODE_CACHE="$FORGE_STATE/cache" FORGE_H_STOP_TMP="$stop_tmp" FORGE_H_STOP_FINAL="$FORGE_STATE/spool/$stop_name.event" || forge_stop_commit
  # The turn's time: the sidecar's timestamp and name (the reflection.written spool file gets its own).
  forge_now_seconds
  now_iso_us=$FORGE_NOW_US
  forge_now_iso
  now_iso=$FORGE_NOW_ISO
  [[ -n $work ]] || exit 0
}

# forge_stop_session_start: what the session started from (lines: base commit, start time in µs), written at
# SessionStart.
forge_stop_session_start() {
  sessions=$FORGE_STATE/sessions
  recorded='' started_us='' snapshot_late=''
  if [[ -f $sessions/$safe_session.base && ! -L $sessions/$safe_session.base ]]; then
    { IFS= read -r recorded; IFS= read -r started_us; IFS= read -r snapshot_late; } <"$sessions/$safe_session.base"
  fi
  [[ $recorded =~ ^[0-9a-f]{40,64}$ ]] || recorded=''
  [[ $started_us =~ ^[0-9]{1,17}$ ]] || started_us=''
  [[ $snapshot_late =~ ^late\ [1-9]$ ]] || snapshot_late=''
}

# forge_stop_list_changes: what git says the session changed (one `git status`; the files of a new
# folder are listed by the helper, or the bash fallback, with one `git ls-files`).
forge_stop_list_changes() {
  git_ok=0 repo='' branch='' head='' listing_note='' blind_reason='' committed_expected='' status_index=''
  git_deadline=$((SECONDS + FORGE_GIT_BUDGET))
  if [[ -z $FORGE_ROOT ]]; then
    blind_reason='not inside a git work tree, so the changed files could not be listed'
  elif ! command -v git >/dev/null 2>&1; then
    blind_reason='git is not installed, so the changed files could not be listed'
  else
    repo=${FORGE_ROOT%/}
    repo=${repo##*/}
    # One git call gives the commit, the branch and every changed path: `git status` against the
    # SessionStart snapshot (git may refresh the snapshot's stat cache; its content is never touched),
    # else against the user's index (no snapshot: HEAD plus uncommitted changes, and the commits made
    # since the recorded base). --no-optional-locks: never take the user's index.lock.
    # --no-ahead-behind: the branch's distance to its upstream is not needed, and counting it walks
    # history (docs/performance.md).
    snapshot=$sessions/$safe_session.index
    status_base='head'
    [[ -f $snapshot && ! -L $snapshot ]] && status_base=snapshot
    # --untracked-files=normal: git's untracked cache serves only its default mode; a new folder is
    # then one `? dir/` record, whose files the helper (or the bash fallback) lists.
    status_index=''
    [[ $status_base == snapshot ]] && status_index=$snapshot
    if if [[ -n $status_index ]]; then
      GIT_INDEX_FILE=$status_index forge_git --no-optional-locks status --porcelain=v2 -z --branch --no-ahead-behind --untracked-files=normal --no-renames >"$work.status"
    else
      forge_git --no-optional-locks status --porcelain=v2 -z --branch --no-ahead-behind --untracked-files=normal --no-renames >"$work.status"
    fi; then
      rec1='' rec2=''
      { IFS= read -r -d '' rec1; IFS= read -r -d '' rec2; } <"$work.status"
      [[ $rec1 == '# branch.oid '* ]] && head=${rec1#'# branch.oid '}
      [[ $head =~ ^[0-9a-f]{40,64}$ ]] || head=''
      [[ $rec2 == '# branch.head '* ]] && branch=${rec2#'# branch.head '}
      [[ $branch == '(detached)' ]] && branch=''
      git_ok=1
      if [[ $status_base == head ]]; then
        listing_note='no working-tree snapshot from SessionStart: files_changed counts every uncommitted change and every commit since the base, including changes made before this session'
        [[ -n $snapshot_late ]] && listing_note+=" (SessionStart's git did not finish within its ${snapshot_late#late } s budget)"
        if [[ -n $recorded && -n $head && $recorded != "$head" ]]; then
          # shellcheck disable=SC2034 # read by lib/fallback-sidecar.sh
          committed_expected=1
          forge_git diff --name-only -z --no-renames "$recorded" "$head" -- >"$work.committed" || git_ok=0
        fi
      fi
    fi
    if [[ $git_ok != 1 ]]; then
      blind_reason='git could not list the changed files'
      [[ -n $git_dead ]] && blind_reason="git did not finish within the ${FORGE_GIT_BUDGET} s budget, so the changed files were not all listed"
    fi
  fi
}

# forge_stop_identity: the task, agent, session and repo as JSON strings.
forge_stop_identity() {
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
  agent=${REFLECTION_AGENT:-${FORGE_RUNTIME:-unknown}}
  forge_json_string "${agent:0:256}"
  # shellcheck disable=SC2034 # read by lib/fallback-sidecar.sh
  agent_json=$FORGE_JSON
  forge_json_string "$session_id"
  session_json=$FORGE_JSON
  forge_json_string "${repo:-unknown}"
  # shellcheck disable=SC2034 # read by lib/fallback-sidecar.sh
  repo_json=$FORGE_JSON
}

forge_stop_attempt() {
  dir=${REFLECTION_DIR:-$FORGE_STATE/reflections}
  forge_ensure_dir "$dir" || exit 0

  # The attempt: REFLECTION_ATTEMPT when set; in orchestrated mode the count `forge-reflect bounce`
  # keeps for the task (bounces + 1); else 1 + the sidecars this session already wrote for the task.
  forge_task_key "$task_ref"
  forge_ensure_dir "$sessions" || exit 0
  count_file=$sessions/$safe_session.$FORGE_TASK_KEY.count
  attempt_file=''
  [[ $REFLECTION_MODE == orchestrated ]] && attempt_file=$FORGE_STATE/attempts/$FORGE_TASK_KEY.attempt
  recorded_attempt=''
  [[ -n $attempt_file && -f $attempt_file && ! -L $attempt_file ]] && IFS= read -r recorded_attempt <"$attempt_file"
  forge_count_attempts "$count_file"
  session_count=$FORGE_ATTEMPT
  if [[ ${REFLECTION_ATTEMPT:-} =~ ^[1-9][0-9]{0,8}$ ]]; then
    FORGE_ATTEMPT=$REFLECTION_ATTEMPT
  elif [[ $recorded_attempt =~ ^[1-9][0-9]{0,8}$ ]]; then
    FORGE_ATTEMPT=$recorded_attempt
  fi
}

forge_stop_sidecar_names() {
  stamp=${now_iso//[-:]/}
  printf -v unique '%s%04x' "$$" "$RANDOM"
  name="$stamp-$safe_session-$unique"
  # The sidecar is written in $dir/.tmp, then linked into $dir: the sweep lists that small folder at
  # every turn, never $dir itself, whose listing grows with every sidecar ever written, at every
  # Stop. The run that makes .tmp also sweeps $dir
  # once, for temp files that versions before it wrote there. (A .tmp that is not a real folder of
  # ours, such as a planted link, is never written through: the sidecar is then written beside the
  # others, as before.)
  in_flight=$dir/.tmp
  if [[ ! -d $in_flight || -L $in_flight ]]; then
    forge_ensure_dir "$in_flight" || in_flight=$dir
    forge_sweep "$dir"
  fi
  [[ $in_flight == "$dir" ]] || forge_sweep "$in_flight"
  sidecar_tmp="$in_flight/.tmp-$$-$name.json"
  sidecar="$dir/$name.reflection.json"
  forge_fresh "$sidecar_tmp" || exit 0
}

forge_stop_take_self_report() {
  # The self-report file (second channel) is taken only when it is this session's or names none: it
  # is moved to this run's temp name first, so one written meanwhile waits for the next turn instead of
  # being half-read or merged twice. A file another session wrote is left for that session.
  if [[ -f $input ]] && forge_no_links "$input"; then
    forge_payload_field "$input" session_id
    if [[ -z $FORGE_FIELD || $FORGE_FIELD == "$session_id" ]]; then
      mv -f -- "$input" "$work.input.json" 2>/dev/null && input_taken=$work.input.json
    fi
  fi
}

forge_stop_written_names() {
  # The reflection.written spool file is named here, with its envelope: the helper writes it and moves
  # it into place once the sidecar stands (one mv fewer on the way out), else this hook does.
  forge_json_string "$sidecar"
  sidecar_json=$FORGE_JSON
  written_tmp='' written_final=''
  if forge_spool_name reflection.written stop-hook; then
    written_tmp=$FORGE_SPOOL_TMP written_final=$FORGE_STATE/spool/$FORGE_SPOOL_NAME.event
  fi
}

forge_stop_find_cli() {
  # The CLI that drains the spool into SQLite once the turn is recorded (below): the project's own
  # (a devDependency) before one on PATH, looked up without a command substitution's fork.
  # FORGE_REFLECT_CLI=off: no drain from the hook (the next forge-reflect command drains instead).
  cli=${FORGE_REFLECT_CLI:-}
  [[ -z $cli && -x $FORGE_PROJECT/node_modules/.bin/forge-reflect ]] && cli=$FORGE_PROJECT/node_modules/.bin/forge-reflect
  [[ -z $cli && -n $FORGE_ROOT && -x $FORGE_ROOT/node_modules/.bin/forge-reflect ]] && cli=$FORGE_ROOT/node_modules/.bin/forge-reflect
  if [[ -z $cli ]]; then
    IFS=: read -r -a path_dirs <<<"$PATH"
    for path_dir in "${path_dirs[@]}"; do
      [[ $path_dir == /* && -f $path_dir/forge-reflect && -x $path_dir/forge-reflect ]] && cli=$path_dir/forge-reflect && break
    done
  fi
  [[ -z $cli ]] && forge_cli_elsewhere && cli=$FORGE_CLI   # ~/.forge-reflect, npm's or pnpm's global bin
  [[ $cli == off ]] && cli=''
  [[ -z $cli || $cli == /* ]] || cli=$FORGE_PROJECT/$cli   # a relative FORGE_REFLECT_CLI: from the project
  [[ -n $cli && -x $cli && ! -d $cli ]] || cli=''
}

# forge_stop_write_sidecar: the sidecar from the helper, else from the bash fallback (sourced only then).
forge_stop_write_sidecar() {
  status='' degraded=true
  if [[ -n $helper_pid ]]; then
    # The helper's own git call (the files of new folders) ends well inside its time, so the bash
    # fallback still has some of the budget left when the helper fails.
    helper_git_seconds=$((git_deadline - SECONDS))
    ((helper_git_seconds <= 3)) || helper_git_seconds=3
    forge_helper_run FORGE_H_WRITTEN_TMP="$written_tmp" FORGE_H_WRITTEN_FINAL="$written_final" FORGE_H_WRITTEN_ENVELOPE="${FORGE_SPOOL_ENVELOPE:-}" \
      FORGE_H_INPUT_KEEP="$dir/$name.input.json" FORGE_H_OUT="$sidecar_tmp" FORGE_H_FINAL="$sidecar" FORGE_H_STATUS="$work.status" \
      FORGE_H_STATUS_BASE="$status_base" FORGE_H_COMMITTED="$work.committed" FORGE_H_GIT_OK="$git_ok" \
      FORGE_H_GIT_ROOT="$FORGE_ROOT" FORGE_H_GIT_INDEX="$status_index" FORGE_H_GIT_SECONDS="$helper_git_seconds" \
      FORGE_H_LISTING_NOTE="$listing_note" FORGE_H_BLIND="$blind_reason" FORGE_H_INPUT="$input_taken" \
      FORGE_H_SESSION_START_US="$started_us" FORGE_H_PAYLOAD="$work.payload" FORGE_H_REJECTED_BLOCK="$work.block.txt" \
      FORGE_H_REMOVE_INPUTS=1 FORGE_H_FIFO="$helper_fifo" FORGE_H_SESSION_ID="$session_id" FORGE_H_TASK_REF="$task_ref" \
      FORGE_H_AGENT="${agent:0:256}" FORGE_H_REPO="${repo:-unknown}" FORGE_H_TIMESTAMP="$now_iso" \
      FORGE_H_MODE="$REFLECTION_MODE" FORGE_H_ATTEMPT="$FORGE_ATTEMPT" FORGE_H_COUNT_FILE="$count_file" \
      FORGE_H_COUNT="$session_count" FORGE_H_LOCK="${lock_owner:+$lock}" FORGE_H_LOCK_OWNER="$lock_owner" \
      FORGE_H_DRAIN_CLI="$cli" FORGE_H_DRAIN_CWD="$FORGE_PROJECT" FORGE_H_DRAIN_STATE="$FORGE_STATE" && status=$FORGE_HELPER_STATUS
    # The helper placed the sidecar itself (a regular file, no link), or left it at the temp name.
    [[ -s $sidecar_tmp || (-f $sidecar && ! -L $sidecar) ]] || status=''
  fi
  # The helper's status: `<ok|absent|invalid> <answer|file|none> [reason]`.
  source_used=none
  case "$status" in
    ok* | absent* | invalid*)
      read -r _ source_used _ <<<"$status"
      cli=''   # the helper starts the drain, once this hook has exited
      [[ $status == ok* && $git_ok == 1 ]] && degraded=false
      ;;
    *)
      rm -f -- "$sidecar_tmp"
      # shellcheck source=lib/fallback-sidecar.sh
      source "$here/lib/fallback-sidecar.sh" && forge_fallback_sidecar "$sidecar_tmp" || exit 0
      status="invalid file not checked: the node helper was unavailable, failed or timed out"
      [[ -n $input_taken ]] || status='absent none'
      ;;
  esac
}

# forge_stop_place: the sidecar placed, the count written, the lock let go.
forge_stop_place() {
  # Placed here unless the helper did (the link it makes first is the same file: then only the
  # temp name is left to remove, with the other temp files).
  if [[ -e $sidecar_tmp && ! $sidecar_tmp -ef $sidecar ]]; then
    forge_fresh "$sidecar" || exit 0
    mv -f -- "$sidecar_tmp" "$sidecar" || exit 0
    sidecar_tmp=''
  fi
  # The count and the lock: once the sidecar stood, the helper wrote the one and let the other go
  # (the lock no longer names this run). Else the count is written here, a few bytes in one write(2)
  # under this session's lock, rewritten in place, never through a link; the lock goes on exit.
  if [[ -n $lock_owner ]] && ! forge_lock_ours; then
    lock='' lock_owner=''
  else
    [[ -L $count_file ]] || printf '%s\n' "$session_count" 2>/dev/null >|"$count_file"
  fi
}

# forge_reject FILE KIND REASON: keeps what could not be used in rejected-input/ as <name><KIND>
# (.json: the self-report file; .answer.txt: a refused block of the final answer) beside
# <name><KIND without its extension>.reason.
forge_reject() {
  local to=$FORGE_STATE/rejected-input/$name$2
  forge_ensure_dir "$FORGE_STATE/rejected-input" && forge_fresh "${to%.*}.reason" && forge_fresh "$to" || return 1
  printf '%s\n' "$3" >"${to%.*}.reason"
  mv -f -- "$1" "$to"
}

forge_stop_consume_inputs() {
  # The status's reason: what follows `<status> <source> `.
  reason=${status#* }
  [[ $reason == *' '* ]] && reason=${reason#* } || reason=''
  [[ $source_used == answer ]] && file_reason='not used: the final answer carried its own reflection block' || file_reason=$reason
  # An answer block that was refused is kept with the reason.
  [[ $source_used == answer && $status == invalid* && -f $work.block.txt ]] && forge_reject "$work.block.txt" .answer.txt "$reason"
  # The self-report file is consumed: next to the sidecar it went into, or kept aside with the reason.
  [[ -n $input_taken && ! -e $input_taken ]] && input_taken=''   # kept beside the sidecar by the helper
  if [[ -n $input_taken ]]; then
    if [[ $source_used == file && $status == ok* ]]; then
      mv -f -- "$input_taken" "$dir/$name.input.json" && input_taken=''
    else
      forge_reject "$input_taken" .json "${file_reason:-not used}" && input_taken=''
    fi
  fi
}

# forge_stop_error_note: sets FORGE_JSON to `,"self_report_note":"…"` when this turn ended on a model
# error (StopFailure, Cline's TaskError), else to nothing: the helper's note, in short (the error's
# type only), for a reflection.written the helper did not write. A headless Claude Code stops the
# helper of a StopFailure hook on a Mac (no setsid there: runtimes/claude-code.ts).
forge_stop_error_note() {
  local what=''
  FORGE_JSON=''
  [[ -n $work && -f $work.payload ]] || return 0
  forge_payload_field "$work.payload" hook_event_name hookName
  case $FORGE_FIELD in
    StopFailure) what=StopFailure ;;
    agent_error) what=TaskError ;;
    *) return 0 ;;
  esac
  forge_payload_field "$work.payload" error
  forge_json_string "the turn ended on an error ($what${FORGE_FIELD:+: ${FORGE_FIELD:0:100}}): there is no final answer"
  FORGE_JSON=",\"self_report_note\":$FORGE_JSON"
}

forge_stop_spool_written() {
  # reflection.written, unless the helper spooled it (what a stopped helper half-wrote goes first).
  if [[ -z $written_final || ! -e $written_final ]]; then
    [[ -n $written_tmp && (-e $written_tmp || -L $written_tmp) ]] && rm -f -- "$written_tmp"
    forge_stop_error_note
    forge_spool_write reflection.written stop-hook \
      "{\"sidecar\":$sidecar_json,\"session_id\":$session_json,\"task_ref\":$task_json,\"degraded\":$degraded,\"self_report\":\"${status%% *}\",\"self_report_source\":\"$source_used\"$FORGE_JSON}"
  fi
}

forge_stop_start_drain() {
  # Unless the helper did, the drain starts here, detached: the hook does not wait, and the child
  # holds none of the hook's output pipes nor this session's lock (nor the helper's input: bash
  # closes that on exec). One fork, which becomes the drain.
  exec 7>&-
  if [[ -n $cli ]]; then
    # setsid(1) where there is one (a Mac has none): then the drain is only in the background, which
    # is enough not to keep the runtime waiting (it holds none of the hook's pipes).
    if command -v setsid >/dev/null 2>&1; then
      (cd "$FORGE_PROJECT" && exec 8<&- 9>&- && FORGE_DIR=$FORGE_STATE exec setsid "$cli" ingest </dev/null >/dev/null 2>&1) &
    else
      (cd "$FORGE_PROJECT" && exec 8<&- 9>&- && FORGE_DIR=$FORGE_STATE exec "$cli" ingest </dev/null >/dev/null 2>&1) &
    fi
  fi
}

# The run, step by step.
forge_runtime "${1:-}" || exit 0
forge_state_dir
forge_plugin_defers && exit 0   # a plugin's hook, with a settings registration that records
forge_ensure_state || exit 0
forge_stop_work_names
forge_spool_open Stop stop-hook || exit 0
forge_stop_ids
forge_stop_subagent
forge_stop_error_end "${2:-}"
forge_stop_hand_over
forge_take_lock "stop-$safe_session" || exit 0
input=${REFLECTION_INPUT:-$FORGE_STATE/reflection-input.json}
forge_sweep "$FORGE_STATE"
forge_stop_session_start
forge_stop_list_changes
forge_stop_identity
forge_stop_attempt
forge_stop_sidecar_names
forge_stop_take_self_report
forge_stop_written_names
forge_stop_find_cli
forge_stop_write_sidecar
forge_stop_place
forge_stop_consume_inputs
forge_stop_spool_written
forge_stop_start_drain
exit 0

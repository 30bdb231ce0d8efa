#!/usr/bin/env bash
# reflect-event-hook.sh [EVENT [RUNTIME]]: spools one agent event (PostToolUse, PostToolUseFailure, SessionStart,
# SubagentStop, UserPromptSubmit, SessionEnd, PreCompact, Notification) for the SQLite event log.
#
# The kit's promise: with REFLECTION_MODE unset/off/unknown it does nothing at all; otherwise it
# exits 0, prints nothing on stdout, never leaves a spool file or record the drain would take half,
# and never starts node. A payload of up to 4 KiB (most) is spooled without starting any process,
# appended to spool/events.log as one record (docs/spool-format.md).
# RUNTIME (claude-code, codex, gemini, qwen, cline, opencode, copilot) is the runtime the registration
# names; without EVENT the payload's hook_event_name is used. On SessionStart it also records the
# session's start, base commit and working-tree snapshot, so the Stop hook lists exactly what the
# session changed.

case "${REFLECTION_MODE:-}" in solo | orchestrated) ;; *) exit 0 ;; esac
trap 'exit 0' EXIT
trap '[[ -n ${FORGE_SPOOL_TMP:-} ]] && rm -f -- "$FORGE_SPOOL_TMP"; exit 0' TERM INT HUP PIPE
if [[ -n ${FORGE_DEBUG:-} ]]; then exec >/dev/null; else exec >/dev/null 2>&1; fi
# stdio sizes stdout's buffer at its first use from the file stdout then is: /dev/null's 4 KiB here,
# not the state folder's block size (1 KiB on some file systems), so a record leaves in one write.
printf ' '
# Bytes, not characters, and ASCII ranges in globs (bash before 5.0 ranges by the locale's collation).
LC_ALL=C
umask 077
set -o noclobber

# shellcheck source=lib/common.sh
source "${BASH_SOURCE[0]%/*}/lib/common.sh" || exit 0

event=${1:-}
forge_event_name "$event" || event=''
forge_runtime "${2:-}" || exit 0

forge_state_dir
forge_plugin_defers && exit 0   # a plugin's hook, with a settings registration that records
forge_ensure_state || exit 0
forge_spool_open "$event" event-hook direct || exit 0
payload=$FORGE_SPOOL_FILE
[[ -n $FORGE_PAYLOAD_WHOLE ]] && payload=-   # read from memory: a record's file is the whole log

# Without an event argument the payload names it (the drain reads it from there too).
if [[ -z $event ]]; then
  forge_payload_field "$payload" hook_event_name hookEventName
  forge_event_name "$FORGE_FIELD" && event=$FORGE_FIELD
fi

# SessionStart: what the session starts from, recorded once per session (a runtime that fires it
# again, e.g. Codex after a compaction, keeps the first record): the start time and base commit,
# and a snapshot of the working tree (see lib/snapshot.sh) so the Stop hook blames the session
# only for what it changed. Cline's TaskStart is its SessionStart; its session is rootSessionId.
# opencode's session.created (sent by the kit's plugin) is its SessionStart.
if [[ $event == SessionStart || $event == TaskStart || $event == session.created ]]; then
  forge_payload_field "$payload" session_id sessionId conversation_id rootSessionId
  forge_safe_id "$FORGE_FIELD"
  sessions=$FORGE_STATE/sessions
  if [[ $FORGE_SAFE_ID != unknown && ! -e $sessions/$FORGE_SAFE_ID.base ]] && forge_ensure_dir "$sessions"; then
    base=''
    if [[ -n $FORGE_ROOT ]]; then
      # The snapshot's `git status` names the base commit too; without it, rev-parse does.
      FORGE_SNAPSHOT_BASE='' FORGE_SNAPSHOT_LATE=''
      # shellcheck source=lib/snapshot.sh
      source "${BASH_SOURCE[0]%/*}/lib/snapshot.sh" && forge_snapshot_take "$sessions/$FORGE_SAFE_ID.index"
      base=$FORGE_SNAPSHOT_BASE
      [[ -n $base ]] || base=$(forge_bounded 3 git -C "$FORGE_ROOT" rev-parse --verify -q 'HEAD^{commit}' 2>/dev/null)
      [[ $base =~ ^[0-9a-f]{40,64}$ ]] || base=''
    fi
    # What sessions older than 30 days left (snapshots are the size of the git index) goes.
    find "$sessions" -maxdepth 1 -type f -mtime +30 -delete 2>/dev/null
    rm -f -- "$sessions/.tmp-$$"
    forge_now_seconds
    # Lines: the base commit, the start in µs, and `late <seconds>` when git outran the snapshot's
    # budget (the Stop hook names it in risk.reason).
    late=''
    [[ -n ${FORGE_SNAPSHOT_LATE:-} ]] && late="late $FORGE_SNAPSHOT_SECONDS"
    printf '%s\n%s\n%s\n' "$base" "$((10#$FORGE_NOW_US))" "$late" >"$sessions/.tmp-$$" && mv -f -- "$sessions/.tmp-$$" "$sessions/$FORGE_SAFE_ID.base"
  fi
fi

forge_spool_commit
exit 0

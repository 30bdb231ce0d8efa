# shellcheck shell=bash
# Helpers for the hook suites: run a hook as the runtime would and check the kit's promise.

STOP_HOOK="$KIT_ROOT/hooks/reflect-stop-hook.sh"
EVENT_HOOK="$KIT_ROOT/hooks/reflect-event-hook.sh"
PAYLOADS="$KIT_ROOT/tests/fixtures/payloads"
export STOP_HOOK EVENT_HOOK PAYLOADS
# No background drain from the Stop hook in tests (`npm test` puts forge-reflect on PATH): a test
# that wants one sets FORGE_REFLECT_CLI itself.
export FORGE_REFLECT_CLI=off

# hook_run DIR COMMAND...: runs COMMAND in DIR with the caller's stdin; sets HOOK_STATUS and
# HOOK_STDOUT (stderr goes to $BATS_TEST_TMPDIR/hook.stderr).
# Not in a pipeline or any other subshell: the two variables would not reach the caller, and
# assert_promise would check nothing (feed stdin with `hook_run ... < <(COMMAND)` instead).
hook_run() {
  local dir=$1
  shift
  if [[ $BASHPID != "$$" ]]; then
    echo "hook_run in a subshell (a pipeline?): its result would be lost; use hook_run ... < <(...)" >&2
    return 1
  fi
  HOOK_STATUS=0
  HOOK_STDOUT=$(cd "$dir" && "$@" 2>"$BATS_TEST_TMPDIR/hook.stderr") || HOOK_STATUS=$?
}

# The promise: exit 0 and nothing on stdout. Checks the last hook_run once: a second check, or one
# with no hook_run before it, fails.
assert_promise() {
  if [[ ! ${HOOK_STATUS:-} =~ ^[0-9]+$ ]]; then
    echo "assert_promise: no hook result to check (HOOK_STATUS '${HOOK_STATUS:-}')" >&2
    return 1
  fi
  if [ "$HOOK_STATUS" -ne 0 ] || [ -n "$HOOK_STDOUT" ]; then
    echo "hook broke its promise: exit $HOOK_STATUS, stdout '${HOOK_STDOUT:0:200}'" >&2
    return 1
  fi
  unset HOOK_STATUS
}

jget() {
  node "$KIT_ROOT/tests/helpers/json-get.mjs" "$@"
}

# The newest sidecar in DIR (default .forge/reflections of the scratch repo).
last_sidecar() {
  node "$KIT_ROOT/tests/helpers/last-sidecar.mjs" "${1:-$REPO/.forge/reflections}"
}

sidecar_count() {
  local dir=${1:-$REPO/.forge/reflections}
  find "$dir" -maxdepth 1 -name '*.reflection.json' 2>/dev/null | wc -l | tr -d ' '
}

# --- The platform of the pass (HOOK_PLATFORM, tests/helpers/common.bash) ---
# HOOK_BASH: the bash the hooks run with. TEST_TOOLS_PATH: the PATH of the test's own tools (the
# system's). SPOOL_RECORD_MAX: the longest record the event hook appends to the spool log
# (docs/spool-format.md: 4,000 bytes with glibc, 1,000 elsewhere: on a Mac).
if [[ $HOOK_PLATFORM == macos-like ]]; then
  HOOK_BASH=$FORGE_TEST_MACOS_BIN/bash
  TEST_TOOLS_PATH=$FORGE_TEST_HOST_PATH
  SPOOL_RECORD_MAX=1000
else
  HOOK_BASH=$(command -v bash)
  TEST_TOOLS_PATH=$PATH
  SPOOL_RECORD_MAX=4000
fi
# tests/helpers/spool-records.mjs holds the records it reads to the same limit.
FORGE_TEST_SPOOL_RECORD_MAX=$SPOOL_RECORD_MAX
export FORGE_TEST_SPOOL_RECORD_MAX

# PRETTY_PAYLOAD: a real pretty-printed payload (many lines) that is a record of the spool log on
# this platform: Claude's Edit (1,347 bytes), or its Notification (373 bytes) under the Mac's limit.
PRETTY_PAYLOAD=$PAYLOADS/post-tool-use-edit.json
((SPOOL_RECORD_MAX >= 4000)) || PRETTY_PAYLOAD=$PAYLOADS/notification.json
export PRETTY_PAYLOAD

# FAKE_SH: the first lines of a fake program a test puts on a hook's PATH (a node, a git, a CLI):
# sh with the test's own tools. A fake runs with the hook's PATH, which in the Mac pass holds the
# stand-in's tools (BSD sed has no -z; there is no timeout, no ps): the fake is the test's code,
# not the hook's, and is not what is being tested.
[[ $TEST_TOOLS_PATH != *"'"* ]] || { echo "a ' in PATH" >&2; return 1; }
# shellcheck disable=SC2034 # used by the suites
FAKE_SH="#!/bin/sh
PATH='$TEST_TOOLS_PATH'
export PATH"

# hook_path: the folders of the PATH a hook started now would get: the current PATH, or in the Mac
# pass its test folders with the stand-in's bin/ in place of the system's (as
# tests/helpers/macos-like-bash.sh makes it).
hook_path() {
  if [[ $HOOK_PLATFORM != macos-like ]]; then
    printf '%s' "$PATH"
    return 0
  fi
  local out='' added='' dir IFS=:
  for dir in $PATH; do
    case $dir in '' | "$FORGE_TEST_SHIM" | */node_modules/*) continue ;; esac
    if [[ ":$FORGE_TEST_HOST_PATH:" == *":$dir:"* ]]; then
      [[ -n $added ]] || out=${out:+$out:}$FORGE_TEST_MACOS_BIN
      added=1
      continue
    fi
    out=${out:+$out:}$dir
  done
  printf '%s' "$out"
}

# hook_tool NAME: the NAME a hook finds on its PATH (in the Mac pass the stand-in's); fails when it
# has none (a Mac has no timeout, flock or setsid), so a spy is made only for a tool the hook has.
hook_tool() {
  local dir IFS=:
  for dir in $(hook_path); do
    if [[ -x $dir/$1 && ! -d $dir/$1 ]]; then
      printf '%s' "$dir/$1"
      return 0
    fi
  done
  return 1
}

# hook_bash_version: the hooks' bash's BASH_VERSION.
hook_bash_version() {
  # shellcheck disable=SC2016 # the hooks' bash expands it
  "$HOOK_BASH" -c 'echo "$BASH_VERSION"'
}

# hook_bash_at_least MAJOR MINOR: the hooks' bash is MAJOR.MINOR or newer.
hook_bash_at_least() {
  local v
  # shellcheck disable=SC2016 # the hooks' bash expands it
  v=$("$HOOK_BASH" -c 'echo $((BASH_VERSINFO[0] * 100 + BASH_VERSINFO[1]))')
  ((v >= $1 * 100 + $2))
}

# HOOK_CLOCK: 1 when the hooks' bash has a clock (bash 5: EPOCHREALTIME), empty when it has none
# (bash 3.2, the stock-Mac pass). Without one (docs/decisions.md, "The clock") the event hook appends
# no records to spool/events.log: every event is a file of its own named with 16 zeros for the time,
# "clock":"file" in its envelope, and the drain takes the time from the file's time of writing. A
# stdin that stalls past the hook's read limit then keeps nothing (bash 3.2's `read -t`).
HOOK_CLOCK=''
if hook_bash_at_least 5 0; then HOOK_CLOCK=1; fi
export HOOK_CLOCK

# A PATH with everything the hooks use but node. In the Mac pass: the stand-in's bin/ less node (the
# hooks there also use perl, date and the like, as on a Mac).
path_without_node() {
  if [[ $HOOK_PLATFORM == macos-like ]]; then
    path_without node
    return
  fi
  local bin=$BATS_TEST_TMPDIR/no-node-bin tool
  mkdir -p "$bin"
  for tool in bash git head mv rm mkdir sort timeout cat setsid env find kill; do
    if command -v "$tool" >/dev/null 2>&1; then ln -sf "$(command -v "$tool")" "$bin/$tool"; fi
  done
  printf '%s' "$bin"
}

# A session of the runtime running the tests (e.g. a developer inside Claude Code) must not steer
# the hooks under test: its project dir and session id are dropped.
unset CLAUDE_PROJECT_DIR GEMINI_PROJECT_DIR FORGE_PROJECT_DIR CLAUDE_CODE_SESSION_ID

# path_without TOOL...: a PATH with every command a hook would find (hook_path) except the named ones.
path_without() {
  local bin dir file name
  bin=$BATS_TEST_TMPDIR/path-without-$(printf '%s-' "$@")
  if [[ ! -d $bin ]]; then
    mkdir -p "$bin"
    local IFS=:
    for dir in $(hook_path); do
      for file in "$dir"/*; do
        name=${file##*/}
        [[ -x $file && ! -e $bin/$name ]] || continue
        [[ " $* " == *" $name "* ]] && continue
        ln -s "$file" "$bin/$name" 2>/dev/null || true
      done
    done
  fi
  printf '%s' "$bin"
}

# --- The spool: files of their own, and records of the spool log (docs/spool-format.md) ---
SPOOL_RECORDS="$KIT_ROOT/tests/helpers/spool-records.mjs"
SPOOL_ORDER="$KIT_ROOT/tests/helpers/spool-order.mjs"
export SPOOL_RECORDS SPOOL_ORDER

# spool_files [SPOOL]: every event waiting in SPOOL (default: the scratch repo's), one path a line,
# in the order received: its spool files (*.event), and each record of its spool log extracted by
# tests/helpers/spool-records.mjs as $BATS_TEST_TMPDIR/records/<key>/<id>.event, shaped like a spool
# file (the record's envelope line, then its payload bytes exactly). A malformed record fails the
# call and is recorded for spool_records_ok (the teardown), as a failure inside a
# `$(spool_files | ...)` would go unseen.
# The order: by name, which starts with the time received, while no name has 16 zeros for it; a file
# of a hook without a clock (HOOK_CLOCK) is placed by its time of writing (tests/helpers/spool-order.mjs),
# as the drain places it.
spool_files() {
  local spool=${1:-$REPO/.forge/spool} key out file logs=() clockless=''
  key=$(printf '%s' "$spool" | cksum)
  out=$BATS_TEST_TMPDIR/records/${key%% *}
  rm -rf "$out"
  mkdir -p "$out"
  # The spool log: the sealed segments (oldest first), then events.log; never a link.
  for file in "$spool"/*.seg "$spool/events.log"; do
    [[ -f $file && ! -L $file ]] && logs+=("$file")
  done
  if ((${#logs[@]} > 0)) && ! node "$SPOOL_RECORDS" extract "$out" "${logs[@]}" 2>"$out.err"; then
    { echo "spool_files: malformed spool log in $spool:"; cat "$out.err"; } | tee -a "$BATS_TEST_TMPDIR/spool-records.failed" >&2
    return 1
  fi
  for file in "$spool"/0000000000000000-*.event; do
    [[ -e $file ]] && clockless=1 && break
  done
  # A path may hold any byte but NUL (a test's folder name has a newline).
  if [[ -n $clockless ]]; then
    { find "$spool" -maxdepth 1 -name '*.event' -print0 2>/dev/null; find "$out" -maxdepth 1 -name '*.event' -print0; } |
      node "$SPOOL_ORDER" sort | tr '\0' '\n'
    return "${PIPESTATUS[1]}"
  fi
  { find "$spool" -maxdepth 1 -name '*.event' -print0 2>/dev/null; find "$out" -maxdepth 1 -name '*.event' -print0; } |
    while IFS= read -r -d '' file; do printf '%s/%s\0' "${file##*/}" "$file"; done |
    LC_ALL=C sort -z | sed -z 's|^[^/]*/||' | tr '\0' '\n'
}

# spool_ids FILE...: the id a drain stores for each spool file or extracted record, one a line: its
# name, or for a file of a hook without a clock its name with its time of writing in place of the
# 16 zeros (docs/spool-format.md). Fails for a zero-named file whose envelope lacks "clock":"file".
spool_ids() {
  node "$SPOOL_ORDER" ids "$@"
}

# assert_spool_name FILE: FILE (a spool file, or a record spool_files extracted) is named and
# enveloped as the hooks' bash names events: with a clock, `<received µs>-<pid>-<rand>.event`, the
# time a real one and the envelope's received_us and pid the name's, no "clock"; without one, 16
# zeros for the time, received_us 0, the pid the name's and "clock":"file".
assert_spool_name() {
  local file=$1 name=${1##*/} env
  IFS= read -r env <"$file" || true
  if [[ ! $name =~ ^([0-9]{16})-([1-9][0-9]*)-[0-9a-f]{8}\.event$ ]]; then
    echo "assert_spool_name: $file is not named <received_us:16>-<pid>-<rand>.event" >&2
    return 1
  fi
  local time=${BASH_REMATCH[1]} pid=${BASH_REMATCH[2]}
  if [[ $env != *"\"pid\":$pid,"* ]]; then
    echo "assert_spool_name: $file: the envelope's pid is not the name's ($pid): $env" >&2
    return 1
  fi
  if [[ -n $HOOK_CLOCK ]]; then
    # a time of this century, the envelope's the same, and no "clock"
    if [[ $time == 0* || $env != *"\"received_us\":$time,"* || $env == *'"clock"'* ]]; then
      echo "assert_spool_name: $file: with a clock the name's time ($time) is the envelope's received_us, and there is no \"clock\": $env" >&2
      return 1
    fi
  elif [[ $time != 0000000000000000 || $env != *'"received_us":0,'* || ($env != *',"clock":"file",'* && $env != *',"clock":"file"}') ]]; then
    echo "assert_spool_name: $file: without a clock the name has 16 zeros, received_us is 0 and the envelope says \"clock\":\"file\": $env" >&2
    return 1
  fi
}

# assert_spooled_small N [SPOOL]: SPOOL (default the scratch repo's) holds N events, each one the
# event hook keeps as a record (a payload that fits the first read and the record limit, no \x1e),
# kept as the hooks' bash keeps them: with a clock, N records of spool/events.log and nothing else
# in the spool (no file of its own, no temp file); without one, N files of their own
# (assert_spool_name) and nothing else: no spool log, no temp file.
assert_spooled_small() {
  local n=$1 spool=${2:-$REPO/.forge/spool} other count=0 file
  if [[ -n $HOOK_CLOCK ]]; then
    other=$(find "$spool" -mindepth 1 ! -name events.log)
    if [[ -n $other || ! -f $spool/events.log ]]; then
      echo "assert_spooled_small: with a clock the spool holds events.log alone, not: $(find "$spool" -mindepth 1 | head -n 5)" >&2
      return 1
    fi
    count=$(spool_files "$spool" | wc -l) || return 1
  else
    other=$(find "$spool" -mindepth 1 ! -name '*.event')
    if [[ -n $other ]]; then
      echo "assert_spooled_small: without a clock the spool holds files of their own alone (no spool log, no temp file), not: $other" >&2
      return 1
    fi
    for file in "$spool"/*.event; do
      [[ -e $file ]] || continue
      assert_spool_name "$file" || return 1
      count=$((count + 1))
    done
  fi
  if ((count != n)); then
    echo "assert_spooled_small: $count events in $spool, want $n" >&2
    return 1
  fi
}

# drained_removed [SPOOL]: waits, at most 10 s, for what a drain of many spool files leaves to its
# remover (packages/forge-reflect/src/log/drained-lists.ts: the drain lists the files it committed, and a
# detached process unlinks them once it returned) to be gone: no list left in SPOOL/.drained.
drained_removed() {
  local spool=${1:-$REPO/.forge/spool} _
  for _ in $(seq 200); do
    [[ -z $(find "$spool/.drained" -name '*.list' 2>/dev/null) ]] && return 0
    sleep 0.05
  done
  echo "drained_removed: the drain's remover left $(find "$spool/.drained" -name '*.list' | wc -l) lists in $spool/.drained" >&2
  return 1
}

# spool_records_ok: no spool_files call of this test met a malformed spool log (for teardown).
spool_records_ok() {
  if [[ -e $BATS_TEST_TMPDIR/spool-records.failed ]]; then
    cat "$BATS_TEST_TMPDIR/spool-records.failed" >&2
    return 1
  fi
}

# payload_of FILE: the payload bytes of a spool file or an extracted record (all after line 1).
payload_of() {
  tail -n +2 "$1"
}

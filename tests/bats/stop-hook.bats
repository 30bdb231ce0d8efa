#!/usr/bin/env bats
# reflect-stop-hook.sh: the PRD §9 criteria, the sidecar against git and the schema, and hostile
# input and faults. Every case also checks the promise: exit 0, empty stdout.

load ../helpers/common
load ../helpers/hooks

setup() {
  REPO="$BATS_TEST_TMPDIR/repo"
  make_repo "$REPO"
  BASE=$(git -C "$REPO" rev-parse HEAD)
  export REFLECTION_MODE=solo
  unset FORGE_DIR REFLECTION_DIR REFLECTION_INPUT REFLECTION_TASK_REF REFLECTION_AGENT REFLECTION_ATTEMPT REFLECTION_RISK_THRESHOLD
}

stop() {
  hook_run "$REPO" bash "$STOP_HOOK" <"${1:-$PAYLOADS/stop.json}"
}

# facts NAME=VALUE...: the helper's input as the hook sends it (NUL-separated records on stdin).
facts() {
  printf '%s\0' "$@"
}

@test "PRD 9.1: mode unset, off or unknown is a strict no-op, whatever stdin holds" {
  for mode in '' off OFF yes SOLO 1; do
    for input in "$PAYLOADS/stop.json" /dev/null; do
      REFLECTION_MODE=$mode hook_run "$REPO" bash "$STOP_HOOK" <"$input"
      assert_promise
    done
    REFLECTION_MODE=$mode hook_run "$REPO" bash "$STOP_HOOK" < <(printf 'not json')
    assert_promise
  done
  unset REFLECTION_MODE
  hook_run "$REPO" bash "$STOP_HOOK" <"$PAYLOADS/stop.json"
  assert_promise
  [ ! -e "$REPO/.forge" ]
}

@test "PRD 9.2: solo writes a schema-valid sidecar with the mechanical fields; no self-report means degraded" {
  mkdir -p "$REPO/src/auth"
  echo 'export const t = 1;' >"$REPO/src/auth/token.ts"
  stop
  assert_promise
  [ "$(sidecar_count)" -eq 1 ]
  file=$(last_sidecar)
  run forge_reflect validate "$file"
  [ "$status" -eq 0 ]
  [ "$(jget "$file" session_id)" = '"7f3c2a9e-4b1d-4e8a-9c6f-2d5e8b1a0c34"' ]
  [ "$(jget "$file" task_ref)" = '"repo#main"' ]
  [ "$(jget "$file" repo)" = '"repo"' ]
  [ "$(jget "$file" agent)" = '"unknown"' ]
  [ "$(jget "$file" files_changed)" = '["src/auth/token.ts"]' ]
  [ "$(jget "$file" risk.surface)" = '"auth"' ]
  [ "$(jget "$file" risk.needs_review)" = true ]
  [ "$(jget "$file" confidence)" = null ]
  [ "$(jget "$file" most_likely_wrong)" = null ]
  [ "$(jget "$file" provenance)" = '{"source":"stop-hook","reflection_attempt":1,"degraded":true,"reflection_mode":"solo"}' ]
  [[ "$(basename "$file")" =~ ^[0-9]{8}T[0-9]{6}\.[0-9]{6}Z-7f3c2a9e-4b1d-4e8a-9c6f-2d5e8b1a0c34-[0-9a-f]+\.reflection\.json$ ]]
}

@test "PRD 9.2: a self-report is merged, not degraded, and consumed so it is never merged twice" {
  mkdir -p "$REPO/.forge"
  cat >"$REPO/.forge/reflection-input.json" <<'JSON'
{"confidence":0.35,"most_likely_wrong":{"surface":"data","description":"the migration is not reversible"},"known_not_in_diff":"prod has 2M rows"}
JSON
  stop
  assert_promise
  file=$(last_sidecar)
  [ "$(jget "$file" confidence)" = 0.35 ]
  [ "$(jget "$file" most_likely_wrong.surface)" = '"data"' ]
  [ "$(jget "$file" known_not_in_diff)" = '"prod has 2M rows"' ]
  [ "$(jget "$file" provenance.degraded)" = false ]
  [ ! -e "$REPO/.forge/reflection-input.json" ]
  [ -f "${file%.reflection.json}.input.json" ]
  stop
  second=$(last_sidecar)
  [ "$second" != "$file" ]
  [ "$(jget "$second" confidence)" = null ]
  [ "$(jget "$second" provenance.degraded)" = true ]
  [ "$(jget "$second" provenance.reflection_attempt)" = 2 ]
}

@test "a kit reached through links (a linked folder, a linked parent) still runs its node helper, not the bash fallback" {
  mkdir -p "$BATS_TEST_TMPDIR/real" "$REPO/.forge"
  ln -s "$KIT_ROOT/hooks" "$BATS_TEST_TMPDIR/real/kit"
  ln -s "$BATS_TEST_TMPDIR/real" "$BATS_TEST_TMPDIR/via"
  cat >"$REPO/.forge/reflection-input.json" <<'JSON'
{"confidence":0.7,"most_likely_wrong":{"surface":"ui","description":"the spacing"},"known_not_in_diff":null}
JSON
  hook_run "$REPO" bash "$BATS_TEST_TMPDIR/via/kit/reflect-stop-hook.sh" <"$PAYLOADS/stop.json"
  assert_promise
  file=$(last_sidecar)
  # Merged and not degraded: only the helper does that (the bash fallback always degrades).
  [ "$(jget "$file" confidence)" = 0.7 ]
  [ "$(jget "$file" provenance.degraded)" = false ]
}

@test "the session's count is rewritten in place to exactly its new line, whatever the file held before" {
  stop
  assert_promise
  count_file=$(find "$REPO/.forge/sessions" -name '*.count')
  [ "$(cat "$count_file")" = 1 ]
  # Longer than what replaces it: the helper writes over it (no O_TRUNC) and cuts it to length.
  printf '5\nleft over from an older writer, longer than the new count\n' >"$count_file"
  stop
  assert_promise
  [ "$(jget "$(last_sidecar)" provenance.reflection_attempt)" = 6 ]
  [ "$(od -An -c "$count_file" | tr -d ' ')" = '6\n' ]
  [ "$(stat -c %a "$count_file")" = 600 ]
}

@test "an invalid self-report is kept aside with the reason and the sidecar degrades" {
  mkdir -p "$REPO/.forge"
  echo '{"confidence":2,"most_likely_wrong":{"surface":"auth","description":"x"},"known_not_in_diff":null}' >"$REPO/.forge/reflection-input.json"
  stop
  assert_promise
  file=$(last_sidecar)
  [ "$(jget "$file" confidence)" = null ]
  [ "$(jget "$file" provenance.degraded)" = true ]
  reason=$(cat "$REPO"/.forge/rejected-input/*.reason)
  [[ "$reason" == *"/confidence"* ]]
  [ -f "$(find "$REPO/.forge/rejected-input" -name '*.json')" ]
  [ ! -e "$REPO/.forge/reflection-input.json" ]
}

@test "a self-report written for another session is neither merged nor taken: it waits for its own session" {
  export REFLECTION_INPUT="$BATS_TEST_TMPDIR/self report.json"
  echo '{"confidence":0.9,"most_likely_wrong":{"surface":"none","description":"x"},"known_not_in_diff":null,"session_id":"other"}' >"$REFLECTION_INPUT"
  stop
  assert_promise
  [ "$(jget "$(last_sidecar)" confidence)" = null ]
  [ "$(jget "$(last_sidecar)" provenance.degraded)" = true ]
  [ -f "$REFLECTION_INPUT" ]
  [ ! -e "$REPO/.forge/rejected-input" ]
  # The same file, once it names this session, is merged by this session's next Stop.
  sed -i 's/"other"/"7f3c2a9e-4b1d-4e8a-9c6f-2d5e8b1a0c34"/' "$REFLECTION_INPUT"
  stop
  [ "$(jget "$(last_sidecar)" confidence)" = 0.9 ]
  [ ! -e "$REFLECTION_INPUT" ]
}

@test "files_changed is what git says since the session's base: commits, staged, unstaged, untracked, both sides of a rename" {
  hook_run "$REPO" bash "$EVENT_HOOK" SessionStart <"$PAYLOADS/session-start.json"
  assert_promise
  [ "$(head -n 1 "$REPO/.forge/sessions/7f3c2a9e-4b1d-4e8a-9c6f-2d5e8b1a0c34.base")" = "$BASE" ]
  cd "$REPO"
  printf 'ignored.log\n' >.gitignore && git add .gitignore && git commit -qm 'ignore logs'
  mkdir -p db src/auth docs && echo 'create table t (id int);' >db/001_init.sql
  git add db && git commit -qm 'add migration'
  echo staged >docs/guide.md && git add docs/guide.md
  echo 'more' >>README.md
  git mv README.md README.txt
  echo secret >ignored.log
  echo 'export const t = 1;' >src/auth/token.ts
  stop
  assert_promise
  file=$(last_sidecar)
  [ "$(jget "$file" files_changed)" = '[".gitignore","README.md","README.txt","db/001_init.sql","docs/guide.md","src/auth/token.ts"]' ]
  [ "$(jget "$file" risk.surface)" = '"auth"' ]
  expected=$( (git diff --name-only --no-renames "$BASE"; git ls-files --others --exclude-standard) | LC_ALL=C sort -u | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.stringify(s.split("\n").filter(Boolean))))')
  [ "$(jget "$file" files_changed)" = "$expected" ]
}

@test "without a recorded base the change is measured against HEAD, and a repo without commits still works" {
  cd "$REPO"
  echo x >>README.md && git commit -qam 'committed before the session'
  echo y >notes.md
  stop
  [ "$(jget "$(last_sidecar)" files_changed)" = '["notes.md"]' ]
  fresh="$BATS_TEST_TMPDIR/fresh"
  mkdir -p "$fresh/src" && git -C "$fresh" init -q && echo 'k' >"$fresh/src/session.ts"
  hook_run "$fresh" bash "$STOP_HOOK" <"$PAYLOADS/stop.json"
  assert_promise
  file=$(last_sidecar "$fresh/.forge/reflections")
  [ "$(jget "$file" files_changed)" = '["src/session.ts"]' ]
  [ "$(jget "$file" risk.surface)" = '"auth"' ]
  [[ "$(jget "$file" task_ref)" == '"fresh#'* ]]
}

@test "task_ref, agent and attempt come from the environment when set; a detached HEAD gives repo@sha" {
  REFLECTION_TASK_REF='acme/app#42' REFLECTION_AGENT=claude-code REFLECTION_ATTEMPT=3 stop
  file=$(last_sidecar)
  [ "$(jget "$file" task_ref)" = '"acme/app#42"' ]
  [ "$(jget "$file" agent)" = '"claude-code"' ]
  [ "$(jget "$file" provenance.reflection_attempt)" = 3 ]
  REFLECTION_ATTEMPT=0 REFLECTION_TASK_REF='acme/app#42' stop
  [ "$(jget "$(last_sidecar)" provenance.reflection_attempt)" = 2 ]
  git -C "$REPO" checkout -q --detach
  REFLECTION_MODE=orchestrated stop
  file=$(last_sidecar)
  [ "$(jget "$file" task_ref)" = "\"repo@${BASE:0:7}\"" ]
  [ "$(jget "$file" provenance.reflection_mode)" = '"orchestrated"' ]
}

@test "a cwd outside any git repo gives an empty file list, degraded, valid" {
  plain="$BATS_TEST_TMPDIR/plain"
  mkdir -p "$plain"
  hook_run "$plain" bash "$STOP_HOOK" <"$PAYLOADS/stop.json"
  assert_promise
  file=$(last_sidecar "$plain/.forge/reflections")
  [ "$(jget "$file" files_changed)" = '[]' ]
  [ "$(jget "$file" provenance.degraded)" = true ]
  run forge_reflect validate "$file"
  [ "$status" -eq 0 ]
}

@test "no node on PATH: the bash twin gives a degraded, valid sidecar with the same risk verdict" {
  mkdir -p "$REPO/deploy" && echo 'x' >"$REPO/deploy/helm.yaml" && echo 'y' >"$REPO/guide.md"
  stop
  with_node=$(last_sidecar)
  nonode=$(path_without_node)
  PATH=$nonode hook_run "$REPO" "$nonode/bash" "$STOP_HOOK" <"$PAYLOADS/stop.json"
  assert_promise
  without=$(last_sidecar)
  [ "$without" != "$with_node" ]
  run forge_reflect validate "$without"
  [ "$status" -eq 0 ]
  [ "$(jget "$without" provenance.degraded)" = true ]
  for field in risk files_changed task_ref session_id; do
    [ "$(jget "$without" "$field")" = "$(jget "$with_node" "$field")" ]
  done
}

@test "a helper that hangs or crashes falls back to bash within the time limit" {
  fake="$BATS_TEST_TMPDIR/fake-node"
  mkdir -p "$fake"
  # exec: one process, as the real helper is (the hook kills it by its pid; a child sleep would
  # live on, holding what it inherited of the test's output).
  printf '#!/bin/sh\nexec sleep 60\n' >"$fake/node" && chmod +x "$fake/node"
  start=$SECONDS
  PATH="$fake:$PATH" stop
  assert_promise
  [ $((SECONDS - start)) -lt 15 ]
  [ "$(jget "$(last_sidecar)" provenance.degraded)" = true ]
  printf '#!/bin/sh\necho garbage; exit 1\n' >"$fake/node"
  PATH="$fake:$PATH" stop
  assert_promise
  [ "$(sidecar_count)" -eq 2 ]
  run forge_reflect validate "$REPO/.forge/reflections"
  [ "$status" -eq 0 ]
}

@test "a git that hangs: a degraded sidecar is still written, well inside the 30 s registration, and the git and its child are gone" {
  fake="$BATS_TEST_TMPDIR/slow-git"
  mkdir -p "$fake"
  printf '#!/bin/sh\necho $$ >"%s/git-pid"\nsleep 61 &\necho $! >"%s/child-pid"\nwait\n' "$BATS_TEST_TMPDIR" "$BATS_TEST_TMPDIR" >"$fake/git" && chmod +x "$fake/git"
  start=$SECONDS
  PATH="$fake:$PATH" FORGE_GIT_BUDGET=2 stop
  assert_promise
  [ $((SECONDS - start)) -lt 10 ]
  # Killed at the end of the budget, with what it started (the time limit is kill -KILL: no grace).
  git_pid=$(cat "$BATS_TEST_TMPDIR/git-pid") child_pid=$(cat "$BATS_TEST_TMPDIR/child-pid")
  run kill -0 "$git_pid"
  [ "$status" -ne 0 ]
  # (a killed orphan is reaped by init: give that a moment; alive, it would live 61 s)
  for _ in $(seq 40); do kill -0 "$child_pid" 2>/dev/null || break; sleep 0.05; done
  run kill -0 "$child_pid"
  [ "$status" -ne 0 ]
  file=$(last_sidecar)
  [ "$(jget "$file" files_changed)" = '[]' ]
  [ "$(jget "$file" provenance.degraded)" = true ]
  # A status slower than the budget is a floor that cannot see: it asks for review, naming the budget.
  [ "$(jget "$file" risk.needs_review)" = true ]
  [[ "$(jget "$file" risk.reason)" == *"git did not finish within the 2 s budget"* ]]
}

@test "hostile stdin: empty, non-JSON, another runtime's shape and 10 MB all give a valid sidecar" {
  hook_run "$REPO" bash "$STOP_HOOK" < <(:)
  assert_promise
  hook_run "$REPO" bash "$STOP_HOOK" < <(printf '\x00\xff{{{ not json')
  assert_promise
  for shape in "$PAYLOADS"/other-runtimes/*.json; do
    hook_run "$REPO" bash "$STOP_HOOK" <"$shape"
    assert_promise
  done
  hook_run "$REPO" bash "$STOP_HOOK" < <(head -c 10485760 /dev/zero | tr '\0' 'a')
  assert_promise
  [ "$(sidecar_count)" -eq $((3 + $(find "$PAYLOADS/other-runtimes" -name '*.json' | wc -l))) ]
  run forge_reflect validate "$REPO/.forge/reflections"
  [ "$status" -eq 0 ]
  big=$(find "$REPO/.forge/spool" -name '*.event' -size +1000k)
  [ "$(tail -n +2 "$big" | wc -c)" -eq 1048577 ]
}

@test "a session id of ../../etc/x never reaches a path: the file name keeps only [A-Za-z0-9_-]" {
  hook_run "$REPO" bash "$STOP_HOOK" < <(printf '{"session_id":"../../etc/x","hook_event_name":"Stop"}')
  assert_promise
  file=$(last_sidecar)
  [[ "$(basename "$file")" == *-etcx-*.reflection.json ]]
  [ "$(jget "$file" session_id)" = '"../../etc/x"' ]
  [ ! -e "$BATS_TEST_TMPDIR/etc" ]
  [ -z "$(find "$BATS_TEST_TMPDIR" -newer "$REPO/README.md" -path '*etc*' -not -path "$REPO/.forge/*")" ]
  long=$(printf 'a%.0s' {1..300})
  hook_run "$REPO" bash "$STOP_HOOK" < <(printf '{"session_id":"%s"}' "$long")
  name=$(basename "$(find "$REPO/.forge/reflections" -name "*-a*-*.reflection.json")")
  [[ "$name" == *"-$(printf 'a%.0s' {1..64})-"* ]]
  [[ "$name" != *"$(printf 'a%.0s' {1..65})"* ]]
}

@test "a read-only sidecar folder: exit 0, empty stdout, no sidecar, and the self-report is not lost" {
  command -v unshare >/dev/null
  mkdir -p "$REPO/.forge/reflections"
  echo '{"confidence":0.5,"most_likely_wrong":{"surface":"none","description":"x"},"known_not_in_diff":null}' >"$REPO/.forge/reflection-input.json"
  HOOK_STATUS=0
  # shellcheck disable=SC2016,SC2034 # $0 is expanded by the inner bash; assert_promise reads both
  HOOK_STDOUT=$(cd "$REPO" && unshare -rm bash -c 'mount --bind .forge/reflections .forge/reflections && mount -o remount,bind,ro .forge/reflections && bash "$0"' "$STOP_HOOK" <"$PAYLOADS/stop.json") || HOOK_STATUS=$?
  assert_promise
  [ "$(sidecar_count)" -eq 0 ]
  [ -f "$REPO/.forge/reflection-input.json" ]
  [ -z "$(find "$REPO/.forge" -name '.tmp-*')" ]
}

# start_stop_hung_in_git: starts the Stop hook in the background with a git that says when the hook
# has reached it, then hangs (as `sleep 30`); returns once the hook is inside git, its pid in $victim.
start_stop_hung_in_git() {
  local fake=$BATS_TEST_TMPDIR/slow-git
  mkdir -p "$fake"
  printf '#!/bin/sh\necho $$ >"%s/git-pid"\n: >"%s/git-started"\nexec sleep 30\n' "$BATS_TEST_TMPDIR" "$BATS_TEST_TMPDIR" >"$fake/git" && chmod +x "$fake/git"
  (cd "$REPO" && PATH="$fake:$PATH" exec bash "$STOP_HOOK" <"$PAYLOADS/stop.json" >/dev/null 2>&1) &
  victim=$!
  for _ in $(seq 200); do [ -e "$BATS_TEST_TMPDIR/git-started" ] && break; sleep 0.05; done
  [ -e "$BATS_TEST_TMPDIR/git-started" ]
}

# kill_hung_git: ends the hung fake git of start_stop_hung_in_git by its own pid (a pattern such as
# `pkill -f "sleep 30"` would also kill any other process on the machine whose command matches).
kill_hung_git() {
  kill -9 "$(cat "$BATS_TEST_TMPDIR/git-pid" 2>/dev/null)" 2>/dev/null || true
}

# helper_of PID: the pid of the node helper the Stop hook PID started (empty when none).
helper_of() {
  local pid
  for pid in $(pgrep -P "$1"); do
    grep -q reflect-helper "/proc/$pid/cmdline" 2>/dev/null && echo "$pid"
  done
  return 0
}

# wait_gone PID: waits (at most 5 s) for PID to end; fails if it does not.
wait_gone() {
  for _ in $(seq 100); do kill -0 "$1" 2>/dev/null || return 0; sleep 0.05; done
  return 1
}

# stop_events: the Stop events in the spool, one line (the envelope) each.
stop_events() {
  local f
  for f in "$REPO"/.forge/spool/*.event; do
    [ -e "$f" ] || continue
    head -n 1 "$f" | grep '"event":"Stop"'
  done
  return 0
}

@test "SIGKILL in mid-run leaves no partial sidecar, the helper still spools the Stop event, and the next run works despite its lock" {
  start_stop_hung_in_git
  helper=$(helper_of "$victim")
  [ -n "$helper" ]
  kill -9 "$victim"
  wait "$victim" || true
  # The Stop event was handed to the helper before git: it spools it once it has started.
  wait_gone "$helper"
  kill_hung_git
  [ "$(sidecar_count)" -eq 0 ]
  # Its lock, left: stale from now on. With /proc an owner file; without (a Mac: no flock either)
  # a pid file.
  if [[ -r ${FORGE_PROC_ROOT:-/proc}/$$/stat ]]; then left='*.owner'; else left='*.pid'; fi
  [ -n "$(find "$REPO/.forge/locks" -path "$REPO/.forge/locks/$left")" ]
  [ "$(stop_events | wc -l)" -eq 1 ]
  for f in "$REPO"/.forge/spool/*.event; do head -n 1 "$f" | node -e 'JSON.parse(require("fs").readFileSync(0,"utf8"))'; done
  stop
  assert_promise
  [ "$(sidecar_count)" -eq 1 ]
  [ -z "$(find "$REPO/.forge" -name '.tmp-*')" ]
}

@test "a hook killed while git hangs leaves no helper behind: no process it started holds the helper's input open" {
  start_stop_hung_in_git
  helper=$(helper_of "$victim")
  [ -n "$helper" ]
  kill -9 "$victim"
  wait "$victim" || true
  # The hung git (sleep 30) lives on; the helper must not wait for it.
  gone=1
  wait_gone "$helper" || gone=0
  kill_hung_git
  [ "$gone" -eq 1 ]
  [ "$(sidecar_count)" -eq 0 ]
}

@test "with /proc, the session lock names its owner by pid and start time: a live owner blocks; a dead one, a reused pid or an old empty file does not; the helper lets it go" {
  # The /proc path (Linux), in every pass: in the Mac pass too, whose hooks otherwise see no /proc.
  # shellcheck disable=SC2030,SC2031 # each test is its own subshell: meant to stay in it
  export FORGE_PROC_ROOT=/proc
  lock="$REPO/.forge/locks/stop-7f3c2a9e-4b1d-4e8a-9c6f-2d5e8b1a0c34.owner"
  mkdir -p "${lock%/*}"
  spy=$BATS_TEST_TMPDIR/spy-bin
  mkdir -p "$spy"
  for tool in flock rm mv; do
    real=$(hook_tool "$tool") || continue   # a Mac has no flock
    printf '#!/bin/sh\necho %s >>"%s/started"\nexec %s "$@"\n' "$tool" "$BATS_TEST_TMPDIR" "$real" >"$spy/$tool"
    chmod +x "$spy/$tool"
  done
  # A live owner: this test's own shell, with its start time.
  read -r -a fields <<<"$(sed 's/.*) //' "/proc/$$/stat")"
  echo "$$ ${fields[19]}" >"$lock"
  stop
  assert_promise
  [ "$(sidecar_count)" -eq 0 ]
  [ "$(stop_events | wc -l)" -eq 1 ]   # the turn's Stop event is spooled all the same, once
  [ -z "$(find "$REPO/.forge/spool" -name '.tmp-*')" ]
  [ "$(cat "$lock")" = "$$ ${fields[19]}" ]   # a lock held by another is left alone
  # The same pid with another start time (a reused pid): stale, taken, and let go by the helper
  # without any process on the way (no flock, no rm, no mv).
  echo "$$ 1" >|"$lock"
  PATH="$spy:$PATH" stop
  assert_promise
  [ "$(sidecar_count)" -eq 1 ]
  [ ! -e "$lock" ]
  rm -f "$BATS_TEST_TMPDIR/started"
  PATH="$spy:$PATH" stop
  [ "$(sidecar_count)" -eq 2 ]
  [ ! -e "$BATS_TEST_TMPDIR/started" ]
  [ ! -e "$lock" ]
  # A dead owner.
  sleep 0.01 &
  dead=$!
  wait "$dead"
  echo "$dead 4242" >"$lock"
  stop
  [ "$(sidecar_count)" -eq 3 ]
  # An owner line never written: stale when the file is older than the run, honoured when newer.
  : >"$lock"
  touch -d '-1 minute' "$lock"
  stop
  [ "$(sidecar_count)" -eq 4 ]
  : >"$lock"
  touch -d '+1 minute' "$lock"
  stop
  [ "$(sidecar_count)" -eq 4 ]
  rm -f "$lock"
  # A link planted at the lock's name is neither followed nor removed: no sidecar, target untouched.
  ln -s "$BATS_TEST_TMPDIR/target" "$lock"
  stop
  assert_promise
  [ "$(sidecar_count)" -eq 4 ]
  [ ! -e "$BATS_TEST_TMPDIR/target" ]
  [ -L "$lock" ]
}

@test "without /proc, with flock(1) (util-linux's; on a Mac, Homebrew's): the session lock is the kernel's: a live holder blocks, a SIGKILLed one does not, and the drain does not inherit it" {
  command -v flock >/dev/null   # this test's own flock, and the hook's
  # shellcheck disable=SC2030,SC2031 # each test is its own subshell: meant to stay in it
  export FORGE_PROC_ROOT=$BATS_TEST_TMPDIR/no-proc
  # The hook's flock: the system's. A stock Mac has none: there, this is a Mac with one installed.
  with_flock=$PATH
  if ! hook_tool flock >/dev/null; then
    mkdir -p "$BATS_TEST_TMPDIR/flock-bin"
    ln -s "$(command -v flock)" "$BATS_TEST_TMPDIR/flock-bin/flock"
    with_flock=$BATS_TEST_TMPDIR/flock-bin:$PATH
  fi
  PATH=$with_flock hook_tool flock >/dev/null
  lock="$REPO/.forge/locks/stop-7f3c2a9e-4b1d-4e8a-9c6f-2d5e8b1a0c34.lock.flock"
  mkdir -p "${lock%/*}" && : >"$lock"
  flock "$lock" sleep 30 &
  holder=$!
  for _ in $(seq 50); do flock -n "$lock" true || break; sleep 0.05; done
  PATH=$with_flock stop
  assert_promise
  [ "$(sidecar_count)" -eq 0 ]
  # The turn's Stop event is spooled all the same, once (the hook and its helper may both try).
  [ "$(stop_events | wc -l)" -eq 1 ]
  [ -z "$(find "$REPO/.forge/spool" -name '.tmp-*')" ]
  # flock's child (the sleep) holds the lock too: it goes first, by its parent's pid.
  pkill -9 -P "$holder" || true
  kill -9 "$holder" 2>/dev/null || true
  wait "$holder" || true
  # A leftover pid file of the old scheme naming a live process is not obeyed either.
  echo "$$ $(date +%s)" >"${lock%.lock.flock}.pid"
  # The Stop's background drain is a CLI that outlives the hook: it must not keep the lock.
  printf '#!/bin/sh\nsleep 5\n' >"$BATS_TEST_TMPDIR/slow-cli" && chmod +x "$BATS_TEST_TMPDIR/slow-cli"
  PATH=$with_flock FORGE_REFLECT_CLI="$BATS_TEST_TMPDIR/slow-cli" stop
  [ "$(sidecar_count)" -eq 1 ]
  flock -n "$lock" true
  pkill -f "$BATS_TEST_TMPDIR/slow-cli" || true
}

@test "without /proc or flock: a lock is honoured while its owner lives and is fresh; stale when the owner is gone or it is old; the helper lets it go" {
  # shellcheck disable=SC2030,SC2031 # each test is its own subshell: meant to stay in it
  export FORGE_PROC_ROOT=$BATS_TEST_TMPDIR/no-proc
  no_flock=$(path_without flock)
  lock="$REPO/.forge/locks/stop-7f3c2a9e-4b1d-4e8a-9c6f-2d5e8b1a0c34.pid"
  mkdir -p "${lock%/*}"
  now=$(date +%s)
  echo "$$ $now" >"$lock"
  PATH="$no_flock" hook_run "$REPO" bash "$STOP_HOOK" <"$PAYLOADS/stop.json"
  assert_promise
  [ "$(sidecar_count)" -eq 0 ]
  [ "$(cat "$lock")" = "$$ $now" ]
  echo "$$ $((now - 120))" >|"$lock"
  PATH="$no_flock" hook_run "$REPO" bash "$STOP_HOOK" <"$PAYLOADS/stop.json"
  [ "$(sidecar_count)" -eq 1 ]
  [ ! -e "$lock" ]   # let go once the sidecar stands
  sleep 0.01 &
  dead=$!
  wait "$dead"
  echo "$dead $now" >"$lock"
  PATH="$no_flock" hook_run "$REPO" bash "$STOP_HOOK" <"$PAYLOADS/stop.json"
  [ "$(sidecar_count)" -eq 2 ]
  [ ! -e "$lock" ]
  # A lock file left empty an hour ago (a taker killed between its open and its write) is stale.
  : >"$lock"
  touch -d '1 hour ago' "$lock"
  PATH="$no_flock" hook_run "$REPO" bash "$STOP_HOOK" <"$PAYLOADS/stop.json"
  [ "$(sidecar_count)" -eq 3 ]
}

@test "state is private: folders 0700, files 0600, a .gitignore of * in the state dir" {
  echo x >"$REPO/new.md"
  stop
  [ "$(stat -c %a "$REPO/.forge")" = 700 ]
  [ "$(stat -c %a "$REPO/.forge/reflections")" = 700 ]
  [ "$(stat -c %a "$(last_sidecar)")" = 600 ]
  [ "$(cat "$REPO/.forge/.gitignore")" = '*' ]
  [ -z "$(git -C "$REPO" status --porcelain --ignored=no | grep forge || true)" ]
}

@test "FORGE_DIR and REFLECTION_DIR move the state and the sidecars" {
  export FORGE_DIR="$BATS_TEST_TMPDIR/state dir" REFLECTION_DIR="$BATS_TEST_TMPDIR/side cars"
  stop
  assert_promise
  [ "$(sidecar_count "$REFLECTION_DIR")" -eq 1 ]
  [ -n "$(find "$FORGE_DIR/spool" -name '*.event')" ]
  [ ! -e "$REPO/.forge" ]
}

@test "the Stop and reflection.written events are spooled with the sidecar's path" {
  stop
  files=("$REPO"/.forge/spool/*.event)
  [ "${#files[@]}" -eq 2 ]
  # One of each (by content: on bash 3.2 both names carry 16 zeros, not their order).
  [ "$(grep -l '"event":"Stop"' "${files[@]}" | wc -l | tr -d ' ')" -eq 1 ]
  written=$(grep -l '"event":"reflection.written"' "${files[@]}")
  [ "$(printf '%s\n' "$written" | wc -l | tr -d ' ')" -eq 1 ]
  tail -n +2 "$written" >"$BATS_TEST_TMPDIR/written.json"
  [ "$(jget "$BATS_TEST_TMPDIR/written.json" sidecar)" = "\"$(last_sidecar)\"" ]
  [ "$(jget "$BATS_TEST_TMPDIR/written.json" self_report)" = '"absent"' ]
}

# stop_with_fake_node NAME BODY: the Stop hook with `node` on PATH a sh script of BODY.
stop_with_fake_node() {
  local fake=$BATS_TEST_TMPDIR/$1
  mkdir -p "$fake"
  printf '%s\n%s\n' "$FAKE_SH" "$2" >"$fake/node" && chmod +x "$fake/node"
  PATH="$fake:$PATH" stop
}

# written_events: the payload lines of the reflection.written events in the spool, one per line.
written_events() {
  local f
  for f in "$REPO"/.forge/spool/*.event; do
    grep -q '"event":"reflection.written"' "$f" && tail -n +2 "$f"
  done
  return 0
}

@test "the helper spools reflection.written; one that half-wrote it and died leaves the hook to spool it once, whole" {
  echo x >"$REPO/new.md"
  stop
  assert_promise
  [ "$(written_events | wc -l)" -eq 1 ]
  written_events >"$BATS_TEST_TMPDIR/written.json"
  [ "$(jget "$BATS_TEST_TMPDIR/written.json" sidecar)" = "\"$(last_sidecar)\"" ]
  [ "$(jget "$BATS_TEST_TMPDIR/written.json" degraded)" = true ]
  rm -f "$REPO"/.forge/spool/*.event
  # A helper that reads its facts, writes the first bytes of the event under the name it was given, then dies.
  # shellcheck disable=SC2016 # expanded by the fake node, not here
  stop_with_fake_node half-writer 'tmp=$(sed -z "/^FORGE_H_END=1\$/q" | tr "\000" "\n" | sed -n "s/^FORGE_H_WRITTEN_TMP=//p"); printf "{\"v\":1" >"$tmp"; exit 1'
  assert_promise
  [ "$(written_events | wc -l)" -eq 1 ]
  for f in "$REPO"/.forge/spool/*.event; do
    head -n 1 "$f" | node -e 'JSON.parse(require("fs").readFileSync(0,"utf8"))'
    tail -n +2 "$f" | node -e 'JSON.parse(require("fs").readFileSync(0,"utf8"))'
  done
  [ "$(jget "$(last_sidecar)" provenance.degraded)" = true ]
  [ -z "$(find "$REPO/.forge" -name '.tmp-*')" ]
}

@test "a turn that ended on a model error, its helper stopped: the hook's own reflection.written names the error" {
  local fake=$BATS_TEST_TMPDIR/stopped-node
  mkdir -p "$fake"
  printf '%s\n%s\n' "$FAKE_SH" 'exit 1' >"$fake/node" && chmod +x "$fake/node"
  printf '%s' '{"session_id":"s-err","hook_event_name":"StopFailure","error":"rate_limit","last_assistant_message":"API Error: Request rejected (429)"}' >"$BATS_TEST_TMPDIR/failure.json"
  PATH="$fake:$PATH" stop "$BATS_TEST_TMPDIR/failure.json"
  assert_promise
  [ "$(jget "$(last_sidecar)" provenance.degraded)" = true ]
  written_events >"$BATS_TEST_TMPDIR/written.json"
  [ "$(jget "$BATS_TEST_TMPDIR/written.json" self_report_note)" = '"the turn ended on an error (StopFailure: rate_limit): there is no final answer"' ]
  # Any other turn's carries no note.
  rm -f "$REPO"/.forge/spool/*.event
  PATH="$fake:$PATH" stop
  written_events >"$BATS_TEST_TMPDIR/written.json"
  [ "$(jget "$BATS_TEST_TMPDIR/written.json" self_report_note)" = undefined ]
}

@test "a helper that is gone before the facts reach it (its stdin closed, or exited) costs the self-report, never the sidecar" {
  # Writing to a pipe nobody reads raises SIGPIPE in the hook: it must not end the run.
  stop_with_fake_node deaf-node 'exec 0<&-; sleep 1'
  assert_promise
  [ "$(sidecar_count)" -eq 1 ]
  stop_with_fake_node gone-node 'exit 0'
  assert_promise
  [ "$(sidecar_count)" -eq 2 ]
  [ "$(written_events | wc -l)" -eq 2 ]
  # The helper never moved the Stop events: the hook did, once each.
  [ "$(stop_events | wc -l)" -eq 2 ]
  run forge_reflect validate "$REPO/.forge/reflections"
  [ "$status" -eq 0 ]
  [ "$(jget "$(last_sidecar)" provenance.degraded)" = true ]
  [ -z "$(find "$REPO/.forge" -name '.tmp-*')" ]
}

@test "the facts reach the helper whole: a task_ref with a newline, quotes and = survives" {
  # The self-report proves the helper wrote the sidecar: the bash fallback cannot merge one.
  mkdir -p "$REPO/.forge"
  echo '{"confidence":0.4,"most_likely_wrong":{"surface":"test","description":"d"},"known_not_in_diff":null}' >"$REPO/.forge/reflection-input.json"
  REFLECTION_TASK_REF=$'acme#1\nline "two" a=b' stop
  assert_promise
  [ "$(jget "$(last_sidecar)" task_ref)" = '"acme#1\nline \"two\" a=b"' ]
  [ "$(jget "$(last_sidecar)" confidence)" = 0.4 ]
  # The helper's reflection.written says what the sidecar says.
  written_events >"$BATS_TEST_TMPDIR/written.json"
  [ "$(jget "$BATS_TEST_TMPDIR/written.json" degraded)" = "$(jget "$(last_sidecar)" provenance.degraded)" ]
  [ "$(jget "$BATS_TEST_TMPDIR/written.json" degraded)" = false ]
  [ "$(jget "$BATS_TEST_TMPDIR/written.json" self_report_source)" = '"file"' ]
}

@test "a branch with an upstream: git status is not asked to count ahead/behind, and the sidecar is the same" {
  # An upstream 300 commits ahead of main (counting them walks history: 113 ms at 20,000 here).
  git -C "$REPO" checkout -q -b up
  for i in $(seq 300); do git -C "$REPO" commit -q --allow-empty -m "c$i"; done
  git -C "$REPO" checkout -q main
  git -C "$REPO" branch -q --set-upstream-to=up main
  echo x >"$REPO/new.md"
  spy=$BATS_TEST_TMPDIR/spy-git
  mkdir -p "$spy"
  printf '#!/bin/sh\necho "$*" >>"%s/git-calls"\nexec %s "$@"\n' "$BATS_TEST_TMPDIR" "$(hook_tool git)" >"$spy/git" && chmod +x "$spy/git"
  PATH="$spy:$PATH" stop
  assert_promise
  grep -q ' status .*--no-ahead-behind' "$BATS_TEST_TMPDIR/git-calls"
  [ "$(grep -c ' status ' "$BATS_TEST_TMPDIR/git-calls")" -eq 1 ]
  [ "$(jget "$(last_sidecar)" task_ref)" = '"repo#main"' ]
  [ "$(jget "$(last_sidecar)" files_changed)" = '["new.md"]' ]
}

@test "a run killed after taking the self-report gives it back: the next run merges it" {
  mkdir -p "$REPO/.forge"
  echo '{"confidence":0.6,"most_likely_wrong":{"surface":"test","description":"flaky"},"known_not_in_diff":null}' >"$REPO/.forge/reflection-input.json"
  fake="$BATS_TEST_TMPDIR/slow-node"
  mkdir -p "$fake"
  # The fake node says when the hook has sent it the facts (the self-report is taken by then), then hangs.
  printf '%s\necho $$ >"%s/node-pid"\nsed -z "/^FORGE_H_END=1\\$/q" >/dev/null\n: >"%s/node-started"\nexec sleep 30\n' "$FAKE_SH" "$BATS_TEST_TMPDIR" "$BATS_TEST_TMPDIR" >"$fake/node" && chmod +x "$fake/node"
  (cd "$REPO" && PATH="$fake:$PATH" exec bash "$STOP_HOOK" <"$PAYLOADS/stop.json" >/dev/null 2>&1) &
  victim=$!
  for _ in $(seq 200); do [ -e "$BATS_TEST_TMPDIR/node-started" ] && break; sleep 0.05; done
  [ -e "$BATS_TEST_TMPDIR/node-started" ]
  kill -9 "$victim"
  wait "$victim" || true
  kill -9 "$(cat "$BATS_TEST_TMPDIR/node-pid")" 2>/dev/null || true
  [ ! -e "$REPO/.forge/reflection-input.json" ]
  [ "$(sidecar_count)" -eq 0 ]
  stop
  assert_promise
  file=$(last_sidecar)
  [ "$(jget "$file" confidence)" = 0.6 ]
  [ "$(jget "$file" provenance.degraded)" = false ]
  # Outside the spool nothing is left. In it, the killed run's Stop event is still a temp file: this
  # fake helper never moved it (the real one does first thing), and a drain removes it after 60 s.
  [ -z "$(find "$REPO/.forge" -path "$REPO/.forge/spool" -prune -o -name '.tmp-*' -print)" ]
  [ "$(stop_events | wc -l)" -eq 1 ]
}

@test "a sidecar is written in reflections/.tmp: the sweep lists that at every Stop, and the folder of sidecars only when .tmp is made" {
  stop
  assert_promise
  in_flight="$REPO/.forge/reflections/.tmp"
  [ -d "$in_flight" ] && [ ! -L "$in_flight" ]
  [ "$(stat -c %a "$in_flight")" = 700 ]
  [ -z "$(ls -A "$in_flight")" ]
  # Leftovers of a killed run (a pid that is gone): the one in .tmp goes at the next Stop; one beside
  # the sidecars, where versions before .tmp wrote them, is not looked for (that listing grows with
  # every sidecar ever written).
  printf '{' >"$in_flight/.tmp-999999-x.json"
  printf '{' >"$REPO/.forge/reflections/.tmp-999999-old.json"
  stop
  assert_promise
  [ ! -e "$in_flight/.tmp-999999-x.json" ]
  [ -e "$REPO/.forge/reflections/.tmp-999999-old.json" ]
  # The run that makes .tmp (the first after an upgrade) sweeps the folder once.
  rm -r "$in_flight"
  stop
  assert_promise
  [ ! -e "$REPO/.forge/reflections/.tmp-999999-old.json" ]
  [ "$(sidecar_count)" -eq 3 ]
  [ -z "$(ls -A "$in_flight")" ]
  # A link planted as .tmp is never written through: the sidecar is written beside the others.
  rm -r "$in_flight"
  mkdir -p "$BATS_TEST_TMPDIR/elsewhere"
  ln -s "$BATS_TEST_TMPDIR/elsewhere" "$in_flight"
  stop
  assert_promise
  [ -z "$(ls -A "$BATS_TEST_TMPDIR/elsewhere")" ]
  [ -L "$in_flight" ]
  [ "$(sidecar_count)" -eq 4 ]
  [ -z "$(find "$REPO/.forge/reflections" -maxdepth 1 -name '.tmp-*')" ]
}

@test "orchestrated mode takes the attempt from the bounce count file of the task; solo ignores it" {
  mkdir -p "$REPO/.forge/attempts"
  printf '3\n' >"$REPO/.forge/attempts/acme_2f_c3_a9x_2342.attempt"
  REFLECTION_MODE=orchestrated REFLECTION_TASK_REF='acme/éx#42' stop
  assert_promise
  [ "$(jget "$(last_sidecar)" provenance.reflection_attempt)" = 3 ]
  REFLECTION_MODE=solo REFLECTION_TASK_REF='acme/éx#42' stop
  [ "$(jget "$(last_sidecar)" provenance.reflection_attempt)" = 2 ]
  printf 'garbage\n' >"$REPO/.forge/attempts/acme_2f_c3_a9x_2342.attempt"
  REFLECTION_MODE=orchestrated REFLECTION_TASK_REF='acme/éx#42' stop
  assert_promise
  [ "$(jget "$(last_sidecar)" provenance.reflection_attempt)" = 3 ]
}

@test "the Stop hook starts a drain when the CLI is reachable, without waiting for it or lending it stdout" {
  # A CLI that waits at a gate (a FIFO) until this test opens it, or gives up after 60 s. A hook that
  # waited for it would return only once it gave up, and the gate would then find no one there.
  slow="$BATS_TEST_TMPDIR/slow-cli"
  gate="$BATS_TEST_TMPDIR/gate"
  mkfifo "$gate"
  printf '%s\ntimeout 60 sh -c %s\necho "drain output must not reach the hook"\n' "$FAKE_SH" "'read -r _ <\"$gate\"'" >"$slow" && chmod +x "$slow"
  FORGE_REFLECT_CLI=$slow stop
  assert_promise
  # The hook did start it: it is there, waiting at the gate (opening a FIFO waits for its reader).
  # shellcheck disable=SC2016 # $1 is the inner sh's
  timeout 10 sh -c 'printf "go\n" >"$1"' _ "$gate"
  FORGE_REFLECT_CLI="$KIT_ROOT/packages/forge-reflect/bin/forge-reflect.js" stop
  assert_promise
  for _ in $(seq 100); do
    [ -f "$REPO/.forge/events.db" ] && [ -z "$(find "$REPO/.forge/spool" -maxdepth 1 -name '*.event')" ] && break
    sleep 0.1
  done
  [ -z "$(find "$REPO/.forge/spool" -maxdepth 1 -name '*.event')" ]
  cd "$REPO" || return 1
  run forge_reflect events --json --type reflection.written
  [ "$status" -eq 0 ]
  [ "$(printf '%s' "$output" | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).length))')" -eq 2 ]
}

@test "the drain is started once: by the helper after its answer, by the hook when the helper failed; a relative FORGE_REFLECT_CLI is the project's" {
  marker="$BATS_TEST_TMPDIR/drains"
  cli="$BATS_TEST_TMPDIR/count-cli"
  # The stand-in CLI notes who it is: its argument, FORGE_DIR, cwd and session (a leader of its own).
  # shellcheck disable=SC2016 # the $ are the stand-in's
  printf '%s\nprintf "%%s %%s %%s %%s\\n" "$1" "$FORGE_DIR" "$(pwd -P)" "$(ps -o sid= -p $$ | tr -d " ")" >>"%s"\n' "$FAKE_SH" "$marker" >"$cli" && chmod +x "$cli"
  FORGE_REFLECT_CLI=$cli stop
  assert_promise
  for _ in $(seq 50); do [ -s "$marker" ] && break; sleep 0.1; done
  sleep 0.3   # time for a second start, which must not come
  [ "$(wc -l <"$marker")" -eq 1 ]
  read -r arg dir cwd sid <"$marker"
  [ "$arg" = ingest ] && [ "$dir" = "$REPO/.forge" ] && [ "$cwd" = "$(cd "$REPO" && pwd -P)" ]
  [ "$sid" != "$(ps -o sid= -p $$ | tr -d ' ')" ]
  # A helper that fails: the hook writes the sidecar itself and starts the drain.
  FORGE_REFLECT_CLI=$cli stop_with_fake_node failing-node 'sed -z "/^FORGE_H_END=1\$/q" >/dev/null; exit 1'
  assert_promise
  [ "$(jget "$(last_sidecar)" provenance.degraded)" = true ]
  for _ in $(seq 50); do [ "$(wc -l <"$marker")" -ge 2 ] && break; sleep 0.1; done
  sleep 0.3
  [ "$(wc -l <"$marker")" -eq 2 ]
  # Relative to the project, wherever the runtime starts the hook.
  mkdir -p "$REPO/tools" "$REPO/sub"
  cp "$cli" "$REPO/tools/cli"
  FORGE_REFLECT_CLI=tools/cli hook_run "$REPO/sub" bash "$STOP_HOOK" <"$PAYLOADS/stop.json"
  assert_promise
  for _ in $(seq 50); do [ "$(wc -l <"$marker")" -ge 3 ] && break; sleep 0.1; done
  [ "$(wc -l <"$marker")" -eq 3 ]
}

@test "the helper starts the drain only once its input is closed: the hook holds it open until it exits" {
  mark="$BATS_TEST_TMPDIR/drain-started"
  cli="$BATS_TEST_TMPDIR/mark-cli"
  printf '#!/bin/sh\n: >"%s"\n' "$mark" >"$cli" && chmod +x "$cli"
  coproc HELPER { exec node "$KIT_ROOT/hooks/lib/reflect-helper.cjs" 2>/dev/null; }
  printf '%s\0' FORGE_H_OUT="$BATS_TEST_TMPDIR/s.json" FORGE_H_GIT_OK=0 FORGE_H_CLOSE_STDOUT=1 \
    FORGE_H_DRAIN_CLI="$cli" FORGE_H_DRAIN_CWD="$BATS_TEST_TMPDIR" FORGE_H_DRAIN_STATE="$BATS_TEST_TMPDIR" FORGE_H_END=1 >&"${HELPER[1]}"
  status_line=''
  IFS= read -r -t 10 status_line <&"${HELPER[0]}"
  [ "$status_line" = 'absent none' ]
  [ -s "$BATS_TEST_TMPDIR/s.json" ]
  # The answer is in, the input still open: no drain yet (a helper that did not wait starts it in ms).
  sleep 0.5
  [ ! -e "$mark" ]
  to_helper=${HELPER[1]}
  exec {to_helper}>&-
  for _ in $(seq 100); do [ -e "$mark" ] && break; sleep 0.05; done
  [ -e "$mark" ]
}

@test "the node helper runs without the user's NODE_OPTIONS: a --require there cannot reach the hook" {
  echo 'require("fs").writeFileSync(process.env.MARK, "ran"); process.stdout.write("noise")' >"$BATS_TEST_TMPDIR/inject.cjs"
  MARK="$BATS_TEST_TMPDIR/injected" NODE_OPTIONS="--require $BATS_TEST_TMPDIR/inject.cjs" stop
  assert_promise
  [ ! -e "$BATS_TEST_TMPDIR/injected" ]
  [ "$(jget "$(last_sidecar)" session_id)" = '"7f3c2a9e-4b1d-4e8a-9c6f-2d5e8b1a0c34"' ]
  run forge_reflect validate "$(last_sidecar)"
  [ "$status" -eq 0 ]
}

@test "the helper places the sidecar and both events itself (no mv); a payload under 4 KiB starts no cat, head, ln or cp; no mkdir or rm for temp files; with /proc no flock, rm or timeout either" {
  # The /proc path, in every pass: in the Mac pass too, whose hooks otherwise see no /proc.
  # shellcheck disable=SC2030,SC2031 # each test is its own subshell: meant to stay in it
  export FORGE_PROC_ROOT=/proc
  bin=$BATS_TEST_TMPDIR/spy-bin
  mkdir -p "$bin"
  for tool in mv cat head ln cp mkdir rm flock timeout; do
    real=$(hook_tool "$tool") || continue   # a Mac has no flock or timeout
    printf '#!/bin/sh\necho "%s $*" >>"%s/started"\nexec %s "$@"\n' "$tool" "$BATS_TEST_TMPDIR" "$real" >"$bin/$tool"
    chmod +x "$bin/$tool"
  done
  stop # the first run makes the state dir (its .gitignore is moved into place once)
  assert_promise
  : >"$BATS_TEST_TMPDIR/started"
  PATH=$bin:$PATH stop
  assert_promise
  cat "$BATS_TEST_TMPDIR/started"
  [ "$(sidecar_count)" -eq 2 ]
  [ "$(jget "$(last_sidecar)" schema)" = '"reflection.v1"' ]
  [ "$(grep -c 'reflection\.json' "$BATS_TEST_TMPDIR/started")" -eq 0 ]
  [ "$(grep -cE '^(cat|head|ln|cp) ' "$BATS_TEST_TMPDIR/started")" -eq 0 ]
  # The run's temp files are plain names in the state dir (no folder to make) and the helper removes
  # what it read once the sidecar stands (nothing left for an rm). With /proc the session lock is an
  # owner file the helper lets go, and git's time limit is bash's own (bash >= 5.1): no flock, no
  # rm, no timeout. (Without /proc see the lock tests above.)
  [ -r "/proc/$$/stat" ]
  [ "$(grep -cE '^(mkdir|rm|flock) ' "$BATS_TEST_TMPDIR/started")" -eq 0 ]
  if hook_bash_at_least 5 1; then
    [ "$(grep -c '^timeout ' "$BATS_TEST_TMPDIR/started")" -eq 0 ]
  fi
  # No mv at all: the helper moves the Stop event into the spool, and spools reflection.written.
  [ "$(grep -c '^mv ' "$BATS_TEST_TMPDIR/started")" -eq 0 ]
  [ "$(stop_events | wc -l)" -eq 2 ]
  [ -z "$(find "$REPO/.forge" -name '.tmp-*')" ]
}

@test "the helper never replaces a taken name: a file or a planted link there stays, the sidecar stays at its temp name" {
  helper=$KIT_ROOT/hooks/lib/reflect-helper.cjs
  work=$BATS_TEST_TMPDIR/work
  mkdir -p "$work"
  printf '{"v":1}\n{"session_id":"s1","last_assistant_message":"done"}' >"$work/payload"
  printf 'theirs\n' >"$work/taken"
  ln -s "$work/elsewhere" "$work/planted"
  for final in "$work/taken" "$work/planted"; do
    rm -f "$work/out.json"
    status=$(facts FORGE_H_OUT="$work/out.json" FORGE_H_FINAL="$final" FORGE_H_GIT_OK=0 FORGE_H_PAYLOAD="$work/payload" FORGE_H_MODE=solo FORGE_H_ATTEMPT=1 | node "$helper")
    [ "$status" = "absent none" ]
    [ -s "$work/out.json" ]
  done
  [ "$(cat "$work/taken")" = theirs ]
  [ "$(readlink "$work/planted")" = "$work/elsewhere" ]
  [ ! -e "$work/elsewhere" ]
  facts FORGE_H_OUT="$work/new.tmp" FORGE_H_FINAL="$work/new.json" FORGE_H_GIT_OK=0 FORGE_H_PAYLOAD="$work/payload" FORGE_H_MODE=solo FORGE_H_ATTEMPT=1 | node "$helper" >/dev/null
  [ ! -e "$work/new.tmp" ]
  [ "$(jget "$work/new.json" schema)" = '"reflection.v1"' ]
}

@test "a self-report left in a killed run's temp folder (the layout of older versions) is given back and merged" {
  mkdir -p "$REPO/.forge/.tmp-stop-999999-7"
  echo '{"confidence":0.4,"most_likely_wrong":{"surface":"test","description":"old layout"},"known_not_in_diff":null}' >"$REPO/.forge/.tmp-stop-999999-7/input.json"
  printf 'x' >"$REPO/.forge/.tmp-stop-999999-7.status"
  stop
  assert_promise
  [ "$(jget "$(last_sidecar)" confidence)" = 0.4 ]
  [ -z "$(find "$REPO/.forge" -name '.tmp-*')" ]
}

@test "the bash fallback fails closed when the changed-file list is gone (a helper stopped after removing its inputs)" {
  echo x >"$REPO/new.md"
  fake=$BATS_TEST_TMPDIR/eraser
  mkdir -p "$fake"
  # A helper that removes what it was given (the facts on its stdin name it) and dies before writing anything.
  # shellcheck disable=SC2016 # expanded by the fake node, not here
  printf '%s\nsed -z "/^FORGE_H_END=1\\$/q" | tr "\\000" "\\n" | sed -n "s/^FORGE_H_\\(STATUS\\|PAYLOAD\\)=//p" | while IFS= read -r f; do rm -f "$f"; done\nexit 1\n' "$FAKE_SH" >"$fake/node" && chmod +x "$fake/node"
  PATH="$fake:$PATH" stop
  assert_promise
  file=$(last_sidecar)
  [ "$(jget "$file" risk.needs_review)" = true ]
  [[ "$(jget "$file" risk.reason)" == *"gone before the bash fallback could read it"* ]]
  [ "$(jget "$file" provenance.degraded)" = true ]
  [ -z "$(find "$REPO/.forge" -name '.tmp-*')" ]
}

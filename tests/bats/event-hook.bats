#!/usr/bin/env bats
# reflect-event-hook.sh: one spool file per event, exactly the payload, never node, and the promise
# (exit 0, empty stdout) under every input.

load ../helpers/common
load ../helpers/hooks

setup() {
  REPO="$BATS_TEST_TMPDIR/repo"
  make_repo "$REPO"
  export REFLECTION_MODE=solo
  unset FORGE_DIR REFLECTION_DIR
}

spool_files() {
  find "${1:-$REPO/.forge/spool}" -maxdepth 1 -name '*.event' 2>/dev/null | LC_ALL=C sort
}

envelope() {
  head -n 1 "$1" >"$BATS_TEST_TMPDIR/envelope.json"
  jget "$BATS_TEST_TMPDIR/envelope.json" "$2"
}

@test "mode unset, off or unknown: nothing is written for any payload" {
  for mode in '' off nope; do
    for payload in "$PAYLOADS"/*.json "$PAYLOADS"/other-runtimes/*.json; do
      REFLECTION_MODE=$mode hook_run "$REPO" bash "$EVENT_HOOK" PostToolUse <"$payload"
      assert_promise
    done
  done
  [ ! -e "$REPO/.forge" ]
}

@test "every reference payload, Claude Code's and other runtimes', is spooled byte for byte" {
  count=0
  for payload in "$PAYLOADS"/*.json "$PAYLOADS"/other-runtimes/*.json; do
    hook_run "$REPO" bash "$EVENT_HOOK" PostToolUse <"$payload"
    assert_promise
    count=$((count + 1))
    newest=$(spool_files | tail -n 1)
    tail -n +2 "$newest" | cmp - "$payload"
    [ "$(envelope "$newest" event)" = '"PostToolUse"' ]
    [ "$(envelope "$newest" source)" = '"event-hook"' ]
    [ "$(envelope "$newest" cwd)" = "\"$REPO\"" ]
  done
  [ "$(spool_files | wc -l)" -eq "$count" ]
  [[ "$(basename "$(spool_files | head -n 1)")" =~ ^[0-9]{16}-[0-9]+-[0-9a-f]{8}\.event$ ]]
}

@test "no node on the per-event path: it works with node absent from PATH" {
  nonode=$(path_without_node)
  PATH=$nonode hook_run "$REPO" "$nonode/bash" "$EVENT_HOOK" PostToolUse <"$PAYLOADS/post-tool-use-bash.json"
  assert_promise
  [ "$(spool_files | wc -l)" -eq 1 ]
  [ -z "$(grep -hE '^[^#]*\bnode\b' "$EVENT_HOOK" "$KIT_ROOT/hooks/lib/common.sh" || true)" ]
}

@test "a 10 MB payload is cut at the cap plus one byte (the drain's truncation mark), quickly" {
  start=$SECONDS
  head -c 10485760 /dev/zero | tr '\0' 'x' | hook_run "$REPO" bash "$EVENT_HOOK" PostToolUse
  assert_promise
  [ $((SECONDS - start)) -lt 5 ]
  file=$(spool_files)
  [ "$(tail -n +2 "$file" | wc -c)" -eq 1048577 ]
  [ "$(envelope "$file" cap)" = 1048576 ]
}

@test "payloads around the 4 KiB read-builtin chunk are spooled byte for byte, with or without a final newline" {
  for size in 1 4095 4096 4097 8192 70000; do
    for tail in '' $'\n'; do
      { head -c "$size" /dev/zero | tr '\0' 'y'; printf '%s' "$tail"; } >"$BATS_TEST_TMPDIR/payload"
      hook_run "$REPO" bash "$EVENT_HOOK" PostToolUse <"$BATS_TEST_TMPDIR/payload"
      assert_promise
      tail -n +2 "$(spool_files | tail -n 1)" | cmp - "$BATS_TEST_TMPDIR/payload"
    done
  done
  [ "$(spool_files | wc -l)" -eq 12 ]
}

@test "the cap is exact on both sides of the chunk: cap+1 bytes kept, whether the cap is under or over 4 KiB" {
  for cap in 10 4095 4096 5000; do
    rm -rf "$REPO/.forge"
    head -c 20000 /dev/zero | tr '\0' 'z' | FORGE_PAYLOAD_CAP=$cap hook_run "$REPO" bash "$EVENT_HOOK" PostToolUse
    assert_promise
    [ "$(tail -n +2 "$(spool_files)" | wc -c)" -eq $((cap + 1)) ]
  done
}

@test "a payload of up to 4 KiB starts no process at all (no mv, cat, head or timeout); a longer one does, and loses nothing" {
  hook_run "$REPO" bash "$EVENT_HOOK" Notification <"$PAYLOADS/notification.json" # the state dir made
  bin=$BATS_TEST_TMPDIR/spy-bin
  mkdir -p "$bin"
  for tool in cat head timeout mv mkdir rm; do
    printf '#!/bin/sh\necho %s >>"%s/started"\nexec %s "$@"\n' "$tool" "$BATS_TEST_TMPDIR" "$(command -v "$tool")" >"$bin/$tool"
    chmod +x "$bin/$tool"
  done
  PATH=$bin:$PATH hook_run "$REPO" bash "$EVENT_HOOK" PostToolUse <"$PAYLOADS/post-tool-use-edit.json"
  assert_promise
  [ ! -e "$BATS_TEST_TMPDIR/started" ]
  head -c 9000 /dev/zero | tr '\0' 'w' >"$BATS_TEST_TMPDIR/long"
  PATH=$bin:$PATH hook_run "$REPO" bash "$EVENT_HOOK" PostToolUse <"$BATS_TEST_TMPDIR/long"
  assert_promise
  grep -qx cat "$BATS_TEST_TMPDIR/started"
  grep -qx mv "$BATS_TEST_TMPDIR/started"
  tail -n +2 "$(spool_files | tail -n 1)" | cmp - "$BATS_TEST_TMPDIR/long"
}

@test "a NUL byte (never in JSON) is the one byte the first chunk drops; nothing after it is lost" {
  { printf '{"a":"x'; printf '\0'; printf 'y"}'; head -c 6000 /dev/zero | tr '\0' ' '; } | hook_run "$REPO" bash "$EVENT_HOOK" PostToolUse
  assert_promise
  { printf '{"a":"xy"}'; head -c 6000 /dev/zero | tr '\0' ' '; } | cmp - <(tail -n +2 "$(spool_files)")
}

@test "empty and non-JSON stdin are spooled as they came, for the drain to judge" {
  : | hook_run "$REPO" bash "$EVENT_HOOK" Notification
  assert_promise
  printf '\xff\xfe garbage {' | hook_run "$REPO" bash "$EVENT_HOOK" Notification
  assert_promise
  [ "$(spool_files | wc -l)" -eq 2 ]
  [ "$(tail -n +2 "$(spool_files | head -n 1)" | wc -c)" -eq 0 ]
}

@test "a hostile event name or cwd cannot break the envelope" {
  # shellcheck disable=SC2016 # a literal $(...) is the hostile input
  for name in '../../x' '$(touch pwned)' "a\"b" "$(printf 'x%.0s' {1..100})"; do
    hook_run "$REPO" bash "$EVENT_HOOK" "$name" <"$PAYLOADS/notification.json"
    assert_promise
  done
  weird="$BATS_TEST_TMPDIR/we\"ird dir"$'\n'"line"
  mkdir -p "$weird"
  hook_run "$weird" bash "$EVENT_HOOK" PostToolUse <"$PAYLOADS/notification.json"
  assert_promise
  for file in $(spool_files); do
    [ "$(envelope "$file" event)" = '""' ]
  done
  [ ! -e "$REPO/pwned" ]
  file=$(spool_files "$weird/.forge/spool")
  [ "$(envelope "$file" cwd)" = "$(node -e 'console.log(JSON.stringify(process.argv[1]))' "$weird")" ]
}

@test "SessionStart records the base commit, start time and snapshot once; resume keeps them; no id records nothing" {
  hook_run "$REPO" bash "$EVENT_HOOK" SessionStart <"$PAYLOADS/session-start.json"
  assert_promise
  base_file="$REPO/.forge/sessions/7f3c2a9e-4b1d-4e8a-9c6f-2d5e8b1a0c34.base"
  [ "$(head -n 1 "$base_file")" = "$(git -C "$REPO" rev-parse HEAD)" ]
  [[ "$(sed -n 2p "$base_file")" =~ ^[0-9]{16}$ ]]
  [ -f "${base_file%.base}.index" ]
  echo more >>"$REPO/README.md" && git -C "$REPO" commit -qam two
  hook_run "$REPO" bash "$EVENT_HOOK" SessionStart <"$PAYLOADS/session-start.json"
  [ "$(head -n 1 "$base_file")" = "$(git -C "$REPO" rev-parse HEAD~1)" ]
  printf '{"hook_event_name":"SessionStart"}' | hook_run "$REPO" bash "$EVENT_HOOK" SessionStart
  [ "$(find "$REPO/.forge/sessions" -type f | wc -l)" -eq 2 ]
  # The user's index is untouched by the snapshot.
  [ -z "$(git -C "$REPO" diff --cached --name-only)" ]
  plain="$BATS_TEST_TMPDIR/plain"
  mkdir -p "$plain"
  hook_run "$plain" bash "$EVENT_HOOK" SessionStart <"$PAYLOADS/session-start.json"
  assert_promise
  # Outside a repo: the start time only (no base, no snapshot).
  [ -z "$(head -n 1 "$plain/.forge/sessions/7f3c2a9e-4b1d-4e8a-9c6f-2d5e8b1a0c34.base")" ]
  [ ! -e "$plain/.forge/sessions/7f3c2a9e-4b1d-4e8a-9c6f-2d5e8b1a0c34.index" ]
  [ "$(spool_files "$plain/.forge/spool" | wc -l)" -eq 1 ]
}

@test "outside a repo the state is <cwd>/.forge; FORGE_DIR moves it; a symlinked state dir is refused" {
  plain="$BATS_TEST_TMPDIR/plain"
  mkdir -p "$plain"
  hook_run "$plain" bash "$EVENT_HOOK" PostToolUse <"$PAYLOADS/post-tool-use-bash.json"
  [ "$(spool_files "$plain/.forge/spool" | wc -l)" -eq 1 ]
  FORGE_DIR="$BATS_TEST_TMPDIR/elsewhere" hook_run "$REPO" bash "$EVENT_HOOK" PostToolUse <"$PAYLOADS/post-tool-use-bash.json"
  [ "$(spool_files "$BATS_TEST_TMPDIR/elsewhere/spool" | wc -l)" -eq 1 ]
  mkdir -p "$BATS_TEST_TMPDIR/target"
  ln -s "$BATS_TEST_TMPDIR/target" "$BATS_TEST_TMPDIR/link"
  FORGE_DIR="$BATS_TEST_TMPDIR/link" hook_run "$REPO" bash "$EVENT_HOOK" PostToolUse <"$PAYLOADS/post-tool-use-bash.json"
  assert_promise
  [ -z "$(ls -A "$BATS_TEST_TMPDIR/target")" ]
}

@test "spool files are 0600 in a 0700 folder, and a writer killed while it reads leaves nothing behind" {
  hook_run "$REPO" bash "$EVENT_HOOK" PostToolUse <"$PAYLOADS/post-tool-use-bash.json"
  [ "$(stat -c %a "$REPO/.forge/spool")" = 700 ]
  [ "$(stat -c %a "$(spool_files)")" = 600 ]
  # Half a payload, then a writer that stalls: the hook waits in its read (up to 4 s), and writes
  # nothing before the read ends, so a SIGKILL then leaves neither an .event nor a temp file.
  (cd "$REPO" && { printf '{"session_id":"s",'; sleep 30; } | exec bash "$EVENT_HOOK" PostToolUse >/dev/null 2>&1) &
  victim=$!
  sleep 0.5
  pkill -9 -P "$victim" || true
  kill -9 "$victim" 2>/dev/null || true
  wait "$victim" 2>/dev/null || true
  [ "$(spool_files | wc -l)" -eq 1 ]
  [ -z "$(find "$REPO/.forge/spool" -name '.tmp-*')" ]
  hook_run "$REPO" bash "$EVENT_HOOK" PostToolUse <"$PAYLOADS/post-tool-use-bash.json"
  assert_promise
  [ "$(spool_files | wc -l)" -eq 2 ]
}

@test "8 hooks at once x 200 events: 1,600 distinct, complete spool files" {
  for worker in 1 2 3 4 5 6 7 8; do
    (
      for _ in $(seq 200); do
        (cd "$REPO" && bash "$EVENT_HOOK" PostToolUse <"$PAYLOADS/post-tool-use-edit.json" >>"$BATS_TEST_TMPDIR/stdout.$worker")
      done
    ) &
  done
  wait
  [ "$(spool_files | wc -l)" -eq 1600 ]
  [ "$(cat "$BATS_TEST_TMPDIR"/stdout.* | wc -c)" -eq 0 ]
  [ -z "$(find "$REPO/.forge/spool" -name '.tmp-*')" ]
  size=$(wc -c <"$PAYLOADS/post-tool-use-edit.json")
  for file in $(spool_files); do
    [ "$(tail -n +2 "$file" | wc -c)" -eq "$size" ]
  done
  cd "$REPO" || return 1
  forge_reflect ingest >/dev/null
  [ "$(spool_files | wc -l)" -eq 0 ]
  forge_reflect ingest >/dev/null
  rows=$(node -e 'const D=require(process.argv[1]); const db=new D(process.argv[2],{readonly:true}); const r=db.prepare("SELECT COUNT(*) AS n, COUNT(DISTINCT id) AS d FROM events").get(); console.log(r.n+" "+r.d)' \
    "$KIT_ROOT/node_modules/better-sqlite3" "$REPO/.forge/events.db")
  [ "$rows" = "1600 1600" ]
}

@test "a stdin that never closes: the hook still returns inside the 10 s registration, and keeps what it read" {
  start=$SECONDS
  hook_run "$REPO" bash "$EVENT_HOOK" PostToolUse < <(while :; do printf '{"session_id":"s1"}\n'; sleep 0.3; done)
  assert_promise
  [ $((SECONDS - start)) -lt 9 ]
  file=$(spool_files)
  [ -n "$file" ]
  [ "$(tail -n +2 "$file" | wc -c)" -gt 0 ]
}

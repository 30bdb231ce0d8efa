#!/usr/bin/env bats
# reflect-event-hook.sh: each event spooled exactly once with exactly its payload, as a record of
# spool/events.log (a small payload) or a spool file of its own (any other), never node, and the
# promise (exit 0, empty stdout) under every input. The hooks' bash decides some of it (HOOK_CLOCK,
# tests/helpers/hooks.bash): without a clock (bash 3.2, the stock-Mac pass) every event is a file
# of its own named with 16 zeros and "clock":"file", and the drain dates it by its time of writing.

load ../helpers/common
load ../helpers/hooks

setup() {
  REPO="$BATS_TEST_TMPDIR/repo"
  make_repo "$REPO"
  export REFLECTION_MODE=solo
  unset FORGE_DIR REFLECTION_DIR
}

teardown() {
  spool_records_ok
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
    assert_spool_name "$newest"
    [ "$(envelope "$newest" event)" = '"PostToolUse"' ]
    [ "$(envelope "$newest" source)" = '"event-hook"' ]
    [ "$(envelope "$newest" cwd)" = "\"$REPO\"" ]
  done
  [ "$(spool_files | wc -l)" -eq "$count" ]
  [[ "$(basename "$(spool_files | head -n 1)")" =~ ^[0-9]{16}-[0-9]+-[0-9a-f]{8}\.event$ ]]
  if [[ -z $HOOK_CLOCK ]]; then
    # Without a clock not one is a record: every event a file of its own.
    [ ! -e "$REPO/.forge/spool/events.log" ]
    [ "$(find "$REPO/.forge/spool" -mindepth 1 -maxdepth 1 -name '*.event' | wc -l)" -eq "$count" ]
  fi
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
  hook_run "$REPO" bash "$EVENT_HOOK" PostToolUse < <(head -c 10485760 /dev/zero | tr '\0' 'x')
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
    FORGE_PAYLOAD_CAP=$cap hook_run "$REPO" bash "$EVENT_HOOK" PostToolUse < <(head -c 20000 /dev/zero | tr '\0' 'z')
    assert_promise
    [ "$(tail -n +2 "$(spool_files)" | wc -c)" -eq $((cap + 1)) ]
  done
}

@test "a payload of up to 4 KiB starts no process at all (no mv, cat, head or timeout), as a file or a record; a longer one does, and loses nothing" {
  # own: the files of their own the spool holds once each small event is in (a record with a clock,
  # a file of its own without one).
  own=2
  # A payload the log does not take (it holds a \x1e): a file of its own.
  printf '{"session_id":"s1","x":"\036"}' >"$BATS_TEST_TMPDIR/own-file"
  hook_run "$REPO" bash "$EVENT_HOOK" Notification <"$BATS_TEST_TMPDIR/own-file" # the state dir made
  bin=$BATS_TEST_TMPDIR/spy-bin
  mkdir -p "$bin"
  for tool in cat head timeout mv mkdir rm touch dd tee; do
    real=$(hook_tool "$tool") || continue   # a Mac has no timeout
    printf '#!/bin/sh\necho %s >>"%s/started"\nexec %s "$@"\n' "$tool" "$BATS_TEST_TMPDIR" "$real" >"$bin/$tool"
    chmod +x "$bin/$tool"
  done
  PATH=$bin:$PATH hook_run "$REPO" bash "$EVENT_HOOK" PostToolUse <"$BATS_TEST_TMPDIR/own-file"
  assert_promise
  [ ! -e "$BATS_TEST_TMPDIR/started" ]
  [ "$(find "$REPO/.forge/spool" -name '*.event' | wc -l)" -eq 2 ]
  # A single-line payload: a record of the spool log (the log made by this very event), no process;
  # without a clock a file of its own, written at once under its final name: no process either.
  [ ! -e "$REPO/.forge/spool/events.log" ]
  printf '{"session_id":"s1","hook_event_name":"PostToolUse","tool_name":"Bash"}' >"$BATS_TEST_TMPDIR/one-line"
  PATH=$bin:$PATH hook_run "$REPO" bash "$EVENT_HOOK" PostToolUse <"$BATS_TEST_TMPDIR/one-line"
  assert_promise
  [ ! -e "$BATS_TEST_TMPDIR/started" ]
  if [[ -n $HOOK_CLOCK ]]; then
    [ -s "$REPO/.forge/spool/events.log" ]
  else
    own=3
    [ ! -e "$REPO/.forge/spool/events.log" ]
  fi
  [ "$(find "$REPO/.forge/spool" -name '*.event' | wc -l)" -eq "$own" ]
  assert_spool_name "$(spool_files | tail -n 1)"
  # PAYLOAD spooled as the COUNT-th event, a record of a log already there (a file of its own
  # without a clock): no process.
  spied_record() {
    PATH=$bin:$PATH hook_run "$REPO" bash "$EVENT_HOOK" PostToolUse <"$1"
    assert_promise
    [ ! -e "$BATS_TEST_TMPDIR/started" ]
    [[ -n $HOOK_CLOCK ]] || own=$2
    [ "$(find "$REPO/.forge/spool" -name '*.event' | wc -l)" -eq "$own" ]
    [ "$(spool_files | wc -l)" -eq "$2" ]
    tail -n +2 "$(spool_files | tail -n 1)" | cmp - "$1"
    assert_spool_name "$(spool_files | tail -n 1)"
  }
  spied_record "$BATS_TEST_TMPDIR/one-line" 4
  spied_record "$PRETTY_PAYLOAD" 5   # pretty-printed: a record too
  head -c 9000 /dev/zero | tr '\0' 'w' >"$BATS_TEST_TMPDIR/long"
  PATH=$bin:$PATH hook_run "$REPO" bash "$EVENT_HOOK" PostToolUse <"$BATS_TEST_TMPDIR/long"
  assert_promise
  grep -qx cat "$BATS_TEST_TMPDIR/started"
  grep -qx mv "$BATS_TEST_TMPDIR/started"
  tail -n +2 "$(spool_files | tail -n 1)" | cmp - "$BATS_TEST_TMPDIR/long"
}

@test "a NUL byte (never in JSON) is the one byte the first chunk drops; nothing after it is lost" {
  hook_run "$REPO" bash "$EVENT_HOOK" PostToolUse < <(printf '{"a":"x'; printf '\0'; printf 'y"}'; head -c 6000 /dev/zero | tr '\0' ' ')
  assert_promise
  { printf '{"a":"xy"}'; head -c 6000 /dev/zero | tr '\0' ' '; } | cmp - <(tail -n +2 "$(spool_files)")
}

@test "empty and non-JSON stdin are spooled as they came, for the drain to judge" {
  hook_run "$REPO" bash "$EVENT_HOOK" Notification < <(:)
  assert_promise
  hook_run "$REPO" bash "$EVENT_HOOK" Notification < <(printf '\xff\xfe garbage {')
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
  weird="$BATS_TEST_TMPDIR/we\"ird dir"$'\n'"line"$'\x1e\x1f'
  mkdir -p "$weird"
  hook_run "$weird" bash "$EVENT_HOOK" PostToolUse < <(printf '{"session_id":"s1","x":"\036"}')   # a file of its own
  assert_promise
  # and as a record of the spool log, whose framing bytes (\x1e, \x1f, \n) the cwd also holds
  # (without a clock: a file of its own too)
  hook_run "$weird" bash "$EVENT_HOOK" PostToolUse < <(printf '{"session_id":"s1"}')
  assert_promise
  for file in $(spool_files); do
    [ "$(envelope "$file" event)" = '""' ]
  done
  [ ! -e "$REPO/pwned" ]
  if [[ -n $HOOK_CLOCK ]]; then
    [ -s "$weird/.forge/spool/events.log" ]
    own=1
  else
    [ ! -e "$weird/.forge/spool/events.log" ]
    own=2
  fi
  [ "$(spool_files "$weird/.forge/spool" | grep -c '\.event$')" -eq 2 ]
  spool_files "$weird/.forge/spool" >/dev/null   # the records extracted (a failure fails the test here)
  key=$(printf '%s' "$weird/.forge/spool" | cksum)   # where spool_files put them (tests/helpers/hooks.bash)
  files=()
  while IFS= read -r -d '' file; do files+=("$file"); done < <(find "$weird/.forge/spool" -maxdepth 1 -name '*.event' -print0)
  [ "${#files[@]}" -eq "$own" ]
  while IFS= read -r -d '' file; do files+=("$file"); done < <(find "$BATS_TEST_TMPDIR/records/${key%% *}" -name '*.event' -print0)
  [ "${#files[@]}" -eq 2 ]
  for file in "${files[@]}"; do
    [ -f "$file" ]
    assert_spool_name "$file"
    [ "$(envelope "$file" cwd)" = "$(node -e 'console.log(JSON.stringify(process.argv[1]))' "$weird")" ]
  done
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
  hook_run "$REPO" bash "$EVENT_HOOK" SessionStart < <(printf '{"hook_event_name":"SessionStart"}')
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

@test "spool files and the spool log are 0600 in a 0700 folder, and a writer killed while it reads leaves nothing behind" {
  hook_run "$REPO" bash "$EVENT_HOOK" PostToolUse <"$PAYLOADS/post-tool-use-bash.json"
  [ "$(stat -c %a "$REPO/.forge/spool")" = 700 ]
  [ "$(stat -c %a "$(spool_files)")" = 600 ]
  # The log, made by a hook whose caller's umask lets anyone read: still 0600, and the spool 0700.
  # (Without a clock the event is a file of its own, written straight under its final name: 0600.)
  rm -rf "$REPO/.forge"
  mask=$(umask)
  umask 000
  hook_run "$REPO" bash "$EVENT_HOOK" PostToolUse < <(printf '{"session_id":"s1","tool_name":"Bash"}')
  umask "$mask"
  assert_promise
  [ "$(stat -c %a "$REPO/.forge/spool")" = 700 ]
  assert_spooled_small 1
  if [[ -n $HOOK_CLOCK ]]; then
    [ "$(stat -c %a "$REPO/.forge/spool/events.log")" = 600 ]
    # Sealed by a drain into a segment: still 0600.
    (cd "$REPO" && forge_reflect ingest >/dev/null)
    seg=$(find "$REPO/.forge/spool" -maxdepth 1 -name '*.seg')
    [ -n "$seg" ]
    [ "$(stat -c %a "$seg")" = 600 ]
  else
    [ "$(stat -c %a "$(spool_files)")" = 600 ]
    # Drained: logged under its time of writing; no segment, nothing left.
    want=$(spool_ids "$(spool_files)")
    (cd "$REPO" && forge_reflect ingest >/dev/null && forge_reflect events --json >"$BATS_TEST_TMPDIR/events.json")
    [ -z "$(find "$REPO/.forge/spool" -maxdepth 1 \( -name '*.seg' -o -name '*.event' -o -name events.log \))" ]
    [ "$(jget "$BATS_TEST_TMPDIR/events.json" 0.id)" = "\"$want\"" ]
    [ "$(jget "$BATS_TEST_TMPDIR/events.json" length)" = 1 ]
  fi
  rm -rf "$REPO/.forge"
  hook_run "$REPO" bash "$EVENT_HOOK" PostToolUse <"$PAYLOADS/post-tool-use-bash.json"
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

@test "8 hooks at once x 200 many-line events (each a record of the log, written in one write): 1,600 distinct, complete records" {
  # (Without a clock each is a file of its own: 1,600 distinct, complete files, each dated by the drain.)
  # Odd workers send the fixture without its final newline: a record written in pieces would then
  # leave in two writes (stdio flushes a piece up to its last newline), which other hooks could split.
  head -c -1 "$PRETTY_PAYLOAD" >"$BATS_TEST_TMPDIR/no-final-newline"
  for worker in 1 2 3 4 5 6 7 8; do
    (
      payload=$PRETTY_PAYLOAD
      ((worker % 2)) && payload=$BATS_TEST_TMPDIR/no-final-newline
      for _ in $(seq 200); do
        (cd "$REPO" && bash "$EVENT_HOOK" PostToolUse <"$payload" >>"$BATS_TEST_TMPDIR/stdout.$worker")
      done
    ) &
  done
  wait
  # Records only, no .event, no temp file; read by the strict reader: each record whole, none torn
  # or interleaved. Without a clock: files of their own only, no log, no temp file.
  assert_spooled_small 1600
  [ "$(spool_files | wc -l)" -eq 1600 ]
  [ "$(cat "$BATS_TEST_TMPDIR"/stdout.* | wc -c)" -eq 0 ]
  [ -z "$(find "$REPO/.forge/spool" -name '.tmp-*')" ]
  size=$(wc -c <"$PRETTY_PAYLOAD")
  for file in $(spool_files); do
    got=$(tail -n +2 "$file" | wc -c)
    [ "$got" -eq "$size" ] || [ "$got" -eq $((size - 1)) ]
  done
  [ "$(for file in $(spool_files); do tail -n +2 "$file" | wc -c; done | sort | uniq -c | awk '{print $1}' | tr '\n' ' ')" = "800 800 " ]
  # The ids the drain is to store: the records' own, or each file's name dated by its time of writing.
  # shellcheck disable=SC2046 # the paths hold no space
  spool_ids $(spool_files) | sort >"$BATS_TEST_TMPDIR/want-ids"
  [ "$(sort -u "$BATS_TEST_TMPDIR/want-ids" | wc -l)" -eq 1600 ]
  cd "$REPO" || return 1
  forge_reflect ingest >/dev/null
  # Drained: no spool file and no live log (the sealed segment stays a minute, read to its end).
  drained_removed   # (files of their own: removed once the drain returned)
  [ -z "$(find "$REPO/.forge/spool" -maxdepth 1 \( -name '*.event' -o -name events.log \))" ]
  if [[ -z $HOOK_CLOCK ]]; then
    [ -z "$(find "$REPO/.forge/spool" -maxdepth 1 -name '*.seg')" ]   # no log, so no segment
  fi
  forge_reflect ingest >/dev/null
  rows=$(node -e 'const D=require(process.argv[1]); const db=new D(process.argv[2],{readonly:true}); const r=db.prepare("SELECT COUNT(*) AS n, COUNT(DISTINCT id) AS d FROM events").get(); console.log(r.n+" "+r.d)' \
    "$KIT_ROOT/node_modules/better-sqlite3" "$REPO/.forge/events.db")
  [ "$rows" = "1600 1600" ]
  node -e 'const D=require(process.argv[1]); const db=new D(process.argv[2],{readonly:true}); for (const r of db.prepare("SELECT id FROM events ORDER BY id").all()) console.log(r.id)' \
    "$KIT_ROOT/node_modules/better-sqlite3" "$REPO/.forge/events.db" | sort | cmp - "$BATS_TEST_TMPDIR/want-ids"
}

@test "a stdin that never closes: the hook still returns inside the 10 s registration, and keeps what it read (bash 3.2: nothing, an empty event the drain rejects)" {
  start=$SECONDS
  hook_run "$REPO" bash "$EVENT_HOOK" PostToolUse < <(while :; do printf '{"session_id":"s1"}\n'; sleep 0.3; done)
  assert_promise
  [ $((SECONDS - start)) -lt 9 ]
  file=$(spool_files)
  [ -n "$file" ]
  [ "$(spool_files | wc -l)" -eq 1 ]
  assert_spool_name "$file"
  if [[ -n $HOOK_CLOCK ]]; then
    [ "$(tail -n +2 "$file" | wc -c)" -gt 0 ]
  else
    # bash 3.2's `read -t` keeps nothing when its time runs out: the event's payload is empty, and
    # the drain rejects it with its reason (nothing kept in part).
    [ "$(tail -n +2 "$file" | wc -c)" -eq 0 ]
    [ -z "$(find "$REPO/.forge/spool" -mindepth 1 ! -name "${file##*/}")" ]   # no temp file, no log
    (cd "$REPO" && forge_reflect ingest --json >"$BATS_TEST_TMPDIR/ingest.json")
    [ "$(jget "$BATS_TEST_TMPDIR/ingest.json" drained)" = 0 ]
    [ "$(jget "$BATS_TEST_TMPDIR/ingest.json" rejected)" = 1 ]
    name=${file##*/}
    [ -f "$REPO/.forge/spool/rejected/$name" ]
    grep -q 'payload is empty and not marked truncated' "$REPO/.forge/spool/rejected/${name%.event}.reason"
  fi
}

@test "a single-line payload, with or without its final newline, is one record of spool/events.log: byte for byte, no file of its own (no clock: one file, no log)" {
  for tail in '' $'\n'; do
    rm -rf "$REPO/.forge" "$BATS_TEST_TMPDIR/rec"
    printf '{"session_id":"s1","hook_event_name":"PostToolUse","tool_name":"Bash"}%s' "$tail" >"$BATS_TEST_TMPDIR/payload"
    hook_run "$REPO" bash "$EVENT_HOOK" PostToolUse <"$BATS_TEST_TMPDIR/payload"
    assert_promise
    if [[ -z $HOOK_CLOCK ]]; then
      # Without a clock: a file of its own and no log, written at once under its final name: the
      # envelope (16 zeros for the time, "clock":"file", the payload's length), then the payload.
      assert_spooled_small 1
      [ ! -e "$REPO/.forge/spool/events.log" ]
      file=$(spool_files)
      [[ ${file##*/} =~ ^0{16}-([0-9]+)-[0-9a-f]{8}\.event$ ]]
      cwd=$(node -e 'console.log(JSON.stringify(process.argv[1]))' "$REPO")
      { printf '{"v":1,"source":"event-hook","event":"PostToolUse","runtime":"","received_us":0,"pid":%s,"cwd":%s,"cap":1048576,"clock":"file","bytes":%s}\n' \
          "${BASH_REMATCH[1]}" "$cwd" "$(wc -c <"$BATS_TEST_TMPDIR/payload")"; cat "$BATS_TEST_TMPDIR/payload"; } | cmp - "$file"
      continue
    fi
    log=$REPO/.forge/spool/events.log
    [ -f "$log" ]
    [ ! -L "$log" ]
    [ -z "$(find "$REPO/.forge/spool" -mindepth 1 ! -name events.log)" ]   # no .event, no temp file
    run node "$SPOOL_RECORDS" scan "$BATS_TEST_TMPDIR/rec" "$log"
    [ "$status" -eq 0 ]
    [[ $output =~ ^whole\ 0\ ([0-9]{16}-[0-9]+-[0-9a-f]{8})$ ]]
    id=${BASH_REMATCH[1]}
    rec=$BATS_TEST_TMPDIR/rec/$id.event
    tail -n +2 "$rec" | cmp - "$BATS_TEST_TMPDIR/payload"
    [ "$(envelope "$rec" bytes)" -eq "$(wc -c <"$BATS_TEST_TMPDIR/payload")" ]
    [ "$(envelope "$rec" id)" = "\"$id\"" ]
    [ "$(envelope "$rec" event)" = '"PostToolUse"' ]
    [ "$(envelope "$rec" source)" = '"event-hook"' ]
    [ "$(envelope "$rec" cwd)" = "\"$REPO\"" ]
    # The log's bytes, read without the extractor: \x1e, the envelope, \x1f, the payload, and then a
    # newline only when the payload has none of its own: one newline in all, the last byte.
    { printf '\036%s\037' "$(head -n 1 "$rec")"; cat "$BATS_TEST_TMPDIR/payload"; [ -n "$tail" ] || printf '\n'; } | cmp - "$log"
    [ "$(tr -cd '\n' <"$log" | wc -c)" -eq 1 ]
    [ "$(spool_files | wc -l)" -eq 1 ]
  done
}

@test "a payload with newlines inside (pretty-printed JSON) is one record too, byte for byte (no clock: one file)" {
  printf '{"session_id":"s1",\n"tool_name":"Bash"}' >"$BATS_TEST_TMPDIR/inner"
  printf '{"session_id":"s1",\n"tool_name":"Bash"}\n' >"$BATS_TEST_TMPDIR/inner-and-last"
  printf '\n{"session_id":"s1"}' >"$BATS_TEST_TMPDIR/first"
  printf '\n\n\n' >"$BATS_TEST_TMPDIR/only-newlines"
  cp "$PRETTY_PAYLOAD" "$BATS_TEST_TMPDIR/pretty"
  for name in inner inner-and-last first only-newlines pretty; do
    rm -rf "$REPO/.forge" "$BATS_TEST_TMPDIR/rec"
    hook_run "$REPO" bash "$EVENT_HOOK" PostToolUse <"$BATS_TEST_TMPDIR/$name"
    assert_promise
    assert_spooled_small 1   # a record: no .event, no temp file (without a clock: one file, no log)
    if [[ -z $HOOK_CLOCK ]]; then
      file=$(spool_files)
      tail -n +2 "$file" | cmp - "$BATS_TEST_TMPDIR/$name"
      [ "$(envelope "$file" bytes)" -eq "$(wc -c <"$BATS_TEST_TMPDIR/$name")" ]
      continue
    fi
    run node "$SPOOL_RECORDS" scan "$BATS_TEST_TMPDIR/rec" "$REPO/.forge/spool/events.log"
    [ "$status" -eq 0 ]
    [[ $output =~ ^whole\ 0\ ([0-9]{16}-[0-9]+-[0-9a-f]{8})$ ]]
    tail -n +2 "$BATS_TEST_TMPDIR/rec/${BASH_REMATCH[1]}.event" | cmp - "$BATS_TEST_TMPDIR/$name"
  done
}

@test "a payload with a \x1e inside, or whose record would pass the limit (4,000 bytes; 1,000 on a Mac), gets a file of its own, byte for byte" {
  printf '{"session_id":"s1","x":"\036"}' >"$BATS_TEST_TMPDIR/record-start"   # \x1e starts a record: never inside one
  printf '{"session_id":"s1",\n"x":"\036"}\n' >"$BATS_TEST_TMPDIR/record-start-lines"
  { printf '{"x":"'; head -c 3982 /dev/zero | tr '\0' 'y'; printf '"}'; } >"$BATS_TEST_TMPDIR/long"
  [ "$(wc -c <"$BATS_TEST_TMPDIR/long")" -eq 3990 ]
  for name in record-start record-start-lines long; do
    rm -rf "$REPO/.forge"
    hook_run "$REPO" bash "$EVENT_HOOK" PostToolUse <"$BATS_TEST_TMPDIR/$name"
    assert_promise
    [ ! -e "$REPO/.forge/spool/events.log" ]
    [ "$(find "$REPO/.forge/spool" -mindepth 1 | wc -l)" -eq 1 ]
    file=$(find "$REPO/.forge/spool" -maxdepth 1 -name '*.event')
    [[ "${file##*/}" =~ ^[0-9]{16}-[0-9]+-[0-9a-f]{8}\.event$ ]]
    assert_spool_name "$file"
    tail -n +2 "$file" | cmp - "$BATS_TEST_TMPDIR/$name"
    [ "$(envelope "$file" bytes)" -eq "$(wc -c <"$BATS_TEST_TMPDIR/$name")" ]
    [ "$(envelope "$file" id)" = undefined ]   # a file's name is its id
  done
  # Just under the limit it is still a record: the overhead of a record (all but the payload) is
  # measured on a small one, and a payload 8 bytes short of filling the limit with it stays a record.
  # Without a clock there are no records, so no limit: the same two events are files of their own.
  rm -rf "$REPO/.forge"
  hook_run "$REPO" bash "$EVENT_HOOK" PostToolUse < <(printf '{"x":""}')
  assert_promise
  if [[ -n $HOOK_CLOCK ]]; then
    overhead=$(($(wc -c <"$REPO/.forge/spool/events.log") - 8))
    size=$((SPOOL_RECORD_MAX - overhead - 8))
  else
    assert_spooled_small 1
    size=$((SPOOL_RECORD_MAX - 200))   # what a record of this system would hold with a clock
  fi
  { printf '{"x":"'; head -c $((size - 8)) /dev/zero | tr '\0' 'y'; printf '"}'; } >"$BATS_TEST_TMPDIR/near"
  hook_run "$REPO" bash "$EVENT_HOOK" PostToolUse <"$BATS_TEST_TMPDIR/near"
  assert_promise
  assert_spooled_small 2
  [ "$(spool_files | wc -l)" -eq 2 ]
  tail -n +2 "$(spool_files | head -n 1)" | cmp - <(printf '{"x":""}')
  tail -n +2 "$(spool_files | tail -n 1)" | cmp - "$BATS_TEST_TMPDIR/near"
  if [[ -n $HOOK_CLOCK ]]; then
    near=$(($(wc -c <"$REPO/.forge/spool/events.log") - overhead - 8))   # the second record's length
    [ "$near" -gt $((SPOOL_RECORD_MAX - 50)) ]
    [ "$near" -le "$SPOOL_RECORD_MAX" ]
  else
    [ "$(envelope "$(spool_files | tail -n 1)" bytes)" -eq "$(wc -c <"$BATS_TEST_TMPDIR/near")" ]
  fi
}

@test "SessionStart with a single-line payload (a record) records its own session's base, read from memory, not from the log" {
  # Another session's record first: a hook that read the session id from the log would find this one.
  hook_run "$REPO" bash "$EVENT_HOOK" PostToolUse < <(printf '{"session_id":"other-session","hook_event_name":"PostToolUse","tool_name":"Bash"}')
  assert_promise
  printf '{"session_id":"one-line-session","hook_event_name":"SessionStart","source":"startup"}' >"$BATS_TEST_TMPDIR/start"
  hook_run "$REPO" bash "$EVENT_HOOK" SessionStart <"$BATS_TEST_TMPDIR/start"
  assert_promise
  assert_spooled_small 2   # both are records (without a clock: both files of their own)
  [ "$(spool_files | wc -l)" -eq 2 ]
  tail -n +2 "$(spool_files | tail -n 1)" | cmp - "$BATS_TEST_TMPDIR/start"
  base=$REPO/.forge/sessions/one-line-session.base
  [ "$(head -n 1 "$base")" = "$(git -C "$REPO" rev-parse HEAD)" ]
  [[ "$(sed -n 2p "$base")" =~ ^[0-9]{16}$ ]]
  [ -f "${base%.base}.index" ]
  [ ! -e "$REPO/.forge/sessions/other-session.base" ]
  # Without an event argument the payload's hook_event_name names the event, also read from memory.
  printf '{"session_id":"second-session","hook_event_name":"SessionStart"}\n' >"$BATS_TEST_TMPDIR/start2"
  hook_run "$REPO" bash "$EVENT_HOOK" <"$BATS_TEST_TMPDIR/start2"
  assert_promise
  [ "$(head -n 1 "$REPO/.forge/sessions/second-session.base")" = "$(git -C "$REPO" rev-parse HEAD)" ]
  assert_spooled_small 3
  [ "$(spool_files | wc -l)" -eq 3 ]
  [ "$(find "$REPO/.forge/sessions" -name '*.base' | wc -l)" -eq 2 ]
}

@test "8 hooks at once x 200 single-line events: 1,600 whole, distinct, byte-exact records; ingest logs each once" {
  # (Without a clock: 1,600 whole, distinct, byte-exact files of their own, and no log.)
  for worker in 1 2 3 4 5 6 7 8; do
    (
      nl=''
      ((worker % 2)) || nl=$'\n'   # even workers send a final newline, odd ones none
      for seq in $(seq 200); do
        printf '{"session_id":"w%s","hook_event_name":"PostToolUse","tool_name":"Bash","tool_use_id":"t-%s-%s"}%s' "$worker" "$worker" "$seq" "$nl" |
          (cd "$REPO" && bash "$EVENT_HOOK" PostToolUse >>"$BATS_TEST_TMPDIR/stdout.$worker") || echo "exit $?" >>"$BATS_TEST_TMPDIR/failed.$worker"
      done
    ) &
  done
  wait
  [ "$(cat "$BATS_TEST_TMPDIR"/stdout.* | wc -c)" -eq 0 ]
  [ -z "$(find "$BATS_TEST_TMPDIR" -maxdepth 1 -name 'failed.*')" ]
  assert_spooled_small 1600   # no .event, no temp file (without a clock: files of their own only, no log)
  if [[ -n $HOOK_CLOCK ]]; then
    node "$SPOOL_RECORDS" extract "$BATS_TEST_TMPDIR/rec" "$REPO/.forge/spool/events.log"
    events=$BATS_TEST_TMPDIR/rec
  else
    events=$REPO/.forge/spool   # each file shaped as an extracted record: envelope line, payload
  fi
  [ "$(find "$events" -name '*.event' | wc -l)" -eq 1600 ]
  # Every payload exactly as sent, each once, and `bytes` its length.
  # shellcheck disable=SC2016 # JavaScript template literals, not shell
  node -e '
    const fs = require("fs"), path = require("path"), dir = process.argv[1], want = new Set();
    for (let w = 1; w <= 8; w++) for (let s = 1; s <= 200; s++)
      want.add(`{"session_id":"w${w}","hook_event_name":"PostToolUse","tool_name":"Bash","tool_use_id":"t-${w}-${s}"}${w % 2 ? "" : "\n"}`);
    for (const name of fs.readdirSync(dir)) {
      const b = fs.readFileSync(path.join(dir, name)), nl = b.indexOf(10), env = JSON.parse(b.subarray(0, nl));
      const payload = b.subarray(nl + 1).toString("latin1");
      if (!want.delete(payload)) throw new Error(`${name}: a payload not sent, or sent once and found twice: ${JSON.stringify(payload)}`);
      if (env.bytes !== b.length - nl - 1) throw new Error(`${name}: bytes ${env.bytes}, payload ${b.length - nl - 1}`);
    }
    if (want.size !== 0) throw new Error(`${want.size} payloads missing`);' "$events"
  # The ids the drain is to store: the records' own, or each file's name dated by its time of writing.
  spool_ids "$events"/*.event >"$BATS_TEST_TMPDIR/want-ids"
  # The drain (any folder: FORGE_DIR names the state) logs each once, and the next one nothing again.
  cd "$BATS_TEST_TMPDIR"
  FORGE_DIR="$REPO/.forge" forge_reflect ingest --json >ingest.json
  [ "$(jget ingest.json drained)" = 1600 ]
  [ "$(jget ingest.json rejected)" = 0 ]
  [ "$(jget ingest.json in_flight)" = 0 ]
  [ "$(jget ingest.json already_present)" = 0 ]
  [ ! -e "$REPO/.forge/spool/events.log" ]
  if [[ -n $HOOK_CLOCK ]]; then
    [ "$(find "$REPO/.forge/spool" -maxdepth 1 -name '*.seg' | wc -l)" -eq 1 ]
  else
    # No log, no segment, and no file left once the drain's remover is done.
    drained_removed
    [ -z "$(find "$REPO/.forge/spool" -maxdepth 1 \( -name '*.event' -o -name '*.seg' -o -name '.tmp-*' \))" ]
  fi
  FORGE_DIR="$REPO/.forge" forge_reflect ingest --json >ingest2.json
  [ "$(jget ingest2.json drained)" = 0 ]
  [ "$(jget ingest2.json already_present)" = 0 ]
  FORGE_DIR="$REPO/.forge" forge_reflect events --json --limit 2000 >events.json
  # Each row's id the one its event was spooled with (dated by the drain without a clock), and each
  # worker's events in the order it sent them: with a clock at rising microseconds; without one at
  # times that never go back (the file system dates a file by its clock's tick: 4 ms on Linux, so
  # two events a worker sends within one tick share a time, and the pid then orders them).
  # shellcheck disable=SC2016
  node -e '
    const fs = require("fs"), rows = JSON.parse(fs.readFileSync(process.argv[1], "utf8"));
    const ids = new Set(fs.readFileSync(process.argv[2], "utf8").split("\n").filter(Boolean));
    const strict = process.argv[3] === "1";
    if (ids.size !== 1600) throw new Error(`${ids.size} ids spooled`);
    if (rows.length !== 1600) throw new Error(`${rows.length} events`);
    if (new Set(rows.map((r) => r.id)).size !== 1600 || !rows.every((r) => ids.has(r.id))) throw new Error("ids are not the records ids");
    if (new Set(rows.map((r) => r.tool_use_id)).size !== 1600) throw new Error("tool_use_ids not distinct");
    if (!rows.every((r) => r.type === "tool.executed" && r.session_id === r.tool_use_id.replace(/^t-(\d)-\d+$/, "w$1"))) throw new Error("a row that is not its payload");
    const seq = (r) => Number(r.tool_use_id.split("-")[2]);
    for (let w = 1; w <= 8; w++) {
      const mine = rows.filter((r) => r.session_id === `w${w}`).sort((a, b) => seq(a) - seq(b));
      for (let i = 1; i < mine.length; i++) {
        const [a, b] = [mine[i - 1].id.slice(0, 16), mine[i].id.slice(0, 16)];
        if (a === "0000000000000000" || (strict ? b <= a : b < a)) throw new Error(`worker ${w}: ${mine[i - 1].tool_use_id} at ${a}, ${mine[i].tool_use_id} at ${b}`);
      }
    }' events.json "$BATS_TEST_TMPDIR/want-ids" "$HOOK_CLOCK"
}

@test "an event's id carries when it came, rising in the order sent, and the drain stores that id (without a clock: the time its file was written)" {
  # Records and files of their own in turn (a payload longer than a record gets a file); each 10 ms
  # after the last, more than a tick of the clock that dates files (the kernel's: 4 ms on Linux).
  pad=$(head -c "$SPOOL_RECORD_MAX" /dev/zero | tr '\0' p)
  start_us=$(date +%s%6N)
  sleep 0.01
  for i in $(seq 12); do
    if ((i % 2)); then
      printf '{"session_id":"order","tool_name":"Bash","tool_use_id":"t-%02d"}' "$i"
    else
      printf '{"session_id":"order","tool_name":"Bash","tool_use_id":"t-%02d","pad":"%s"}' "$i" "$pad"
    fi >"$BATS_TEST_TMPDIR/payload-$i"
    hook_run "$REPO" bash "$EVENT_HOOK" PostToolUse <"$BATS_TEST_TMPDIR/payload-$i"
    assert_promise
    sleep 0.01
  done
  end_us=$(date +%s%6N)
  if [[ -n $HOOK_CLOCK ]]; then
    [ "$(tr -cd '\036' <"$REPO/.forge/spool/events.log" | wc -c)" -eq 6 ]   # the odd ones: records
    [ "$(find "$REPO/.forge/spool" -maxdepth 1 -name '*.event' | wc -l)" -eq 6 ]
  else
    [ ! -e "$REPO/.forge/spool/events.log" ]
    [ "$(find "$REPO/.forge/spool" -maxdepth 1 -name '*.event' | wc -l)" -eq 12 ]
  fi
  # The spool in the order received is the order sent, each event named as this bash names them.
  mapfile -t files < <(spool_files)
  [ "${#files[@]}" -eq 12 ]
  for i in $(seq 12); do
    assert_spool_name "${files[i - 1]}"
    payload_of "${files[i - 1]}" | cmp - "$BATS_TEST_TMPDIR/payload-$i"
  done
  # The ids the drain is to store: with a clock the names; without, each time of writing in place of
  # the zeros. Either way a real time inside the run, rising in the order sent.
  mapfile -t want < <(spool_ids "${files[@]}")
  last=$start_us
  for i in $(seq 12); do
    id=${want[i - 1]}
    [[ $id =~ ^([0-9]{16})-[0-9]+-[0-9a-f]{8}$ ]]
    time=$((10#${BASH_REMATCH[1]}))
    if ((time <= last || time > end_us)); then
      echo "event $i at $time: not after $last, or after the end of the run ($end_us)" >&2
      return 1
    fi
    last=$time
    if [[ -n $HOOK_CLOCK ]]; then
      [ "$id.event" = "${files[i - 1]##*/}" ]
    else
      [ "${id#*-}" = "$(basename "${files[i - 1]}" .event | cut -d- -f2-)" ]
    fi
  done
  cd "$REPO"
  forge_reflect ingest --json >"$BATS_TEST_TMPDIR/ingest.json"
  [ "$(jget "$BATS_TEST_TMPDIR/ingest.json" drained)" = 12 ]
  forge_reflect events --json --limit 100 >"$BATS_TEST_TMPDIR/events.json"
  # shellcheck disable=SC2016
  node -e '
    const fs = require("fs"), rows = JSON.parse(fs.readFileSync(process.argv[1], "utf8")), want = process.argv.slice(2);
    const got = rows.slice().sort((a, b) => (a.tool_use_id < b.tool_use_id ? -1 : 1)).map((r) => r.id);
    if (got.join() !== want.join()) throw new Error(`stored ids ${got.join()}\nwant ${want.join()}`);
    for (const r of rows) if (r.ts !== new Date(Number(r.id.slice(0, 16)) / 1000).toISOString().replace(/Z$/, `${r.id.slice(13, 16)}Z`)) throw new Error(`${r.id}: ts ${r.ts}`);' \
    "$BATS_TEST_TMPDIR/events.json" "${want[@]}"
}

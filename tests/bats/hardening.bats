#!/usr/bin/env bats
# Hardening: nothing is written through a symlink a hostile repo planted (.forge, reflections/,
# spool/, the self-report or its folder, a temp name); hostile self-reports and depth bombs go
# through the Stop hook and the CLI (validate, report) without a crash.

load ../helpers/common
load ../helpers/hooks

setup() {
  REPO="$BATS_TEST_TMPDIR/repo"
  make_repo "$REPO"
  OUT="$BATS_TEST_TMPDIR/elsewhere"
  mkdir -p "$OUT"
  export REFLECTION_MODE=solo
  unset FORGE_DIR REFLECTION_DIR REFLECTION_INPUT
  export FORGE_REFLECT_CLI=off
  HOSTILE="$KIT_ROOT/tests/fixtures/hostile"
}

stop() { hook_run "$REPO" bash "$STOP_HOOK" <"$PAYLOADS/stop.json"; }
event() { hook_run "$REPO" bash "$EVENT_HOOK" PostToolUse <"$PAYLOADS/post-tool-use-bash.json"; }
outside_empty() { [ -z "$(find "$OUT" -mindepth 1 ! -name keep)" ]; }

@test "a .forge that is a symlink: both hooks run degraded and write nothing through it" {
  ln -s "$OUT" "$REPO/.forge"
  stop; assert_promise
  event; assert_promise
  outside_empty
}

@test "reflections/ or spool/ a symlink: nothing written through it, the rest still works" {
  mkdir -p "$REPO/.forge"
  ln -s "$OUT" "$REPO/.forge/reflections"
  stop; assert_promise
  outside_empty
  rm "$REPO/.forge/reflections"
  rm -rf "$REPO/.forge/spool"
  ln -s "$OUT" "$REPO/.forge/spool"
  stop; assert_promise
  event; assert_promise
  outside_empty
  [ "$(sidecar_count)" -eq 0 ]   # no spool: the Stop hook stops before the sidecar
}

@test "a symlinked parent of reflections/ (REFLECTION_DIR below a link) is refused" {
  mkdir -p "$REPO/.forge"
  ln -s "$OUT" "$REPO/.forge/link"
  REFLECTION_DIR="$REPO/.forge/link/deep/reflections" stop
  assert_promise
  outside_empty
}

@test "a self-report that is a symlink, or in a symlinked folder, is neither read nor moved" {
  mkdir -p "$REPO/.forge"
  cp "$HOSTILE/self-report-proto-escapes.json" "$OUT/keep"
  ln -s "$OUT/keep" "$REPO/.forge/reflection-input.json"
  stop; assert_promise
  [ -f "$OUT/keep" ]
  [ "$(jget "$(last_sidecar)" confidence)" = null ]
  REFLECTION_INPUT="$REPO/.forge/in/keep"
  ln -s "$OUT" "$REPO/.forge/in"
  REFLECTION_INPUT=$REFLECTION_INPUT stop; assert_promise
  [ -f "$OUT/keep" ]
  outside_empty
}

@test "a planted symlink at a temp or target name is never written through (noclobber, fresh names)" {
  mkdir -p "$REPO/.forge/sessions"
  # the .gitignore temp name of the next pids, and a dangling .gitignore link
  for pid in $(seq $$ $(($$ + 200))); do ln -s "$OUT/owned-$pid" "$REPO/.forge/.gitignore.tmp-$pid"; done
  ln -s "$OUT/owned-gitignore" "$REPO/.forge/.gitignore"
  stop; assert_promise
  event; assert_promise
  outside_empty
  [ "$(sidecar_count)" -eq 1 ]
}

@test "spool/events.log a symlink (to a file, dangling), a FIFO or a folder: nothing written to or through it; the event gets a file of its own" {
  printf '{"session_id":"s1","hook_event_name":"PostToolUse","tool_name":"Bash"}' >"$BATS_TEST_TMPDIR/one-line"
  mkdir -p "$REPO/.forge/spool"
  log=$REPO/.forge/spool/events.log
  printf 'keep\n' >"$OUT/keep"
  for kind in link dangling fifo folder; do
    rm -rf "$log" "$REPO"/.forge/spool/*.event
    case $kind in
      link) ln -s "$OUT/keep" "$log" ;;
      dangling) ln -s "$OUT/made-through-a-link" "$log" ;;
      fifo) mkfifo "$log" ;;
      folder) mkdir "$log" ;;
    esac
    # A hook that opened the FIFO would block there: the timeout turns that into a broken promise.
    hook_run "$REPO" timeout 20 bash "$EVENT_HOOK" PostToolUse <"$BATS_TEST_TMPDIR/one-line"
    assert_promise
    [ "$(cat "$OUT/keep")" = keep ]
    outside_empty
    case $kind in
      link | dangling) [ -L "$log" ] ;;
      fifo) [ -p "$log" ] ;;
      folder)
        [ -d "$log" ]
        [ -z "$(ls -A "$log")" ]
        ;;
    esac
    file=$(find "$REPO/.forge/spool" -maxdepth 1 -name '*.event')
    [ "$(printf '%s' "$file" | grep -c .)" -eq 1 ]
    tail -n +2 "$file" | cmp - "$BATS_TEST_TMPDIR/one-line"
  done
  # The drain neither follows nor seals the planted link; the file is logged.
  rm -rf "$log"
  ln -s "$OUT/keep" "$log"
  cd "$REPO"
  run forge_reflect ingest --json
  [ "$status" -eq 0 ]
  [[ $output == *'"drained": 1,'* ]]
  [ -L "$log" ]
  [ "$(cat "$OUT/keep")" = keep ]
  [ -z "$(find "$REPO/.forge/spool" -maxdepth 1 -name '*.seg')" ]
  outside_empty
}

@test "a hostile self-report: prototype keys ignored, escapes stripped, strings capped" {
  mkdir -p "$REPO/.forge"
  cp "$HOSTILE/self-report-proto-escapes.json" "$REPO/.forge/reflection-input.json"
  stop; assert_promise
  file=$(last_sidecar)
  [ "$(jget "$file" confidence)" = 0.5 ]
  [ "$(jget "$file" most_likely_wrong.description)" = '"[2J]0;pwnedcleared your terminal"' ]
  node -e 'const d=JSON.stringify({confidence:0.2,most_likely_wrong:{surface:"data",description:"d".repeat(100000)},known_not_in_diff:null});require("fs").writeFileSync(process.argv[1],d)' "$REPO/.forge/reflection-input.json"
  stop; assert_promise
  desc=$(jget "$(last_sidecar)" most_likely_wrong.description)
  [ "${#desc}" -eq 4098 ]   # 4,096 characters and the quotes
  [[ $desc == *'… [cut]"' ]]
}

@test "a depth-bombed self-report and payload: the Stop hook, validate and report survive" {
  mkdir -p "$REPO/.forge"
  cp "$HOSTILE/depth-bomb.json" "$REPO/.forge/reflection-input.json"
  hook_run "$REPO" bash "$STOP_HOOK" <"$HOSTILE/depth-bomb.json"
  assert_promise
  [ "$(sidecar_count)" -eq 1 ]
  [ -f "$(find "$REPO/.forge/rejected-input" -name '*.json' | head -1)" ]
  run forge_reflect validate "$HOSTILE/depth-bomb.json"
  [ "$status" -eq 1 ]
  [[ $output != *RangeError* && $output != *"at "*".js:"* ]]
  cp "$HOSTILE/depth-bomb.json" "$REPO/.forge/reflections/bomb.reflection.json"
  cd "$REPO"
  run forge_reflect report
  [[ $status -le 1 ]]
  [[ $output != *RangeError* && $output != *"at "*".js:"* ]]
  run forge_reflect events --json
  [ "$status" -eq 0 ]
}

@test "a planted link with a leftover's name (.tmp-stop-<dead pid>) is removed, never followed by the sweep" {
  echo '{"confidence":0.9,"most_likely_wrong":{"surface":"none","description":"planted"},"known_not_in_diff":null}' >"$OUT/input.json"
  mkdir -p "$REPO/.forge/reflections"
  ln -s "$OUT" "$REPO/.forge/.tmp-stop-999999-1"
  ln -s "$OUT" "$REPO/.forge/reflections/.tmp-999999-x.json"
  stop
  assert_promise
  [ -f "$OUT/input.json" ]
  [ ! -L "$REPO/.forge/.tmp-stop-999999-1" ]
  [ ! -L "$REPO/.forge/reflections/.tmp-999999-x.json" ]
  [ "$(jget "$(last_sidecar)" confidence)" = null ]
  [ -z "$(find "$REPO/.forge" -name '*.json' -path '*rejected-input*')" ]
}

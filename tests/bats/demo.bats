#!/usr/bin/env bats
# forge-reflect demo end to end: install, a scripted session through the real hooks, the report.

load ../helpers/common
load ../helpers/hooks

@test "demo --json: every hook kept its promise; the events, the sidecar and the redaction are right" {
  run --separate-stderr forge_reflect demo --dir "$BATS_TEST_TMPDIR" --json
  [ "$status" -eq 0 ]
  printf '%s' "$output" >"$BATS_TEST_TMPDIR/demo.json"
  [ "$(jget "$BATS_TEST_TMPDIR/demo.json" events_by_type)" = '{"prompt.submitted":1,"reflection.written":1,"session.started":1,"tool.executed":4,"tool.failed":1,"turn.stopped":1}' ]
  [ "$(node -e 'console.log(require(process.argv[1]).steps.every(s => s.ok))' "$BATS_TEST_TMPDIR/demo.json")" = true ]
  [ "$(jget "$BATS_TEST_TMPDIR/demo.json" secrets_in_log)" = 0 ]
  [ "$(jget "$BATS_TEST_TMPDIR/demo.json" sidecar.files_changed)" = '["README.md","src/auth/token.ts","test/token.test.ts"]' ]
  [ "$(jget "$BATS_TEST_TMPDIR/demo.json" sidecar.risk.surface)" = '"auth"' ]
  [ "$(jget "$BATS_TEST_TMPDIR/demo.json" sidecar.confidence)" = 0.7 ]
  [ "$(jget "$BATS_TEST_TMPDIR/demo.json" sidecar.provenance.degraded)" = false ]
  [ "$(jget "$BATS_TEST_TMPDIR/demo.json" sidecar.agent)" = '"claude-code"' ]
  repo=$(node -e 'console.log(require(process.argv[1]).repo)' "$BATS_TEST_TMPDIR/demo.json")
  run forge_reflect validate "$repo/.forge/reflections"
  [ "$status" -eq 0 ]
  ! grep -rqa 'sk-ant-api03-DEMO' "$repo/.forge/events.db"* || false
}

@test "demo prints the report, the sidecar, the events and where the files are" {
  run --separate-stderr forge_reflect demo --dir "$BATS_TEST_TMPDIR"
  [ "$status" -eq 0 ]
  [[ "$output" == *"needs review              1 (100.0%)"* ]]
  [[ "$output" == *"likely wrong  [auth] refreshIfNeeded"* ]]
  [[ "$output" == *"tool.failed"*"Bash"* ]]
  [[ "$output" == *"where the files are"*"event log"* ]]
}

@test "demo ignores the user's kit settings (FORGE_DIR, REFLECTION_DIR) and writes only in its repo" {
  export FORGE_DIR="$BATS_TEST_TMPDIR/user-state" REFLECTION_DIR="$BATS_TEST_TMPDIR/user-sidecars" REFLECTION_MODE=off
  run --separate-stderr forge_reflect demo --dir "$BATS_TEST_TMPDIR/demos" --json
  [ "$status" -eq 0 ]
  [ ! -e "$BATS_TEST_TMPDIR/user-state" ]
  [ ! -e "$BATS_TEST_TMPDIR/user-sidecars" ]
  [ "$(find "$BATS_TEST_TMPDIR/demos" -name '*.reflection.json' | wc -l)" -eq 1 ]
}

@test "demo drains the spool itself: its Stop hook starts no ingest, even with forge-reflect on PATH" {
  mkdir -p "$BATS_TEST_TMPDIR/bin"
  printf '#!/bin/sh\necho "$@" >>"%s/ingest-started"\n' "$BATS_TEST_TMPDIR" >"$BATS_TEST_TMPDIR/bin/forge-reflect"
  chmod +x "$BATS_TEST_TMPDIR/bin/forge-reflect"
  PATH="$BATS_TEST_TMPDIR/bin:$PATH" run --separate-stderr forge_reflect demo --dir "$BATS_TEST_TMPDIR/demos" --json
  [ "$status" -eq 0 ]
  [ ! -e "$BATS_TEST_TMPDIR/ingest-started" ]
}

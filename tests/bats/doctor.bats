#!/usr/bin/env bats
# forge-reflect doctor on healthy and broken setups: one line per check, the fix, exit 1 when broken.

load ../helpers/common
load ../helpers/hooks

setup() {
  REPO="$BATS_TEST_TMPDIR/repo"
  make_repo "$REPO"
  cd "$REPO" || return 1
  forge_reflect install >/dev/null
  export REFLECTION_MODE=solo
  unset FORGE_DIR REFLECTION_DIR
}

teardown() {
  spool_records_ok
}

check_line() { # check_line NAME: the line of that check
  printf '%s\n' "$output" | grep -E "^. $1 "
}

@test "a healthy install: every check passes after a Stop, exit 0" {
  hook_run "$REPO" bash "$REPO/.claude/hooks/forge-reflect/reflect-stop-hook.sh" <"$PAYLOADS/stop.json"
  forge_reflect ingest >/dev/null
  run forge_reflect doctor
  [ "$status" -eq 0 ]
  [ "$(printf '%s\n' "$output" | grep -c '^✓')" -eq 10 ]
  [[ "$(check_line 'event log')" == *"quick_check ok, 2 events"* ]]
  [[ "$(check_line 'CLI for the hooks')" == *"FORGE_REFLECT_CLI=off"* ]]
  [[ "$output" == *"everything needed works"* ]]
}

@test "a stock Mac's bash 3.2 (the stand-in's, first on PATH) passes the bash check, named with its version" {
  mac_bin=$(node "$KIT_ROOT/scripts/macos-like.mjs")
  # shellcheck disable=SC2016 # BASH_VERSINFO is the stand-in bash's own
  [ "$("$mac_bin/bash" -c 'echo "${BASH_VERSINFO[0]}.${BASH_VERSINFO[1]}"' </dev/null)" = 3.2 ]
  PATH="$mac_bin:$PATH" run forge_reflect doctor
  [ "$status" -eq 0 ]
  [[ "$(check_line 'bash and git')" == "✓ bash and git"*" bash 3.2.48("*")-release, git version "* ]]
  [[ "$output" != *"bash 4"* && "$output" != *"brew"* ]]
}

@test "a bash older than 3.2 first on PATH fails the bash check, exit 1, with the fix" {
  mkdir -p "$BATS_TEST_TMPDIR/old-bash"
  # What bash 3.1 prints for doctor's question (BASH_VERSINFO[0], [1], BASH_VERSION).
  printf '#!/bin/sh\nprintf "3 1 3.1.17(1)-release\\n"\n' >"$BATS_TEST_TMPDIR/old-bash/bash"
  chmod +x "$BATS_TEST_TMPDIR/old-bash/bash"
  PATH="$BATS_TEST_TMPDIR/old-bash:$PATH" run forge_reflect doctor
  [ "$status" -eq 1 ]
  [[ "$(check_line 'bash and git')" == "✗ bash and git"*" bash 3.1.17(1)-release is older than 3.2, the oldest the hooks run on" ]]
  [[ "$output" == *"fix: install bash 3.2 or newer and put it first on PATH: the registered hooks run the first \`bash\` on PATH"* ]]
  [[ "$output" != *"bash 4"* ]]
}

@test "a hook that lost its executable bit, or a missing helper: exit 1 with the fix" {
  chmod -x .claude/hooks/forge-reflect/reflect-stop-hook.sh
  run forge_reflect doctor
  [ "$status" -eq 1 ]
  [[ "$(check_line 'hooks vendored')" == "✗"*"reflect-stop-hook.sh is not executable"* ]]
  [[ "$output" == *"fix: forge-reflect install --repo $REPO"* ]]
  forge_reflect install >/dev/null
  rm .claude/hooks/forge-reflect/lib/reflect-helper.cjs
  run forge_reflect doctor --json
  [ "$status" -eq 1 ]
  [[ "$output" == *'"ok": false'* ]]
  [[ "$output" == *"lib/reflect-helper.cjs is missing"* ]]
}

@test "registrations: broken JSON, none at all, or pointing at a missing script" {
  cp .claude/settings.json "$BATS_TEST_TMPDIR/settings.json"
  printf '{ "hooks": ' >.claude/settings.json
  run forge_reflect doctor
  [ "$status" -eq 1 ]
  [[ "$(check_line 'claude-code hooks')" == "✗"*"not valid JSON"* ]]
  printf '{}\n' >.claude/settings.json
  run forge_reflect doctor
  [[ "$(check_line 'hook registrations')" == "✗"*"none in"* ]]
  sed 's/reflect-event-hook.sh/reflect-gone-hook.sh/g' "$BATS_TEST_TMPDIR/settings.json" >.claude/settings.json
  run forge_reflect doctor
  [ "$status" -eq 1 ]
  [[ "$(check_line 'claude-code hooks')" == "✗"*"point at a missing script"* ]]
}

@test "mode off is a warning, not a failure; a symlinked state folder is a failure" {
  unset REFLECTION_MODE
  run forge_reflect doctor
  [ "$status" -eq 0 ]
  [[ "$(check_line REFLECTION_MODE)" == "!"*"unset: the hooks do nothing"* ]]
  mkdir -p "$BATS_TEST_TMPDIR/elsewhere" && rm -rf .forge && ln -s "$BATS_TEST_TMPDIR/elsewhere" .forge
  run forge_reflect doctor
  [ "$status" -eq 1 ]
  [[ "$(check_line 'state folder')" == "✗"*"symbolic link"* ]]
}

@test "a corrupt event log: doctor says so; --repair moves it aside and keeps sidecars and spool" {
  hook_run "$REPO" bash "$REPO/.claude/hooks/forge-reflect/reflect-stop-hook.sh" <"$PAYLOADS/stop.json"
  forge_reflect ingest >/dev/null
  hook_run "$REPO" bash "$REPO/.claude/hooks/forge-reflect/reflect-event-hook.sh" PostToolUse <"$PAYLOADS/post-tool-use-bash.json"
  head -c 4096 /dev/urandom >.forge/events.db
  rm -f .forge/events.db-wal .forge/events.db-shm
  run forge_reflect doctor
  [ "$status" -eq 1 ]
  [[ "$(check_line 'event log')" == "✗"*"is not a usable database"* ]]
  [[ "$output" == *"fix: forge-reflect doctor --repair moves it aside"* ]]
  sidecars_before=$(sidecar_count)
  run forge_reflect doctor --repair
  [ "$status" -eq 0 ]
  [[ "$(check_line 'event log')" == "✓"*"moved to"*"events.db.corrupt-"* ]]
  [ -n "$(find .forge -maxdepth 1 -name 'events.db.corrupt-*')" ]
  [ "$(sidecar_count)" -eq "$sidecars_before" ]
  [ "$(spool_files | wc -l)" -eq 1 ]
  run forge_reflect events --json
  [ "$status" -eq 0 ]
  [[ "$output" == *'"tool.executed"'* ]]
}

@test "rejected spool files are a warning naming the folder" {
  mkdir -p .forge/spool/rejected
  echo x >.forge/spool/rejected/0000000000000001-1-abcd.event
  run forge_reflect doctor
  [ "$status" -eq 0 ]
  [[ "$(check_line spool)" == "!"*"1 rejected"* ]]
}

@test "the CLI the hooks would drain with: found in ~/.forge-reflect, or a warning that says how to get one" {
  unset FORGE_REFLECT_CLI
  export HOME="$BATS_TEST_TMPDIR/home"
  mkdir -p "$HOME/.forge-reflect/bin"
  PATH=$(path_without forge-reflect) run forge_reflect doctor
  [[ "$(check_line 'CLI for the hooks')" == "! "*"find no forge-reflect CLI"* ]]
  [[ "$output" == *"npm install -g <a clone of the kit"* ]]
  [[ "$output" != *"npx"* ]]
  printf '#!/bin/sh\n' >"$HOME/.forge-reflect/bin/forge-reflect"
  chmod +x "$HOME/.forge-reflect/bin/forge-reflect"
  PATH=$(path_without forge-reflect) run forge_reflect doctor
  [[ "$(check_line 'CLI for the hooks')" == "✓ "*"$HOME/.forge-reflect/bin/forge-reflect"* ]]
}

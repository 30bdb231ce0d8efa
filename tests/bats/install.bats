#!/usr/bin/env bats
# forge-reflect install / uninstall / self-report from the shell: a repo folder with a space in
# its name, byte-for-byte round trips, refusals, and the vendored Stop hook end to end.

load ../helpers/common

setup() {
  SCRATCH="$BATS_TEST_TMPDIR/work"
  REPO="$SCRATCH/my repo"
  make_repo "$REPO"
  unset REFLECTION_MODE REFLECTION_INPUT REFLECTION_DIR FORGE_DIR
  export FORGE_REFLECT_CLI=/nonexistent/forge-reflect NO_COLOR=1
  mkdir -p "$REPO/.claude"
  cat >"$REPO/.claude/settings.json" <<'JSON'
{
  "permissions": { "allow": ["Bash(npm test)"] },
  "hooks": {
    "Stop": [ { "hooks": [ { "type": "command", "command": "say done" } ] } ]
  },
  "model": "opus"
}
JSON
  cp "$REPO/.claude/settings.json" "$SCRATCH/original.json"
}

@test "install then uninstall: the settings file is byte for byte what it was" {
  cd "$REPO"
  run forge_reflect install
  [ "$status" -eq 0 ]
  [[ "$output" == *"Installed:"* ]]
  [[ "$output" == *"export REFLECTION_MODE=solo"* ]]
  [ -x "$REPO/.claude/hooks/forge-reflect/reflect-stop-hook.sh" ]
  [ -x "$REPO/.claude/hooks/forge-reflect/reflect-event-hook.sh" ]
  [ -f "$REPO/.claude/hooks/forge-reflect/lib/reflect-helper.cjs" ]
  grep -q 'say done' "$REPO/.claude/settings.json"
  grep -q 'forge-reflect/reflect-stop-hook.sh' "$REPO/.claude/settings.json"
  cmp "$REPO/.claude/settings.json.forge-reflect.bak" "$SCRATCH/original.json"
  run forge_reflect uninstall
  [ "$status" -eq 0 ]
  cmp "$REPO/.claude/settings.json" "$SCRATCH/original.json"
  [ ! -e "$REPO/.claude/hooks" ]
  [ ! -e "$REPO/.claude/settings.json.forge-reflect.bak" ]
  [ -d "$REPO/.forge" ]
  [[ "$output" == *"kept .forge/"* ]]
}

@test "a second install changes nothing and says so" {
  forge_reflect install --repo "$REPO" >/dev/null
  before=$(cd "$REPO" && find . -path ./.git -prune -o -type f -print0 | sort -z | xargs -0 stat -c '%n %Y.%y %a %s')
  sleep 1
  run forge_reflect install --repo "$REPO"
  [ "$status" -eq 0 ]
  [[ "$output" == *"Already installed: nothing changed"* ]]
  after=$(cd "$REPO" && find . -path ./.git -prune -o -type f -print0 | sort -z | xargs -0 stat -c '%n %Y.%y %a %s')
  [ "$before" == "$after" ]
}

@test "--dry-run prints the changes and writes nothing" {
  before=$(cd "$REPO" && find . -path ./.git -prune -o -print | sort)
  run forge_reflect install --repo "$REPO" --dry-run --with-instructions
  [ "$status" -eq 0 ]
  [[ "$output" == *"would create  .claude/hooks/forge-reflect/reflect-stop-hook.sh"* ]]
  [[ "$output" == *"nothing was written"* ]]
  after=$(cd "$REPO" && find . -path ./.git -prune -o -print | sort)
  [ "$before" == "$after" ]
  cmp "$REPO/.claude/settings.json" "$SCRATCH/original.json"
}

@test "a settings file that is not valid JSON is left untouched: exit 1, one line naming the file" {
  printf '{ "hooks": { "Stop": [ }\n' >"$REPO/.claude/settings.json"
  cp "$REPO/.claude/settings.json" "$SCRATCH/broken.json"
  cd "$REPO"
  run --separate-stderr forge_reflect install
  [ "$status" -eq 1 ]
  [ "${#stderr_lines[@]}" -eq 1 ]
  [[ "$stderr" == *"$REPO/.claude/settings.json: not valid JSON"*"fix the file"* ]]
  cmp "$REPO/.claude/settings.json" "$SCRATCH/broken.json"
  [ ! -e "$REPO/.claude/hooks" ]
  [ ! -e "$REPO/.forge" ]
}

@test "a symlinked settings file is refused and its target untouched" {
  mv "$REPO/.claude/settings.json" "$SCRATCH/target.json"
  ln -s "$SCRATCH/target.json" "$REPO/.claude/settings.json"
  run --separate-stderr forge_reflect install --repo "$REPO"
  [ "$status" -eq 1 ]
  [[ "$stderr" == *"symbolic link"* ]]
  [ -L "$REPO/.claude/settings.json" ]
  cmp "$SCRATCH/target.json" "$SCRATCH/original.json"
  [ ! -e "$REPO/.claude/hooks" ]
}

@test "outside a repository without --repo: exit 1 naming the fix" {
  mkdir -p "$SCRATCH/plain"
  cd "$SCRATCH/plain"
  run --separate-stderr forge_reflect install
  [ "$status" -eq 1 ]
  [[ "$stderr" == *"not inside a git work tree"*"--repo DIR"* ]]
}

@test "end to end: self-report, then the vendored Stop hook writes a sidecar that validate accepts" {
  cd "$REPO"
  forge_reflect install --with-instructions >/dev/null
  [ -f "$REPO/.claude/commands/reflect.md" ]
  run forge_reflect self-report --confidence 0.4 --surface data --wrong 'the backfill skips soft-deleted rows' \
    --not-in-diff 'ran it against a copy of prod only'
  [ "$status" -eq 0 ]
  [[ "$output" == *"$REPO/.forge/reflection-input.json"* ]]
  run env REFLECTION_MODE=solo "$REPO/.claude/hooks/forge-reflect/reflect-stop-hook.sh" \
    </work/shared/reference/claude-code-payloads/stop.json
  [ "$status" -eq 0 ]
  [ -z "$output" ]
  shopt -s nullglob
  sidecars=("$REPO"/.forge/reflections/*.reflection.json)
  [ "${#sidecars[@]}" -eq 1 ]
  grep -q '"confidence": 0.4' "${sidecars[0]}"
  grep -q '"degraded": false' "${sidecars[0]}"
  run forge_reflect validate "$REPO/.forge/reflections"
  [ "$status" -eq 0 ]
  [[ "$output" == *"1 checked, 1 valid, 0 invalid"* ]]
}

@test "self-report refuses a bad confidence or surface with exit 2 and the allowed values" {
  cd "$REPO"
  run --separate-stderr forge_reflect self-report --confidence 1.2 --surface auth --wrong x
  [ "$status" -eq 2 ]
  [[ "$stderr" == *"from 0 to 1"* ]]
  run --separate-stderr forge_reflect self-report --confidence 0.5 --surface backend --wrong x
  [ "$status" -eq 2 ]
  [[ "$stderr" == *"auth|data|infra|ui|build|test|docs|none"* ]]
  [ ! -e "$REPO/.forge/reflection-input.json" ]
}

@test "install offers the self-report instructions when they were not asked for" {
  repo="$BATS_TEST_TMPDIR/offer"
  make_repo "$repo"
  run forge_reflect install --repo "$repo"
  [ "$status" -eq 0 ]
  # The steps name a command that runs as printed: this CLI's own path, never a bare name or npx.
  [[ "$output" == *"forge-reflect.js install --with-instructions adds the /reflect command"* ]]
  [[ "$output" != *"npx"* ]]
  [ ! -e "$repo/.claude/commands/reflect.md" ]
  run forge_reflect install --repo "$repo" --with-instructions
  [[ "$output" != *"install --with-instructions adds"* ]]
  [ -f "$repo/.claude/commands/reflect.md" ]
}

@test "in a project with the kit as a devDependency the steps name ./node_modules/.bin/forge-reflect" {
  repo="$BATS_TEST_TMPDIR/dev dep"
  make_repo "$repo"
  mkdir -p "$repo/node_modules/.bin" && ln -s "$KIT_ROOT/packages/forge-reflect/bin/forge-reflect.js" "$repo/node_modules/.bin/forge-reflect"
  run forge_reflect install --repo "$repo"
  [ "$status" -eq 0 ]
  [[ "$output" == *"./node_modules/.bin/forge-reflect validate .forge/reflections"* ]]
  [[ "$output" == *"to undo: ./node_modules/.bin/forge-reflect uninstall"* ]]
}

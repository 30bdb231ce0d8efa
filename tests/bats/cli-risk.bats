#!/usr/bin/env bats
# forge-reflect risk / validate / schema from the shell: exit codes and one-line errors.

load ../helpers/common

setup() {
  SCRATCH="$BATS_TEST_TMPDIR/work"
  mkdir -p "$SCRATCH"
}

@test "risk on an auth path needs review and still exits 0" {
  run forge_reflect risk src/auth/token.ts README.md
  [ "$status" -eq 0 ]
  [[ "$output" == *"risk floor: auth (score 1, threshold 0.5): needs review"* ]]
}

@test "risk --fail-on-review exits 3 when review is needed, 0 when not" {
  run forge_reflect risk --fail-on-review src/auth/token.ts
  [ "$status" -eq 3 ]
  run forge_reflect risk --fail-on-review docs/guide.md
  [ "$status" -eq 0 ]
}

@test "risk --threshold rejects abc and 1.5 with exit 2 and one line naming the fix" {
  for bad in abc 1.5 -0.1 ''; do
    run --separate-stderr forge_reflect risk --threshold "$bad" README.md
    [ "$status" -eq 2 ]
    [[ "$stderr" == *"--threshold"*"e.g. --threshold 0.5"* ]]
    [[ "$stderr" != *"at "*".js:"* ]]
  done
}

@test "an invalid REFLECTION_RISK_THRESHOLD is a usage error naming the variable" {
  REFLECTION_RISK_THRESHOLD=high run --separate-stderr forge_reflect risk README.md
  [ "$status" -eq 2 ]
  [[ "$stderr" == *"REFLECTION_RISK_THRESHOLD"* ]]
}

@test "risk --threshold 1 lets auth through only at weight 1" {
  run forge_reflect risk --json --threshold 1 deploy/helm/values.yaml
  [ "$status" -eq 0 ]
  [[ "$output" == *'"needs_review": false'* ]]
  [[ "$output" == *'"surface": "infra"'* ]]
}

@test "risk --git sees a new untracked auth file and a committed-since-base change" {
  make_repo "$SCRATCH/repo"
  base=$(git -C "$SCRATCH/repo" rev-parse HEAD)
  mkdir -p "$SCRATCH/repo/db"
  echo 'create table t();' >"$SCRATCH/repo/db/001.sql"
  git -C "$SCRATCH/repo" add db && git -C "$SCRATCH/repo" commit -q -m 'add table'
  mkdir -p "$SCRATCH/repo/src/auth"
  echo 'export const t = 1;' >"$SCRATCH/repo/src/auth/token.ts"
  cd "$SCRATCH/repo"
  run forge_reflect risk --git --json
  [ "$status" -eq 0 ]
  [[ "$output" == *'"path": "src/auth/token.ts"'* ]]
  [[ "$output" != *'db/001.sql'* ]]
  run forge_reflect risk --git --base "$base" --json
  [[ "$output" == *'"path": "db/001.sql"'* ]]
  [[ "$output" == *'"surface": "auth"'* ]]
}

@test "risk --git outside a repository is bad input (exit 1), --base without --git is usage (exit 2)" {
  cd "$SCRATCH"
  run --separate-stderr forge_reflect risk --git
  [ "$status" -eq 1 ]
  [[ "$stderr" == *"not inside a git work tree"* ]]
  run forge_reflect risk --base HEAD x
  [ "$status" -eq 2 ]
}

@test "an unknown command is a usage error (exit 2)" {
  run --separate-stderr forge_reflect frobnicate
  [ "$status" -eq 2 ]
  [[ "$stderr" == *"forge-reflect:"* ]]
}

@test "validate: valid file exits 0; invalid names the field path and rule; non-JSON says so" {
  forge_reflect schema >/dev/null
  cat >"$SCRATCH/good.reflection.json" <<'JSON'
{"schema":"reflection.v1","task_ref":"repo#main","agent":"claude-code","session_id":"s1","timestamp":"2026-11-22T10:00:00Z","repo":"repo","confidence":0.8,"most_likely_wrong":{"surface":"auth","description":"token expiry"},"known_not_in_diff":null,"risk":{"needs_review":true,"score":1,"surface":"auth","reason":"auth"},"files_changed":["src/auth/token.ts"],"provenance":{"source":"stop-hook","reflection_attempt":1,"degraded":false,"reflection_mode":"solo"}}
JSON
  run forge_reflect validate "$SCRATCH/good.reflection.json"
  [ "$status" -eq 0 ]
  sed 's/"score":1/"score":1.5/' "$SCRATCH/good.reflection.json" >"$SCRATCH/bad.reflection.json"
  echo 'not json' >"$SCRATCH/junk.reflection.json"
  printf '{"schema":' >"$SCRATCH/.tmp-123-partial.reflection.json"
  run forge_reflect validate "$SCRATCH"
  [ "$status" -eq 1 ]
  [[ "$output" == *"bad.reflection.json: /risk/score must be <= 1 (maximum)"* ]]
  [[ "$output" == *"junk.reflection.json: not JSON"* ]]
  [[ "$output" == *"3 checked, 1 valid, 2 invalid"* ]]
}

@test "validate on a missing path is bad input with the path named" {
  run --separate-stderr forge_reflect validate "$SCRATCH/nope.json"
  [ "$status" -eq 1 ]
  [[ "$stderr" == *"nope.json"* ]]
}

#!/usr/bin/env bats
# The record of one real session: the self-report in the final answer, the state folder that stays
# at the project, only the session's own changes, the runtime the registration names, and a floor
# that fails closed when it cannot see every changed file.

load ../helpers/common
load ../helpers/hooks

SESSION=7f3c2a9e-4b1d-4e8a-9c6f-2d5e8b1a0c34
REPORT='{"confidence":0.62,"most_likely_wrong":{"surface":"auth","description":"token expiry is not checked"},"known_not_in_diff":"did not run the e2e suite"}'

setup() {
  REPO="$BATS_TEST_TMPDIR/project repo"
  make_repo "$REPO"
  export REFLECTION_MODE=solo
  unset FORGE_DIR REFLECTION_DIR REFLECTION_INPUT REFLECTION_TASK_REF REFLECTION_AGENT REFLECTION_ATTEMPT REFLECTION_RISK_THRESHOLD
}

# stop_payload ANSWER [EXTRA_JSON_FIELDS]: a Stop payload of $SESSION whose final answer is ANSWER.
stop_payload() {
  # shellcheck disable=SC2016 # the script is JavaScript, not shell
  node -e 'const [answer, extra] = process.argv.slice(1);
    const p = { session_id: process.env.SESSION, transcript_path: "/nonexistent/t.jsonl", cwd: process.env.REPO, hook_event_name: "Stop", stop_hook_active: false };
    if (answer !== "-") p.last_assistant_message = answer;
    Object.assign(p, JSON.parse(extra || "{}"));
    process.stdout.write(JSON.stringify(p));' "$1" "${2:-}"
}
export SESSION REPO

teardown() {
  spool_records_ok
}

answer_with() {
  # shellcheck disable=SC2016 # the backquotes are the fence, not a command
  printf 'Added the token check.\n\n```reflection\n%s\n```\n' "$1"
}

session_start() {
  hook_run "${1:-$REPO}" bash "$EVENT_HOOK" SessionStart claude-code < <(
    printf '{"session_id":"%s","hook_event_name":"SessionStart","source":"startup","cwd":"%s"}' "$SESSION" "$REPO")
  assert_promise
}

stop_with() {
  hook_run "${2:-$REPO}" bash "$STOP_HOOK" claude-code <<<"$1"
  assert_promise
}

@test "the reflection block of the final answer is the self-report: merged, not degraded, no CLI, no file" {
  session_start
  mkdir -p "$REPO/src/auth" && echo 'export const t = 1;' >"$REPO/src/auth/token.ts"
  stop_with "$(stop_payload "$(answer_with "$REPORT")")"
  file=$(last_sidecar)
  [ "$(jget "$file" confidence)" = 0.62 ]
  [ "$(jget "$file" most_likely_wrong.description)" = '"token expiry is not checked"' ]
  [ "$(jget "$file" known_not_in_diff)" = '"did not run the e2e suite"' ]
  [ "$(jget "$file" provenance.degraded)" = false ]
  [ "$(jget "$file" agent)" = '"claude-code"' ]
  [ "$(jget "$file" risk.surface)" = '"auth"' ]
  [ ! -e "$REPO/.forge/rejected-input" ]
}

@test "a block that is not JSON or breaks the schema: degraded, its text kept in rejected-input with the reason" {
  session_start
  stop_with "$(stop_payload "$(answer_with '{"confidence": 7, "most_likely_wrong": {"surface":"auth","description":"x"}}')")"
  [ "$(jget "$(last_sidecar)" confidence)" = null ]
  [ "$(jget "$(last_sidecar)" provenance.degraded)" = true ]
  [[ "$(cat "$REPO"/.forge/rejected-input/*.answer.reason)" == *confidence* ]]
  grep -q '"confidence": 7' "$REPO"/.forge/rejected-input/*.answer.txt
  rm -rf "$REPO/.forge/rejected-input"
  stop_with "$(stop_payload "$(printf 'done\n```reflection\n{"confidence": 0.5, oops')")"
  [ "$(jget "$(last_sidecar)" provenance.degraded)" = true ]
  [[ "$(cat "$REPO"/.forge/rejected-input/*.answer.reason)" == *"not closed"* ]]
}

@test "without last_assistant_message the block comes from the tail of the transcript (only the assistant's text)" {
  session_start
  transcript="$BATS_TEST_TMPDIR/t.jsonl"
  # shellcheck disable=SC2016 # the script is JavaScript, not shell
  node -e 'const [report] = process.argv.slice(1);
    const line = (role, text) => JSON.stringify({ type: role, message: { role, content: [{ type: "text", text }] } });
    const big = "x".repeat(3 * 1024 * 1024);
    process.stdout.write([line("user", big), line("assistant", "Done.\n```reflection\n" + report + "\n```"), line("user", "```reflection\n{\"confidence\":0.01}\n```"), ""].join("\n"));' "$REPORT" >"$transcript"
  stop_with "$(stop_payload - "{\"transcript_path\":\"$transcript\"}")"
  [ "$(jget "$(last_sidecar)" confidence)" = 0.62 ]
  # Missing or unreadable transcript: degraded, still exit 0 with a sidecar.
  stop_with "$(stop_payload - '{"transcript_path":"/nonexistent/x.jsonl"}')"
  [ "$(jget "$(last_sidecar)" provenance.degraded)" = true ]
  [ "$(sidecar_count)" -eq 2 ]
}

@test "a self-report file with no session id written before the session started is refused as stale" {
  mkdir -p "$REPO/.forge"
  printf '%s\n' "$REPORT" >"$REPO/.forge/reflection-input.json"
  touch -d '-1 hour' "$REPO/.forge/reflection-input.json"
  session_start
  stop_with "$(stop_payload 'nothing to report')"
  [ "$(jget "$(last_sidecar)" confidence)" = null ]
  [ "$(jget "$(last_sidecar)" provenance.degraded)" = true ]
  [[ "$(cat "$REPO"/.forge/rejected-input/*.reason)" == *stale* ]]
  [ ! -e "$REPO/.forge/reflection-input.json" ]
  # One written during the session (even without an id) is this turn's: merged.
  printf '%s\n' "$REPORT" >"$REPO/.forge/reflection-input.json"
  stop_with "$(stop_payload 'done')"
  [ "$(jget "$(last_sidecar)" confidence)" = 0.62 ]
}

@test "the answer's block wins over a self-report file, which is kept aside as not used" {
  session_start
  printf '{"confidence":0.9,"most_likely_wrong":{"surface":"none","description":"file"},"known_not_in_diff":null,"session_id":"%s"}\n' "$SESSION" >"$REPO/.forge/reflection-input.json"
  stop_with "$(stop_payload "$(answer_with "$REPORT")")"
  [ "$(jget "$(last_sidecar)" confidence)" = 0.62 ]
  [[ "$(cat "$REPO"/.forge/rejected-input/*.reason)" == *"final answer carried its own reflection block"* ]]
}

@test "a cd into a nested repo moves nothing: state, sidecar and events stay at CLAUDE_PROJECT_DIR" {
  nested="$REPO/vendor/lib"
  make_repo "$nested"
  echo 'vendor/' >"$REPO/.gitignore" && git -C "$REPO" add .gitignore && git -C "$REPO" commit -qm ignore-vendor
  export CLAUDE_PROJECT_DIR=$REPO
  session_start "$nested"
  echo note >"$nested/note.txt"
  mkdir -p "$REPO/src/auth" && echo x >"$REPO/src/auth/login.ts"
  hook_run "$nested" bash "$EVENT_HOOK" PostToolUse claude-code <"$PAYLOADS/post-tool-use-bash.json"
  stop_with "$(stop_payload 'done')" "$nested"
  [ ! -e "$nested/.forge" ]
  [ "$(sidecar_count)" -eq 1 ]
  [ "$(jget "$(last_sidecar)" files_changed)" = '["src/auth/login.ts"]' ]
  [ "$(spool_files | wc -l)" -eq 4 ]   # SessionStart (a record of the spool log), PostToolUse, Stop, reflection.written
}

@test "only the session's own changes: a file dirty before SessionStart is not blamed; commits in the session are" {
  echo 'user edit' >>"$REPO/README.md"
  mkdir -p "$REPO/src/auth" && echo 'draft' >"$REPO/src/auth/draft.ts"
  session_start
  [ -z "$(git -C "$REPO" diff --cached --name-only)" ]   # the user's index untouched
  echo 'by the agent' >"$REPO/new.md"
  mkdir -p "$REPO/docs" && echo doc >"$REPO/docs/a.md" && git -C "$REPO" add docs/a.md && git -C "$REPO" commit -qm 'agent commit'
  stop_with "$(stop_payload 'done')"
  [ "$(jget "$(last_sidecar)" files_changed)" = '["docs/a.md","new.md"]' ]
  [ "$(jget "$(last_sidecar)" risk.needs_review)" = false ]
  # A later edit of the pre-existing dirty file is the session's.
  echo 'agent again' >>"$REPO/src/auth/draft.ts"
  stop_with "$(stop_payload 'done')"
  [ "$(jget "$(last_sidecar)" files_changed)" = '["docs/a.md","new.md","src/auth/draft.ts"]' ]
  [ "$(jget "$(last_sidecar)" risk.needs_review)" = true ]
}

@test "without a snapshot the old rule applies and risk.reason says so" {
  echo 'user edit' >>"$REPO/README.md"
  stop_with "$(stop_payload 'done')"
  [ "$(jget "$(last_sidecar)" files_changed)" = '["README.md"]' ]
  [[ "$(jget "$(last_sidecar)" risk.reason)" == *"no working-tree snapshot"* ]]
}

@test "the runtime comes from the registration: agent and every spooled event carry it; REFLECTION_AGENT wins" {
  session_start
  n=0
  while IFS= read -r f; do
    head -n 1 "$f" | grep -q '"runtime":"claude-code"'
    n=$((n + 1))
  done < <(spool_files)
  [ "$n" -eq 1 ]
  hook_run "$REPO" bash "$STOP_HOOK" codex <<<"$(stop_payload finished)"
  [ "$(jget "$(last_sidecar)" agent)" = '"codex"' ]
  REFLECTION_AGENT=my-agent hook_run "$REPO" bash "$STOP_HOOK" gemini <<<"$(stop_payload finished)"
  [ "$(jget "$(last_sidecar)" agent)" = '"my-agent"' ]
  hook_run "$REPO" bash "$STOP_HOOK" bogus <<<"$(stop_payload finished)"
  [ "$(jget "$(last_sidecar)" agent)" = '"unknown"' ]
}

@test "an event hook run without an event argument takes hook_event_name from the payload (SessionStart records the base)" {
  hook_run "$REPO" bash "$EVENT_HOOK" < <(printf '{"session_id":"%s","hook_event_name":"SessionStart","source":"startup"}' "$SESSION")
  assert_promise
  [ "$(head -n 1 "$REPO/.forge/sessions/$SESSION.base")" = "$(git -C "$REPO" rev-parse HEAD)" ]
}

@test "fail closed at the cap: without node, 5,000 docs files and one auth file past the cap need review" {
  session_start
  mkdir -p "$REPO/docs" "$REPO/src/auth"
  for i in $(seq -w 1 5000); do echo d >"$REPO/docs/d$i.md"; done
  echo a >"$REPO/src/auth/zz.ts"
  PATH="$(path_without_node)" hook_run "$REPO" bash "$STOP_HOOK" claude-code <<<"$(stop_payload finished)"
  assert_promise
  file=$(last_sidecar)
  [ "$(jget "$file" risk.needs_review)" = true ]
  [ "$(jget "$file" risk.surface)" = '"docs"' ]
  [[ "$(jget "$file" risk.reason)" == *"only the first 5000 changed files"* ]]
  [ "$(jget "$file" provenance.degraded)" = true ]
}

@test "outside a git repo the floor cannot see what changed: it asks for review" {
  plain="$BATS_TEST_TMPDIR/plain"
  mkdir -p "$plain"
  hook_run "$plain" bash "$STOP_HOOK" claude-code <<<"$(stop_payload finished)"
  assert_promise
  file=$(last_sidecar "$plain/.forge/reflections")
  [ "$(jget "$file" risk.needs_review)" = true ]
  [[ "$(jget "$file" risk.reason)" == *"not inside a git work tree"* ]]
}

@test "the background drain uses the project's own CLI in node_modules/.bin before PATH" {
  unset FORGE_REFLECT_CLI
  mkdir -p "$REPO/node_modules/.bin"
  # shellcheck disable=SC2016 # $FORGE_DIR is for the fake CLI to expand
  printf '#!/bin/sh\necho "$FORGE_DIR" >"%s/drained-by-project-cli"\n' "$BATS_TEST_TMPDIR" >"$REPO/node_modules/.bin/forge-reflect"
  chmod +x "$REPO/node_modules/.bin/forge-reflect"
  stop_with "$(stop_payload finished)"
  for _ in $(seq 1 100); do [ -e "$BATS_TEST_TMPDIR/drained-by-project-cli" ] && break; sleep 0.05; done
  [ "$(cat "$BATS_TEST_TMPDIR/drained-by-project-cli")" = "$REPO/.forge" ]
}

@test "SessionStart clears what sessions older than 30 days left, and nothing newer" {
  mkdir -p "$REPO/.forge/sessions"
  echo old >"$REPO/.forge/sessions/old-session.index" && touch -d '-40 days' "$REPO/.forge/sessions/old-session.index"
  echo recent >"$REPO/.forge/sessions/recent-session.index" && touch -d '-2 days' "$REPO/.forge/sessions/recent-session.index"
  session_start
  [ ! -e "$REPO/.forge/sessions/old-session.index" ]
  [ -e "$REPO/.forge/sessions/recent-session.index" ]
  [ -e "$REPO/.forge/sessions/$SESSION.index" ]
}

@test "the bash fallback lists the same files as the node helper, with and without a snapshot" {
  echo 'user edit' >>"$REPO/README.md"
  printf 'a\n' >"$REPO/old name.txt" && git -C "$REPO" add "old name.txt" && git -C "$REPO" commit -qm old
  for snapshot in yes no; do
    rm -rf "$REPO/.forge"
    [ $snapshot = yes ] && session_start
    git -C "$REPO" mv "old name.txt" "new name.txt"
    mkdir -p "$REPO/src/auth" && echo x >"$REPO/src/auth/ü ñ.ts"
    echo staged >"$REPO/staged.md" && git -C "$REPO" add staged.md
    stop_with "$(stop_payload finished)"
    with_node=$(jget "$(last_sidecar)" files_changed)
    PATH="$(path_without_node)" hook_run "$REPO" bash "$STOP_HOOK" claude-code <<<"$(stop_payload finished)"
    assert_promise
    [ "$(jget "$(last_sidecar)" files_changed)" = "$with_node" ]
    [[ "$with_node" == *'"new name.txt"'* && "$with_node" == *'"old name.txt"'* && "$with_node" == *'"staged.md"'* ]]
    if [ $snapshot = yes ]; then [[ "$with_node" != *README.md* ]]; else [[ "$with_node" == *README.md* ]]; fi
    git -C "$REPO" reset -q --hard && git -C "$REPO" clean -qfd && echo 'user edit' >>"$REPO/README.md"
  done
}

# files_both: sets FILES to the session's files_changed from the node helper, then checks that the
# bash fallback lists the same.
files_both() {
  stop_with "$(stop_payload finished)"
  FILES=$(jget "$(last_sidecar)" files_changed)
  PATH="$(path_without_node)" hook_run "$REPO" bash "$STOP_HOOK" claude-code <<<"$(stop_payload finished)"
  assert_promise
  [ "$(jget "$(last_sidecar)" files_changed)" = "$FILES" ] || { echo "fallback: $(jget "$(last_sidecar)" files_changed), node: $FILES" >&2; return 1; }
}

@test "exactly the changed files: clean and dirty starts, each way of taking the snapshot, new folders, deletions" {
  mkdir -p "$REPO/src/auth" "$REPO/lib/deep/er"
  for f in src/auth/a.ts src/auth/b.ts lib/deep/er/c.ts lib/keep.ts; do echo "$f" >"$REPO/$f"; done
  git -C "$REPO" add -A && git -C "$REPO" commit -qm files
  # FORGE_SNAPSHOT_PATHS=0: every change is too many to read, so SessionStart takes `git add -A`.
  for paths in 2000 0; do
    for start in clean dirty; do
      rm -rf "$REPO/.forge"
      git -C "$REPO" reset -q --hard && git -C "$REPO" clean -qfd
      if [ $start = dirty ]; then
        echo 'user edit' >>"$REPO/README.md"                  # tracked, dirty before
        rm "$REPO/lib/keep.ts"                                # deleted before
        mkdir -p "$REPO/wip/notes" && echo n >"$REPO/wip/notes/n.md"   # a new folder before
      fi
      FORGE_SNAPSHOT_PATHS=$paths session_start
      [ -f "$REPO/.forge/sessions/$SESSION.index" ]
      [ "$(head -n 1 "$REPO/.forge/sessions/$SESSION.base")" = "$(git -C "$REPO" rev-parse HEAD)" ]
      # A clean start: nothing.
      files_both && [ "$FILES" = '[]' ]
      # A tracked edit, a deletion, a new file in a new folder two levels deep, one in an old folder.
      echo edit >>"$REPO/src/auth/a.ts"
      rm "$REPO/lib/deep/er/c.ts"
      mkdir -p "$REPO/new/dir" && echo x >"$REPO/new/dir/x.ts" && echo y >"$REPO/new/y.md"
      echo z >"$REPO/src/auth/z.ts"
      echo ignored >"$REPO/debug.log" && echo '*.log' >"$REPO/.git/info/exclude"
      files_both && [ "$FILES" = '["lib/deep/er/c.ts","new/dir/x.ts","new/y.md","src/auth/a.ts","src/auth/z.ts"]' ]
      [ "$(jget "$(last_sidecar)" risk.surface)" = '"auth"' ]
      [[ "$(jget "$(last_sidecar)" risk.reason)" != *"no working-tree snapshot"* ]]
      # Put back as it was at the start: nothing is the session's again (dirty before stays unblamed).
      git -C "$REPO" checkout -q -- src/auth/a.ts lib/deep/er/c.ts && rm -rf "$REPO/new" "$REPO/src/auth/z.ts"
      files_both && [ "$FILES" = '[]' ]
      # A file dirty before, changed again in the session, is the session's; one it deletes too.
      if [ $start = dirty ]; then
        echo again >>"$REPO/README.md" && rm -rf "$REPO/wip"
        files_both && [ "$FILES" = '["README.md","wip/notes/n.md"]' ]
      fi
      : >"$REPO/.git/info/exclude"
    done
  done
}

@test "a new folder whose files git cannot list: the folder stands in and the floor fails closed" {
  session_start
  mkdir -p "$REPO/docs/new" && echo d >"$REPO/docs/new/a.md"
  fake="$BATS_TEST_TMPDIR/no-ls-files"
  mkdir -p "$fake"
  printf '#!/bin/sh\ncase " $* " in *" ls-files "*) exit 128 ;; esac\nexec "%s" "$@"\n' "$(command -v git)" >"$fake/git" && chmod +x "$fake/git"
  PATH="$fake:$PATH" hook_run "$REPO" bash "$STOP_HOOK" claude-code <<<"$(stop_payload finished)"
  assert_promise
  with_node=$(last_sidecar)
  [ "$(jget "$with_node" files_changed)" = '["docs/"]' ]
  [ "$(jget "$with_node" risk.needs_review)" = true ]
  [[ "$(jget "$with_node" risk.reason)" == *"files in 1 new folder(s) could not be listed"* ]]
  PATH="$fake:$(path_without_node)" hook_run "$REPO" bash "$STOP_HOOK" claude-code <<<"$(stop_payload finished)"
  assert_promise
  [ "$(jget "$(last_sidecar)" files_changed)" = '["docs/"]' ]
  [ "$(jget "$(last_sidecar)" risk.needs_review)" = true ]
  [[ "$(jget "$(last_sidecar)" risk.reason)" == *"files in 1 new folder(s) could not be listed"* ]]
}

@test "a status slower than SessionStart's budget: no snapshot, and the Stop sidecar names the budget" {
  fake="$BATS_TEST_TMPDIR/slow-status"
  mkdir -p "$fake"
  printf '#!/bin/sh\ncase " $* " in *" status "*) sleep 5 ;; esac\nexec "%s" "$@"\n' "$(command -v git)" >"$fake/git" && chmod +x "$fake/git"
  start=$SECONDS
  PATH="$fake:$PATH" FORGE_SNAPSHOT_SECONDS=1 session_start
  [ $((SECONDS - start)) -lt 5 ]
  [ ! -e "$REPO/.forge/sessions/$SESSION.index" ]
  [ "$(sed -n 3p "$REPO/.forge/sessions/$SESSION.base")" = 'late 1' ]
  echo 'by the agent' >"$REPO/new.md"
  stop_with "$(stop_payload finished)"
  [ "$(jget "$(last_sidecar)" files_changed)" = '["new.md"]' ]
  [[ "$(jget "$(last_sidecar)" risk.reason)" == *"no working-tree snapshot"*"SessionStart's git did not finish within its 1 s budget"* ]]
  PATH="$(path_without_node)" hook_run "$REPO" bash "$STOP_HOOK" claude-code <<<"$(stop_payload finished)"
  assert_promise
  [[ "$(jget "$(last_sidecar)" risk.reason)" == *"SessionStart's git did not finish within its 1 s budget"* ]]
}

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
hook_run() {
  local dir=$1
  shift
  HOOK_STATUS=0
  HOOK_STDOUT=$(cd "$dir" && "$@" 2>"$BATS_TEST_TMPDIR/hook.stderr") || HOOK_STATUS=$?
}

# The promise: exit 0 and nothing on stdout.
assert_promise() {
  if [ "$HOOK_STATUS" -ne 0 ] || [ -n "$HOOK_STDOUT" ]; then
    echo "hook broke its promise: exit $HOOK_STATUS, stdout '${HOOK_STDOUT:0:200}'" >&2
    return 1
  fi
}

jget() {
  node "$KIT_ROOT/tests/helpers/json-get.mjs" "$@"
}

# The newest sidecar in DIR (default .forge/reflections of the scratch repo).
last_sidecar() {
  local dir=${1:-$REPO/.forge/reflections}
  find "$dir" -maxdepth 1 -name '*.reflection.json' | LC_ALL=C sort | tail -n 1
}

sidecar_count() {
  local dir=${1:-$REPO/.forge/reflections}
  find "$dir" -maxdepth 1 -name '*.reflection.json' 2>/dev/null | wc -l | tr -d ' '
}

# A PATH with everything the hooks use but node.
path_without_node() {
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

# path_without TOOL...: a PATH with every command of the current PATH except the named ones.
path_without() {
  local bin dir file name
  bin=$BATS_TEST_TMPDIR/path-without-$(printf '%s-' "$@")
  if [[ ! -d $bin ]]; then
    mkdir -p "$bin"
    local IFS=:
    for dir in $PATH; do
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

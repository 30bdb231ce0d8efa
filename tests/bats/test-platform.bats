#!/usr/bin/env bats
# The test harness itself (scripts/test-shell.mjs): in the stock-Mac pass every way the suites start
# a hook really runs it in the stand-in's bash 3.2 with the stand-in's tools alone after the test's
# own, and the test bodies keep the system's bash and tools; in the system pass nothing changes.
# Checked from inside the hook's own process: a BASH_ENV file (read by bash before the script's
# first line) notes its bash, PATH and platform. A harness that quietly ran bash 5 fails here.
# (The probe reads /proc: the kernel is Linux in both passes.)

load ../helpers/common
load ../helpers/hooks

setup() {
  REPO="$BATS_TEST_TMPDIR/repo"
  make_repo "$REPO"
  # The hooks do nothing with the mode off: only the probe writes.
  export REFLECTION_MODE=off
  PROBE="$BATS_TEST_TMPDIR/probe.bash"
  PROBE_OUT="$BATS_TEST_TMPDIR/probe.out"
  export PROBE_OUT
  # bash 3.2 syntax: it runs in the hook's bash. It notes only in a bash that runs a hook (or the
  # hooks' encoders' check): its script is the second word of its command line (bash 3.2 sets $0 to
  # the script only after BASH_ENV).
  cat >"$PROBE" <<'PROBE'
forge_probe_words=()
while IFS= read -r -d '' forge_probe_word; do forge_probe_words[${#forge_probe_words[@]}]=$forge_probe_word; done </proc/$$/cmdline
case ${forge_probe_words[1]-} in
  *reflect-*-hook.sh | *text-encoding-check.bash)
    forge_probe_missing=''
    for forge_probe_tool in timeout flock setsid; do
      command -v "$forge_probe_tool" >/dev/null 2>&1 || forge_probe_missing="$forge_probe_missing $forge_probe_tool"
    done
    printf 'zero=%s\nversion=%s\npath=%s\nostype=%s\nproc=%s\nmissing=%s\n' "${forge_probe_words[1]}" "$BASH_VERSION" "$PATH" "${OSTYPE-}" "${FORGE_PROC_ROOT-unset}" "$forge_probe_missing" >"$PROBE_OUT"
    ;;
esac
unset forge_probe_words forge_probe_word forge_probe_missing forge_probe_tool
PROBE
  SYSTEM_BASH_VERSION=$(bash -c 'echo "$BASH_VERSION"')
}

# probe KEY: what the last probed hook noted under KEY.
probe() {
  sed -n "s/^$1=//p" "$PROBE_OUT"
}

# fresh_probe: forget the last probe.
fresh_probe() {
  rm -f "$PROBE_OUT"
}

# assert_hook_platform [FOLDER...]: the last probed hook ran as this pass runs hooks. In the Mac
# pass: bash 3.2, a PATH of the FOLDERs a test put first (in that order) then the stand-in's bin/,
# nothing of the system's, OSTYPE darwin, no /proc, no timeout, flock or setsid. In the system pass:
# the system's bash and the caller's PATH.
assert_hook_platform() {
  [ -s "$PROBE_OUT" ] || { echo "no hook ran (no probe)" >&2; return 1; }
  cat "$PROBE_OUT"
  local want_path
  if [[ $HOOK_PLATFORM == macos-like ]]; then
    [[ $(probe version) == 3.2.* ]]
    want_path=$(IFS=:; echo "$*")
    want_path=${want_path:+$want_path:}$FORGE_TEST_MACOS_BIN
    [ "$(probe path)" = "$want_path" ]
    [[ $(probe ostype) == darwin* ]]
    [ "$(probe proc)" != /proc ]
    [ ! -e "$(probe proc)" ]
    [ "$(probe missing)" = ' timeout flock setsid' ]
  else
    [ "$(probe version)" = "$SYSTEM_BASH_VERSION" ]
    [[ $(probe ostype) == linux* ]]
    [ "$(probe proc)" = unset ]
  fi
}

@test "the pass is what it says: in the Mac pass the stand-in is 3.2 and the test bodies keep the system's bash 5 and GNU tools" {
  [[ $SYSTEM_BASH_VERSION != 3.* ]]
  # A test body's `bash -c` is the system's in every pass, and so are its tools.
  [[ $(bash -c 'echo "$BASH_VERSION"') == "$SYSTEM_BASH_VERSION" ]]
  # shellcheck disable=SC2016 # the script's text
  printf 'echo "$BASH_VERSION"\n' >"$BATS_TEST_TMPDIR/not-a-hook.sh"
  [ "$(bash "$BATS_TEST_TMPDIR/not-a-hook.sh")" = "$SYSTEM_BASH_VERSION" ]
  sed --version | grep -q GNU
  if [[ $HOOK_PLATFORM == macos-like ]]; then
    # shellcheck disable=SC2016 # for the hooks' bash to expand
    [[ $("$HOOK_BASH" -c 'echo "$BASH_VERSION"') == 3.2.* ]]
    [ "$(command -v bash)" = "$FORGE_TEST_SHIM/bash" ]
    [ ! -e "$FORGE_TEST_MACOS_BIN/timeout" ] && [ ! -e "$FORGE_TEST_MACOS_BIN/flock" ] && [ ! -e "$FORGE_TEST_MACOS_BIN/setsid" ]
    ! "$FORGE_TEST_MACOS_BIN/sed" --version >/dev/null 2>&1   # FreeBSD's sed has no --version
    [ "$SPOOL_RECORD_MAX" -eq 1000 ]
  else
    [ "$HOOK_PLATFORM" = system ]
    [ "$HOOK_BASH" = "$(command -v bash)" ]
    [ "$SPOOL_RECORD_MAX" -eq 4000 ]
  fi
}

@test "bash HOOK, the hook by its shebang, and hook_run: the pass's bash and PATH" {
  BASH_ENV=$PROBE hook_run "$REPO" bash "$EVENT_HOOK" PostToolUse <"$PAYLOADS/post-tool-use-bash.json"
  assert_promise
  assert_hook_platform
  [ "$(probe zero)" = "$EVENT_HOOK" ]
  fresh_probe
  BASH_ENV=$PROBE hook_run "$REPO" "$STOP_HOOK" <"$PAYLOADS/stop.json"
  assert_promise
  assert_hook_platform
  [ "$(probe zero)" = "$STOP_HOOK" ]
  if [[ $HOOK_PLATFORM == system ]]; then [ "$(probe path)" = "$PATH" ]; fi
}

@test "a test's fake tools first on PATH stay first, and in the Mac pass are followed by the stand-in's tools alone" {
  fake=$BATS_TEST_TMPDIR/fake-bin
  other=$BATS_TEST_TMPDIR/other-bin
  mkdir -p "$fake" "$other"
  BASH_ENV=$PROBE PATH="$fake:$other:$PATH" hook_run "$REPO" bash "$STOP_HOOK" <"$PAYLOADS/stop.json"
  assert_promise
  assert_hook_platform "$fake" "$other"
  if [[ $HOOK_PLATFORM == system ]]; then [ "$(probe path)" = "$fake:$other:$PATH" ]; fi
  # Started from a subshell that execs it, as the SIGKILL tests do.
  fresh_probe
  (cd "$REPO" && BASH_ENV=$PROBE PATH="$fake:$PATH" exec bash "$STOP_HOOK" <"$PAYLOADS/stop.json" >/dev/null 2>&1) &
  wait $!
  assert_hook_platform "$fake"
}

@test "path_without and path_without_node: the hook's tools but the named ones, in the pass's bash" {
  nonode=$(path_without_node)
  [ ! -e "$nonode/node" ]
  BASH_ENV=$PROBE PATH=$nonode hook_run "$REPO" "$nonode/bash" "$EVENT_HOOK" PostToolUse <"$PAYLOADS/post-tool-use-bash.json"
  assert_promise
  cat "$PROBE_OUT"
  [ "$(probe path)" = "$nonode" ]
  no_flock=$(path_without flock)
  [ ! -e "$no_flock/flock" ]
  fresh_probe
  BASH_ENV=$PROBE PATH=$no_flock hook_run "$REPO" bash "$STOP_HOOK" <"$PAYLOADS/stop.json"
  assert_promise
  [ "$(probe path)" = "$no_flock" ]
  if [[ $HOOK_PLATFORM == macos-like ]]; then
    # Built from the stand-in: its bash, FreeBSD's tools, no GNU-only ones.
    [[ $(probe version) == 3.2.* ]]
    [ "$(readlink -f "$no_flock/sed")" = "$(readlink -f "$FORGE_TEST_MACOS_BIN/sed")" ]
    [ ! -e "$no_flock/timeout" ] && [ ! -e "$nonode/timeout" ]
    [ -x "$nonode/perl" ] && [ -x "$nonode/date" ]
    [[ $(probe ostype) == darwin* ]]
    [ ! -e "$(probe proc)" ]
  else
    [ "$(probe version)" = "$SYSTEM_BASH_VERSION" ]
  fi
}

@test "a hook started by another program (timeout, a test's bash -c, node) is still the pass's" {
  BASH_ENV=$PROBE hook_run "$REPO" timeout 20 bash "$EVENT_HOOK" PostToolUse <"$PAYLOADS/post-tool-use-bash.json"
  assert_promise
  assert_hook_platform
  fresh_probe
  # shellcheck disable=SC2016 # $0 is the inner bash's
  BASH_ENV=$PROBE hook_run "$REPO" bash -c '[[ $BASH_VERSION == 5.* ]] || exit 7; bash "$0" PostToolUse' "$EVENT_HOOK" <"$PAYLOADS/post-tool-use-bash.json"
  assert_promise
  assert_hook_platform
  fresh_probe
  # As vitest does, with an environment of PATH and little else.
  # shellcheck disable=SC2016 # JavaScript
  (cd "$REPO" && node -e '
    const r = require("child_process").spawnSync("bash", [process.argv[1], "PostToolUse"], { env: { PATH: process.env.PATH, BASH_ENV: process.argv[2], PROBE_OUT: process.env.PROBE_OUT }, input: "{}" });
    process.exit(r.status === 0 && r.stdout.length === 0 ? 0 : 1);' "$EVENT_HOOK" "$PROBE")
  assert_hook_platform
}

@test "a vendored copy of the hooks and the hooks' encoders' check run in the pass's bash too" {
  (cd "$REPO" && forge_reflect install >/dev/null)
  vendored=$REPO/.claude/hooks/forge-reflect/reflect-stop-hook.sh
  [ -x "$vendored" ]
  BASH_ENV=$PROBE hook_run "$REPO" "$vendored" <"$PAYLOADS/stop.json"
  assert_promise
  assert_hook_platform
  [ "$(probe zero)" = "$vendored" ]
  fresh_probe
  # By the path text-encoding.bats gives it.
  BASH_ENV=$PROBE run bash "$BATS_TEST_DIRNAME/../helpers/text-encoding-check.bash" json 10 1
  assert_hook_platform
}

@test "the test's own fake programs get the test's tools (FAKE_SH), whatever PATH the hook gives them" {
  fake=$BATS_TEST_TMPDIR/fake
  mkdir -p "$fake"
  printf '%s\nsed --version | head -n 1 >"%s/sed-version"\ncommand -v timeout >"%s/timeout"\n' "$FAKE_SH" "$BATS_TEST_TMPDIR" "$BATS_TEST_TMPDIR" >"$fake/x" && chmod +x "$fake/x"
  PATH=$(hook_path) "$fake/x"
  grep -q GNU "$BATS_TEST_TMPDIR/sed-version"
  [ -s "$BATS_TEST_TMPDIR/timeout" ]
}

@test "hook_tool names what the hook finds: the stand-in's in the Mac pass, nothing for a tool a Mac lacks" {
  if [[ $HOOK_PLATFORM == macos-like ]]; then
    [ "$(hook_tool sed)" = "$FORGE_TEST_MACOS_BIN/sed" ]
    [ "$(hook_tool git)" = "$FORGE_TEST_MACOS_BIN/git" ]
    run hook_tool timeout
    [ "$status" -ne 0 ]
    run hook_tool flock
    [ "$status" -ne 0 ]
    ! hook_bash_at_least 4 0
  else
    [ "$(hook_tool sed)" = "$(command -v sed)" ]
    hook_bash_at_least 4 0
  fi
}

@test "every bats and vitest file that runs a hook is in the Mac pass, or named as left out with its reason" {
  cd "$KIT_ROOT"
  listed=$(node scripts/test-shell.mjs --list macos-like)
  excluded=$(node scripts/test-shell.mjs --list macos-like-excluded)
  [ -n "$listed" ]
  for file in $(grep -lE 'STOP_HOOK|EVENT_HOOK|reflect-(stop|event)-hook\.sh|hooks/lib|text-encoding-check' tests/bats/*.bats) \
    $(grep -lE "reflect-(stop|event)-hook|risk-table\.sh|hooks/lib|'hooks'" packages/*/test/*.test.ts); do
    grep -qxF "$file" <<<"$listed" || grep -qxF "$file" <<<"$excluded" || { echo "$file runs a hook and is not in the Mac pass (scripts/test-shell.mjs)" >&2; return 1; }
  done
  for file in $listed; do [ -f "$file" ]; done
}

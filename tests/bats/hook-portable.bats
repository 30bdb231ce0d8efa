#!/usr/bin/env bats
# The parts of lib/common.sh that differ by bash version or userland, run under the system bash
# and under the stock-Mac stand-in's bash 3.2 (its bin/ alone on PATH): the clock, the ISO date,
# the time limit without timeout(1), and the payload read.
# shellcheck disable=SC2016 # the scripts in single quotes run in the bash under test, not here

load ../helpers/common

setup() {
  MAC_BIN=$(node "$KIT_ROOT/scripts/macos-like.mjs")
  COMMON="$KIT_ROOT/hooks/lib/common.sh"
}

# in_bash WHICH SCRIPT: runs SCRIPT with lib/common.sh sourced, in the system bash (`system`) or the
# stand-in's 3.2 with only its bin/ on PATH (`mac`), or the stand-in without perl (`mac-no-perl`).
in_bash() {
  local which=$1 script=$2 path
  case $which in
    system) path=$PATH; bash_bin=$(command -v bash) ;;
    mac) path=$MAC_BIN; bash_bin=$MAC_BIN/bash ;;
    mac-no-perl) path=$(mac_without perl); bash_bin=$MAC_BIN/bash ;;
  esac
  PATH=$path "$bash_bin" -c "source '$COMMON' || exit 9; $script"
}

# mac_without TOOL: the stand-in's bin/ less TOOL.
mac_without() {
  local bin=$BATS_TEST_TMPDIR/mac-without-$1 file
  mkdir -p "$bin"
  for file in "$MAC_BIN"/*; do
    [[ ${file##*/} == "$1" ]] || ln -sf "$(readlink "$file")" "$bin/${file##*/}"
  done
  printf '%s' "$bin"
}

@test "the stand-in's bash is 3.2 and has no timeout, flock or setsid (else these tests prove nothing)" {
  run in_bash mac 'echo "$BASH_VERSION"; command -v timeout flock setsid || echo none'
  [ "$status" -eq 0 ]
  [[ ${lines[0]} == 3.2.* ]]
  [ "${lines[1]}" = none ]
}

@test "forge_now_iso gives node's ISO date for 2,000 instants and the calendar's edges, in bash 5 and 3.2" {
  node -e '
    const out = [];
    const edges = [0, 951782400, 951868799, 951868800, 1078012800, 4107542400, 4107628800, 4102444799];
    let x = 20251202;
    const next = () => (x = (x * 1103515245 + 12345) % 2147483648);
    for (const s of edges) out.push(s * 1e6 + 123456);
    while (out.length < 2000) out.push((next() % 4102444800) * 1e6 + (next() % 1e6));
    for (const us of out) {
      const iso = new Date(Math.floor(us / 1000)).toISOString().replace(/\.\d+Z$/, "." + String(us % 1e6).padStart(6, "0") + "Z");
      console.log(String(us).padStart(16, "0") + " " + iso);
    }' >"$BATS_TEST_TMPDIR/expected"
  for which in system mac; do
    in_bash "$which" 'while read -r us iso; do FORGE_NOW_US=$us; forge_now_iso; printf "%s %s\n" "$us" "$FORGE_NOW_ISO"; done' \
      <"$BATS_TEST_TMPDIR/expected" >"$BATS_TEST_TMPDIR/got-$which"
    diff "$BATS_TEST_TMPDIR/expected" "$BATS_TEST_TMPDIR/got-$which"
  done
}

@test "bash 3.2: forge_now names a spool file without a clock (16 zeros), forge_now_seconds asks date(1) for the second" {
  run in_bash mac 'forge_now; echo "$FORGE_NOW_US"; forge_now_seconds; echo "$FORGE_NOW_US"; echo "[$FORGE_NO_CLOCK]"'
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = 0000000000000000 ]
  [[ ${lines[1]} =~ ^[0-9]{10}000000$ ]]
  node -e 'if (Math.abs(Date.now() * 1000 - Number(process.argv[1])) > 5e6) process.exit(1)' "${lines[1]}"
  [ "${lines[2]}" = '[1]' ]
  # bash 5: both read EPOCHREALTIME, microseconds, rising.
  run in_bash system 'forge_now; a=$FORGE_NOW_US; forge_now_seconds; echo "$a $FORGE_NOW_US [$FORGE_NO_CLOCK]"'
  read -r a b coarse <<<"$output"
  [[ $a =~ ^[0-9]{16}$ && $b =~ ^[0-9]{16}$ ]]
  ((10#$b >= 10#$a))
  [ "$coarse" = '[]' ]
}

@test "bash 3.2, the real event hook: events in a row get their times to the microsecond, rising, from their files" {
  make_repo "$BATS_TEST_TMPDIR/repo"
  cd "$BATS_TEST_TMPDIR/repo"
  local i
  for i in 1 2 3 4 5; do
    printf '{"session_id":"s","hook_event_name":"PostToolUse","tool_name":"Bash","n":%s}' "$i" |
      PATH=$MAC_BIN REFLECTION_MODE=solo FORGE_PROC_ROOT=/nonexistent "$MAC_BIN/bash" "$KIT_ROOT/hooks/reflect-event-hook.sh" PostToolUse claude-code
  done
  # Each a file of its own named with 16 zeros, its envelope saying whose clock decides.
  [ "$(find .forge/spool -name '0000000000000000-*.event' | wc -l | tr -d ' ')" -eq 5 ]
  [ ! -e .forge/spool/events.log ]
  grep -q '"clock":"file"' .forge/spool/0000000000000000-*.event
  forge_reflect events --json >"$BATS_TEST_TMPDIR/events.json"
  node -e '
    const doc = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
    const events = (doc.events ?? doc).filter((e) => e.type !== undefined);
    if (events.length !== 5) throw new Error("events: " + events.length);
    const byN = [...events].sort((x, y) => x.payload.n - y.payload.n);
    const us = byN.map((e) => Number(e.id.slice(0, 16)));
    for (let i = 0; i < 5; i++) {
      if (!(us[i] > 1.5e15) || Math.abs(Date.now() * 1000 - us[i]) > 60e6) throw new Error("not a time now: " + byN[i].id);
      if (i > 0 && !(us[i] > us[i - 1])) throw new Error("not rising in the order written: " + byN.map((e) => e.id));
      if (!byN[i].ts.endsWith(String(us[i] % 1e6).padStart(6, "0") + "Z")) throw new Error("ts and id disagree: " + byN[i].ts + " " + byN[i].id);
    }
    if (us.every((u) => u % 1e6 === 0)) throw new Error("whole seconds only");' "$BATS_TEST_TMPDIR/events.json"
}

@test "bash 3.2, no timeout(1): forge_bounded ends a hung command in time, keeps its stdin and status, leaves no process" {
  run in_bash mac 'forge_bounded 5 cat; echo "rc=$?"' <<<'through stdin'
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = 'through stdin' ]
  [ "${lines[1]}" = rc=0 ]
  run in_bash mac 'forge_bounded 5 sh -c "exit 3"; echo "rc=$?"'
  [ "${lines[0]}" = rc=3 ]
  # A command that never ends: killed after 1 s; its watchdog and the watchdog's sleep go too.
  # A command that never ends: killed after 1 s (its own pid, not a pattern that could match
  # someone else's sleep).
  run in_bash mac "start=\$SECONDS; forge_bounded 1 sh -c 'echo \$\$ >\"$BATS_TEST_TMPDIR/hung.pid\"; exec sleep 30' 2>/dev/null; rc=\$?; echo \"rc=\$rc took=\$((SECONDS - start))\"" 2>/dev/null
  [[ ${lines[0]} =~ ^rc=137\ took=[12]$ ]]
  run -1 kill -0 "$(cat "$BATS_TEST_TMPDIR/hung.pid")"
}

@test "bash 3.2: a payload is read whole at 4 KiB and past it (read -n), and a stdin that never closes is bounded" {
  local big
  big=$(node -e 'process.stdout.write("{\"k\":\"" + "x".repeat(9000) + "\"}")')
  cd "$BATS_TEST_TMPDIR"
  for payload in '{"a":1}' "$big"; do
    run in_bash mac "FORGE_STATE=\$PWD/state; mkdir -p state; forge_spool_open Stop test && tail -n +2 \"\$FORGE_SPOOL_FILE\" | cksum" <<<"$payload"
    [ "$status" -eq 0 ]
    [ "$output" = "$(printf '%s\n' "$payload" | cksum)" ]
  done
  mkfifo never
  sleep 60 >never &
  local writer=$!
  SECONDS=0
  run in_bash mac 'FORGE_STATE=$PWD/state; mkdir -p state; forge_spool_open Stop test <never; echo "rc=$?"'
  kill "$writer"
  [ "$output" = rc=0 ]
  ((SECONDS <= 9))
}

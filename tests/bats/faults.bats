#!/usr/bin/env bats
# Faults: a full disk during a Stop and during a drain, a read-only repo, 100,000 untracked files,
# and 16 hook processes at once beside a running drain. (A corrupt events.db: tests/bats/doctor.bats.
# The drain killed by SIGKILL: packages/forge-reflect/test/faults.test.ts.)

load ../helpers/common
load ../helpers/hooks

setup() {
  REPO="$BATS_TEST_TMPDIR/repo"
  make_repo "$REPO"
  export REFLECTION_MODE=solo
  unset FORGE_DIR REFLECTION_DIR REFLECTION_INPUT
  export FORGE_REFLECT_CLI=off
  command -v unshare >/dev/null
}

# in_ns SCRIPT: runs SCRIPT (bash) in $REPO inside a user+mount namespace; sets HOOK_STATUS/HOOK_STDOUT.
in_ns() {
  HOOK_STATUS=0
  # shellcheck disable=SC2034 # read by assert_promise
  HOOK_STDOUT=$(cd "$REPO" && STOP_HOOK=$STOP_HOOK EVENT_HOOK=$EVENT_HOOK PAYLOADS=$PAYLOADS CLI=$CLI unshare -rm bash -c "$1") || HOOK_STATUS=$?
}

@test "disk full during a Stop: exit 0, empty stdout, no partial sidecar or temp file, self-report kept" {
  # shellcheck disable=SC2016 # expanded by the inner bash
  in_ns '
    mkdir -p .forge && mount -t tmpfs -o size=64k tmpfs .forge || exit 3
    echo "{\"confidence\":0.5,\"most_likely_wrong\":{\"surface\":\"none\",\"description\":\"x\"},\"known_not_in_diff\":null}" >.forge/reflection-input.json
    mkdir -p src && for i in $(seq 300); do echo x >"src/file-with-a-rather-long-name-$i.ts"; done
    head -c 40000 /dev/zero >.forge/filler 2>/dev/null
    for i in 1 2 3; do out=$(bash "$STOP_HOOK" <"$PAYLOADS/stop.json") || exit 4; [ -z "$out" ] || exit 5; done
    # every sidecar present is complete JSON; no temp files; the self-report is somewhere
    for f in .forge/reflections/*.reflection.json; do [ -e "$f" ] || continue; node -e "JSON.parse(require(\"fs\").readFileSync(process.argv[1]))" "$f" || exit 6; done
    [ -z "$(find .forge -name ".tmp-*")" ] || exit 7
    [ -n "$(find .forge -name "*input*.json")" ] || exit 8
    df -k .forge | tail -1
  '
  echo "status $HOOK_STATUS: $HOOK_STDOUT"
  [ "$HOOK_STATUS" -eq 0 ]
}

@test "disk full during an event: exit 0, empty stdout, and every .event left is whole (no file short of its bytes)" {
  # A payload the spool log does not take (it holds a \x1e): each event is a file of its own.
  { printf '{"session_id":"s1","x":"\036","pad":"'; head -c 1300 /dev/zero | tr '\0' p; printf '"}'; } >"$BATS_TEST_TMPDIR/own-file"
  # shellcheck disable=SC2016 # expanded by the inner bash
  P=$BATS_TEST_TMPDIR/own-file in_ns '
    mkdir -p .forge && mount -t tmpfs -o size=64k tmpfs .forge || exit 3
    bash "$EVENT_HOOK" PostToolUse <"$P" || exit 4
    [ ! -e .forge/spool/events.log ] || exit 12
    head -c 50000 /dev/zero >.forge/filler 2>/dev/null
    # the disk fills up part way through these: each event is then whole or not there at all
    for i in $(seq 30); do out=$(bash "$EVENT_HOOK" PostToolUse <"$P") || exit 5; [ -z "$out" ] || exit 6; done
    df -k .forge | tail -1 | grep -q " 100% " || exit 7      # the disk did fill up
    want=$(wc -c <"$P")
    n=0
    for f in .forge/spool/*.event; do
      [ "$(tail -n +2 "$f" | wc -c)" -eq "$want" ] || { echo "short: $f"; exit 8; }
      head -1 "$f" | grep -q "\"bytes\":$want}" || exit 9
      n=$((n + 1))
    done
    [ -z "$(find .forge -name ".tmp-*")" ] || exit 10
    [ "$n" -ge 2 ] && [ "$n" -lt 31 ] || { echo "n=$n"; exit 11; }
    echo "events=$n"
  '
  echo "status $HOOK_STATUS: $HOOK_STDOUT"
  [ "$HOOK_STATUS" -eq 0 ]
}

@test "disk full during single-line events (records of the spool log): each record whole or cut where the disk filled; with space again each whole one is logged once, each cut one rejected with its reason" {
  # Without a clock (bash 3.2: HOOK_CLOCK, tests/helpers/hooks.bash) there are no records: each event
  # is a file of its own, whole or not there at all, and each whole one is logged once, dated by
  # the time its file was written.
  # shellcheck disable=SC2016 # expanded by the inner bash
  OUT=$BATS_TEST_TMPDIR in_ns '
    mkdir -p .forge && mount -t tmpfs -o size=2m tmpfs .forge || exit 3
    pad=$(printf "p%.0s" $(seq 250))
    ev() {
      printf "{\"session_id\":\"disk\",\"hook_event_name\":\"PostToolUse\",\"tool_name\":\"Bash\",\"tool_use_id\":\"t-%04d\",\"pad\":\"%s\"}" "$1" "$pad" |
        bash "$EVENT_HOOK" PostToolUse
    }
    ev 0 || exit 4
    # fill the disk but for three pages, which the log then fills part way through these events
    head -c 12288 /dev/zero >.forge/slack
    head -c $((4096 * 1024)) /dev/zero >.forge/filler 2>/dev/null
    rm .forge/slack
    for i in $(seq 60); do out=$(ev "$i") || exit 5; [ -z "$out" ] || exit 6; done
    df -k .forge | tail -1 | grep -q " 100% " || exit 7      # the disk did fill up
    if [ -n "$HOOK_CLOCK" ]; then cp .forge/spool/events.log "$OUT/full.log" || exit 8; fi
    cp -a .forge/spool "$OUT/spool-full" || exit 8   # the files with their times of writing
    ls -A .forge/spool >"$OUT/spool-when-full"
    # space again: one more event, then a drain
    rm -f .forge/filler
    ev 61 || exit 9
    node "$CLI" ingest --json >"$OUT/ingest.json" 2>"$OUT/ingest.err" || exit 10
    node "$CLI" events --json --limit 1000 >"$OUT/events.json" || exit 11
    cp -a .forge/spool "$OUT/spool" || exit 12
  '
  echo "status $HOOK_STATUS: $HOOK_STDOUT"
  [ "$HOOK_STATUS" -eq 0 ]
  cd "$BATS_TEST_TMPDIR"
  if [[ -z $HOOK_CLOCK ]]; then
    disk_full_files
    return
  fi
  [ "$(cat spool-when-full)" = events.log ]   # single-line events: records only, no file, no temp file
  # Every piece of the log as the full disk left it is a whole record, or one cut short where the
  # next begins or the log ends (the extractor fails on anything else).
  node "$SPOOL_RECORDS" scan rec full.log >scan.out
  cat scan.out
  whole=$(grep -c '^whole ' scan.out || true)
  torn=$(grep -c '^torn ' scan.out || true)
  [ "$whole" -ge 2 ]
  [ "$whole" -lt 61 ]
  [ "$torn" -le 1 ]   # a full disk cuts one write short; those after it write nothing
  # The whole records are events 0, 1, 2, ... in order, each payload byte for byte.
  i=0
  while read -r kind _ id; do
    [ "$kind" = whole ] || continue
    printf '{"session_id":"disk","hook_event_name":"PostToolUse","tool_name":"Bash","tool_use_id":"t-%04d","pad":"%s"}' "$i" "$(printf 'p%.0s' $(seq 250))" |
      cmp - <(tail -n +2 "rec/$id.event")
    i=$((i + 1))
  done <scan.out
  # After the drain: the log was sealed into one segment, at least as long as the log was when full,
  # and every byte of it, all committed (logged or kept in rejected/), overwritten with zeros.
  seg=$(find spool -maxdepth 1 -name '*.seg')
  [ "$(printf '%s' "$seg" | grep -c .)" -eq 1 ]
  [ "$(wc -c <"$seg")" -ge "$(wc -c <full.log)" ]
  [ "$(tr -d '\000' <"$seg" | wc -c)" -eq 0 ]
  [ -z "$(find spool -maxdepth 1 \( -name '*.event' -o -name '.tmp-*' -o -name events.log \))" ]
  # Each whole record logged once, the one after the disk had room again too; nothing else.
  [ "$(jget ingest.json drained)" -eq $((whole + 1)) ]
  [ "$(jget ingest.json rejected)" -eq "$torn" ]
  [ "$(jget ingest.json in_flight)" -eq 0 ]
  # shellcheck disable=SC2016
  node -e '
    const fs = require("fs"), rows = JSON.parse(fs.readFileSync("events.json", "utf8"));
    const want = fs.readFileSync("scan.out", "utf8").split("\n").filter((l) => l.startsWith("whole ")).map((l) => l.split(" ")[2]);
    const ids = new Set(rows.map((r) => r.id));
    if (rows.length !== want.length + 1 || ids.size !== rows.length) throw new Error(`${rows.length} rows, ${ids.size} ids, want ${want.length + 1}`);
    for (const id of want) if (!ids.has(id)) throw new Error(`whole record ${id} not logged`);
    const tools = rows.map((r) => r.tool_use_id).sort();
    const expect = [...want.map((_, i) => `t-${String(i).padStart(4, "0")}`), "t-0061"].sort();
    if (tools.join() !== expect.join()) throw new Error(`tool_use_ids ${tools.join()} want ${expect.join()}`);'
  # The record cut short is kept, byte for byte, in rejected/ with its reason; nothing else is there.
  if [ "$torn" -eq 1 ]; then
    read -r _ offset length < <(grep '^torn ' scan.out)
    [ "$(find spool/rejected -type f | wc -l)" -eq 2 ]
    kept=spool/rejected/${seg##*/}-at-$offset.event
    cmp <(tail -c +$((offset + 1)) full.log | head -c "$length") "$kept"
    [[ "$(cat "${kept%.event}.reason")" =~ ^[0-9]{4}-[0-9]{2}-[0-9]{2}T[^\ ]+\ .+ ]]
    [ "$(wc -l <"${kept%.event}.reason")" -eq 1 ]
  else
    [ ! -e spool/rejected ] || [ -z "$(ls -A spool/rejected)" ]
  fi
}

# The single-line events of the test above, spooled without a clock: files of their own.
disk_full_files() {
  # When the disk was full: files of their own only (no log, no temp file), each whole: exactly the
  # bytes its envelope names, and events 0, 1, 2, ... in the order written, byte for byte.
  [ "$(grep -cvxE '0{16}-[0-9]+-[0-9a-f]{8}\.event' spool-when-full)" -eq 0 ]
  mapfile -t files < <(spool_files "$BATS_TEST_TMPDIR/spool-full")
  whole=${#files[@]}
  echo "files=$whole"
  [ "$whole" -ge 2 ]
  [ "$whole" -lt 61 ]
  for i in "${!files[@]}"; do
    assert_spool_name "${files[i]}"
    printf '{"session_id":"disk","hook_event_name":"PostToolUse","tool_name":"Bash","tool_use_id":"t-%04d","pad":"%s"}' "$i" "$(printf 'p%.0s' $(seq 250))" >want
    cmp want <(payload_of "${files[i]}")
    head -n 1 "${files[i]}" | grep -q ",\"bytes\":$(wc -c <want)}\$"
  done
  # The ids the drain is to store: each name with its time of writing in place of the zeros.
  spool_ids "${files[@]}" >want-ids
  # After the drain: nothing left in the spool, nothing rejected; each whole file logged once, the
  # one after the disk had room again too, at times that never go back in the order written.
  [ -z "$(find spool -maxdepth 1 \( -name '*.event' -o -name '.tmp-*' -o -name events.log -o -name '*.seg' \))" ]
  [ ! -e spool/rejected ] || [ -z "$(ls -A spool/rejected)" ]
  [ "$(jget ingest.json drained)" -eq $((whole + 1)) ]
  [ "$(jget ingest.json rejected)" -eq 0 ]
  [ "$(jget ingest.json in_flight)" -eq 0 ]
  # shellcheck disable=SC2016
  node -e '
    const fs = require("fs"), rows = JSON.parse(fs.readFileSync("events.json", "utf8"));
    const want = fs.readFileSync("want-ids", "utf8").split("\n").filter(Boolean);
    const byTool = rows.slice().sort((a, b) => (a.tool_use_id < b.tool_use_id ? -1 : 1));
    const expect = [...want.map((_, i) => `t-${String(i).padStart(4, "0")}`), "t-0061"];
    if (byTool.map((r) => r.tool_use_id).join() !== expect.join()) throw new Error(`tool_use_ids ${byTool.map((r) => r.tool_use_id).join()} want ${expect.join()}`);
    const ids = byTool.map((r) => r.id);
    if (ids.slice(0, -1).join() !== want.join()) throw new Error(`ids ${ids.join()} want ${want.join()}`);
    for (let i = 1; i < ids.length; i++) if (ids[i].slice(0, 16) < ids[i - 1].slice(0, 16) || ids[i].startsWith("0000000000000000")) throw new Error(`times go back: ${ids.join()}`);'
}

@test "disk full during a drain: the CLI says so, keeps the spool; with space again every event is logged once" {
  # Once with a file per event (a payload whose record would pass 4,000 bytes), once with records.
  { printf '{"session_id":"s1","hook_event_name":"PostToolUse","pad":"'; head -c 3950 /dev/zero | tr '\0' p; printf '"}'; } >"$BATS_TEST_TMPDIR/own-file"
  # shellcheck disable=SC2016
  P=$BATS_TEST_TMPDIR/own-file in_ns '
    for payload in "$P" "$PAYLOADS/post-tool-use-bash.json"; do
      mkdir -p .forge && mount -t tmpfs -o size=2m tmpfs .forge || exit 3
      for i in $(seq 120); do bash "$EVENT_HOOK" PostToolUse <"$payload"; done
      files=$(ls .forge/spool | grep -c "\.event$")
      records=0
      [ ! -f .forge/spool/events.log ] || records=$(tr -cd "\036" <.forge/spool/events.log | wc -c)
      before=$((files + records))
      [ "$before" -eq 120 ] || { echo "spooled $files files and $records records"; exit 9; }
      head -c $((4096 * 1024)) /dev/zero >.forge/filler 2>/dev/null
      node "$CLI" ingest >/dev/null 2>.forge-err; rc=$?
      ! grep -q "    at " .forge-err || exit 5               # one line, no stack trace
      if [ "$rc" -ne 0 ]; then                              # a failure is reported, and the spool kept
        [ "$(ls .forge/spool | grep -c "\.event$")" -eq "$files" ] || exit 4
        [ "$records" -eq 0 ] || [ -n "$(find .forge/spool -maxdepth 1 \( -name events.log -o -name "*.seg" \) -size +0)" ] || exit 4
      fi
      rm -f .forge/filler
      node "$CLI" ingest >/dev/null 2>&1 || exit 6
      [ "$(ls .forge/spool | grep -c "\.event$")" -eq 0 ] || exit 7
      n=$(node "$CLI" events --json --limit 100000 | node -e "const a=JSON.parse(require(\"fs\").readFileSync(0,\"utf8\"));const r=Array.isArray(a)?a:a.events;console.log(new Set(r.map(e=>e.id)).size+\" \"+r.length)")
      [ "$n" = "$before $before" ] || { echo "want $before got $n"; exit 8; }
      echo "files=$files records=$records rc=$rc err=$(head -c 200 .forge-err)"
      umount .forge && rm -rf .forge .forge-err || exit 10
    done
  '
  echo "status $HOOK_STATUS: $HOOK_STDOUT"
  [ "$HOOK_STATUS" -eq 0 ]
}

@test "a read-only repo: both hooks exit 0 with empty stdout and write nothing" {
  # shellcheck disable=SC2016
  in_ns '
    mount --bind . . && mount -o remount,bind,ro . || exit 3
    for ev in SessionStart PostToolUse; do out=$(bash "$EVENT_HOOK" "$ev" <"$PAYLOADS/post-tool-use-bash.json") || exit 4; [ -z "$out" ] || exit 5; done
    out=$(bash "$STOP_HOOK" <"$PAYLOADS/stop.json") || exit 6; [ -z "$out" ] || exit 7
    [ ! -e .forge ] || exit 8
  '
  [ "$HOOK_STATUS" -eq 0 ]
}

@test "100,000 untracked files: the Stop hook finishes within 30 s with node, and without node caps files_changed" {
  # shellcheck disable=SC2016 # JavaScript template literals, not shell
  node -e 'const fs=require("fs");for(let d=0;d<100;d++){fs.mkdirSync(`${process.argv[1]}/d${d}`);for(let i=0;i<1000;i++)fs.writeFileSync(`${process.argv[1]}/d${d}/f${i}.txt`,"")}' "$REPO"
  mkdir -p "$REPO/src/auth" && echo x >"$REPO/src/auth/token.ts"
  start=$SECONDS
  hook_run "$REPO" bash "$STOP_HOOK" <"$PAYLOADS/stop.json"
  assert_promise
  [ $((SECONDS - start)) -lt 30 ]
  [ "$(jget "$(last_sidecar)" risk.surface)" = '"auth"' ]
  [ "$(node -e 'console.log(JSON.parse(require("fs").readFileSync(process.argv[1])).files_changed.length)' "$(last_sidecar)")" -eq 100001 ]
  start=$SECONDS
  PATH=$(path_without_node) hook_run "$REPO" bash "$STOP_HOOK" <"$PAYLOADS/stop.json"
  assert_promise
  [ $((SECONDS - start)) -lt 30 ]
  file=$(last_sidecar)
  [ "$(node -e 'console.log(JSON.parse(require("fs").readFileSync(process.argv[1])).files_changed.length)' "$file")" -eq 5000 ]
  [[ "$(jget "$file" risk.reason)" == *"only the first 5000 changed files"* ]]
  [ "$(jget "$file" provenance.degraded)" = true ]
}

@test "16 hook processes at once beside a running drain, 1,600 events: none lost, none doubled, no SQLITE_BUSY" {
  cd "$REPO"
  node "$CLI" ingest >/dev/null 2>&1 || true
  : >"$BATS_TEST_TMPDIR/drain.err"
  (
    while [ ! -e "$BATS_TEST_TMPDIR/done" ]; do node "$CLI" ingest >/dev/null 2>>"$BATS_TEST_TMPDIR/drain.err" || echo "drain exit $?" >>"$BATS_TEST_TMPDIR/drain.err"; done
  ) &
  drainer=$!
  pids=()
  for w in $(seq 16); do
    (
      for i in $(seq 100); do
        out=$(printf '{"session_id":"w%s","hook_event_name":"PostToolUse","tool_name":"Bash","tool_use_id":"t%s-%s"}' "$w" "$w" "$i" | bash "$EVENT_HOOK" PostToolUse) || exit 1
        [ -z "$out" ] || exit 1
      done
    ) &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p"; done
  touch "$BATS_TEST_TMPDIR/done"
  wait "$drainer"
  node "$CLI" ingest --json >"$BATS_TEST_TMPDIR/last-drain.json"
  [ ! -s "$BATS_TEST_TMPDIR/drain.err" ] || { cat "$BATS_TEST_TMPDIR/drain.err"; false; }
  [ -z "$(find .forge/spool -maxdepth 1 -name '*.event')" ]
  # Single-line events: records of the spool log, sealed by the drains while hooks appended; none
  # was cut or torn apart, and none is left half read.
  [ "$(jget "$BATS_TEST_TMPDIR/last-drain.json" in_flight)" = 0 ]
  [ "$(jget "$BATS_TEST_TMPDIR/last-drain.json" rejected)" = 0 ]
  [ ! -e .forge/spool/rejected ]
  counts=$(node "$CLI" events --json --limit 100000 | node -e 'const a=JSON.parse(require("fs").readFileSync(0,"utf8"));const r=Array.isArray(a)?a:a.events;const t=r.map(e=>e.tool_use_id);console.log(r.length, new Set(t).size)')
  [ "$counts" = "1600 1600" ]
}

#!/usr/bin/env bats
# The Phase-0 scripts from the shell: --help, flag errors (exit 2), unreadable input (exit 1),
# the kill condition on stderr before the report, empty input as a valid INCONCLUSIVE report.

load ../helpers/common

setup() {
  SCRATCH="$BATS_TEST_TMPDIR/work"
  mkdir -p "$SCRATCH"
  P1="$KIT_ROOT/scripts/analysis/reflect-calibration.sh"
  P2="$KIT_ROOT/scripts/analysis/reflect-git-history.sh"
  P3="$KIT_ROOT/scripts/analysis/reflect-board-history.sh"
  FIX="$KIT_ROOT/tests/fixtures/analysis"
}

@test "every script has --help with Usage and Requirements, exit 0" {
  for s in "$P1" "$P2" "$P3"; do
    run "$s" --help
    [ "$status" -eq 0 ]
    [[ "$output" == *"Usage:"* ]]
    [[ "$output" == *"Requirements:"* ]]
  done
}

@test "calibration: bad flags exit 2 with a clear line" {
  run --separate-stderr "$P1" --corpus "$FIX/corpus-small.jsonl" --high 1.5
  [ "$status" -eq 2 ]
  [[ "$stderr" == *"--high '1.5' is not a number from 0 to 1"* ]]
  run --separate-stderr "$P1" --corpus "$FIX/corpus-small.jsonl" --seed -1
  [ "$status" -eq 2 ]
  run --separate-stderr "$P1" --corpus "$FIX/corpus-small.jsonl" --format xml
  [ "$status" -eq 2 ]
  run --separate-stderr "$P1"
  [ "$status" -eq 2 ]
  [[ "$stderr" == *"--corpus"* ]]
  run --separate-stderr "$P1" --bogus
  [ "$status" -eq 2 ]
}

@test "calibration: a missing corpus exits 1 naming the path" {
  run --separate-stderr "$P1" --corpus "$SCRATCH/nope.jsonl"
  [ "$status" -eq 1 ]
  [[ "$stderr" == *"$SCRATCH/nope.jsonl"* ]]
}

@test "calibration: kill condition on stderr, JSON on stdout, bad rows reported with line numbers" {
  run --separate-stderr "$P1" --corpus "$FIX/corpus-small.jsonl" --bootstrap 100 --seed 3
  [ "$status" -eq 0 ]
  [[ "$stderr" == "Kill condition (pre-registered):"* ]]
  [[ "$output" == *'"verdict": "INCONCLUSIVE"'* ]]
  [[ "$output" == *'"line": 5'* ]]
  run --separate-stderr "$P1" --corpus "$FIX/corpus-small.jsonl" --bootstrap 100 --seed 3
  first=$output
  run --separate-stderr "$P1" --corpus "$FIX/corpus-small.jsonl" --bootstrap 100 --seed 3
  [ "$output" = "$first" ]
}

@test "calibration: an empty corpus from stdin is INCONCLUSIVE, exit 0" {
  run --separate-stderr bash -c "printf '' | '$P1' --corpus - --format markdown"
  [ "$status" -eq 0 ]
  [[ "$output" == *"**Verdict: INCONCLUSIVE** — the corpus is empty"* ]]
}

@test "git-history: unreadable --since exits 2 with an example; bad --window exits 2; missing repo exits 1" {
  make_repo "$SCRATCH/repo"
  run --separate-stderr "$P2" --repo "$SCRATCH/repo" --since 'not a date'
  [ "$status" -eq 2 ]
  [[ "$stderr" == *"--since 2025-01-01"* ]]
  run --separate-stderr "$P2" --repo "$SCRATCH/repo" --window 14
  [ "$status" -eq 2 ]
  run --separate-stderr "$P2" --repo "$SCRATCH/missing"
  [ "$status" -eq 1 ]
  [[ "$stderr" == *"$SCRATCH/missing"* ]]
}

@test "git-history: no commits in range is INCONCLUSIVE, exit 0; markdown works" {
  make_repo "$SCRATCH/repo"
  run --separate-stderr "$P2" --repo "$SCRATCH/repo" --since 2099-01-01 --format markdown
  [ "$status" -eq 0 ]
  [[ "$stderr" == "Kill condition (pre-registered):"* ]]
  [[ "$output" == *"**Verdict: INCONCLUSIVE** — no commits in range"* ]]
  run --separate-stderr "$P2" --repo "$SCRATCH/repo" --since "3 days ago"
  [ "$status" -eq 0 ]
  [[ "$output" == *'"analysis": "git-history"'* ]]
}

@test "git-history: --sample/--seed/--out write a sheet, --labels reads it back; a bad labels file exits 1 naming the row" {
  make_repo "$SCRATCH/repo"
  printf 'a = 1\nb = 2\n' >"$SCRATCH/repo/app.py"
  git -C "$SCRATCH/repo" add app.py
  GIT_AUTHOR_DATE='@1767225600 +0000' GIT_COMMITTER_DATE='@1767225600 +0000' git -C "$SCRATCH/repo" commit -q -m 'feat: app'
  printf 'a = 1\nb = 3\n' >"$SCRATCH/repo/app.py"
  GIT_AUTHOR_DATE='@1767312000 +0000' GIT_COMMITTER_DATE='@1767312000 +0000' git -C "$SCRATCH/repo" commit -qam 'fix: b'
  run --separate-stderr "$P2" --repo "$SCRATCH/repo" --sample 5
  [ "$status" -eq 2 ]
  [[ "$stderr" == *"--sample needs --out"* ]]
  run --separate-stderr "$P2" --repo "$SCRATCH/repo" --sample 5 --seed 3 --out "$SCRATCH/sheet.jsonl"
  [ "$status" -eq 0 ]
  [[ "$stderr" == *"wrote a labelling sheet of 1 signal(s)"* ]]
  [ "$(wc -l <"$SCRATCH/sheet.jsonl")" -eq 2 ]
  [[ "$(head -1 "$SCRATCH/sheet.jsonl")" == *'"sheet":"forge-reflect.p2-sheet.v1"'*'"seed":3'* ]]
  run --separate-stderr "$P2" --repo "$SCRATCH/repo" --labels "$SCRATCH/sheet.jsonl"
  [ "$status" -eq 0 ]
  [[ "$output" == *'"evidence": "labels"'* ]]
  sed -i 's/"failure":null/"failure":"maybe"/' "$SCRATCH/sheet.jsonl"
  run --separate-stderr "$P2" --repo "$SCRATCH/repo" --labels "$SCRATCH/sheet.jsonl"
  [ "$status" -eq 1 ]
  [[ "$stderr" == *"labels line 2: human.failure \"maybe\" is not true, false or null"* ]]
}

@test "board-history: needs an input; missing file exits 1; fixtures give a report" {
  run --separate-stderr "$P3"
  [ "$status" -eq 2 ]
  run --separate-stderr "$P3" --board "$SCRATCH/none.json"
  [ "$status" -eq 1 ]
  [[ "$stderr" == *"$SCRATCH/none.json"* ]]
  run --separate-stderr "$P3" --board "$FIX/board-generic.jsonl" --window 30x
  [ "$status" -eq 2 ]
  run --separate-stderr "$P3" --board "$FIX/github-issues.json" --board "$FIX/github-issue-events.json"
  [ "$status" -eq 0 ]
  [[ "$stderr" == "Kill condition (pre-registered):"* ]]
  [[ "$output" == *'"with_signal": 2'* ]]
}

#!/usr/bin/env bats
# The quick fuzz run (scripts/fuzz.mjs --quick): 500 random and mutated payloads through the event
# hook and 50 Stop runs with fuzzed self-reports, drained in batches; every invariant checked on
# every case. The long run: `npm run fuzz` (5,000 cases; --cases N --seed S to vary). The hooks'
# bash decides how events are spooled (HOOK_CLOCK, tests/helpers/hooks.bash), and the run says which
# way it checked them: "clock":"hook" (ids from the hook's clock), or "file" (bash 3.2: every event
# a file of its own, logged under its time of writing).

load ../helpers/common
load ../helpers/hooks

@test "quick fuzz: exit 0, empty stdout, nothing outside the state dir, every event logged or rejected with a reason" {
  run node "$KIT_ROOT/scripts/fuzz.mjs" --quick --seed 20251122
  echo "$output"
  [ "$status" -eq 0 ]
  [[ $output == *'"events_lost":0'* ]]
  if [[ -n $HOOK_CLOCK ]]; then
    [[ $output == *'{"seed":20251122,"clock":"hook",'* ]]
  else
    [[ $output == *'{"seed":20251122,"clock":"file",'* ]]
  fi
  [[ ! $output =~ \"spooled\":0, ]]
}

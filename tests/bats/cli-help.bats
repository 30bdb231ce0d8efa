#!/usr/bin/env bats
# Every command the CLI lists has --help with at least one example, and exits 0 for it.

load ../helpers/common

@test "every listed command has --help with an example" {
  run forge_reflect --help
  [ "$status" -eq 0 ]
  commands=$(printf '%s\n' "$output" | sed -n 's/^  forge-reflect \([a-z-]*\).*/\1/p')
  [ "$(printf '%s\n' "$commands" | wc -l)" -ge 12 ]
  for command in $commands; do
    run forge_reflect "$command" --help
    [ "$status" -eq 0 ] || { echo "$command --help exited $status" >&2; return 1; }
    [[ "$output" == *"Examples:"* ]] || { echo "$command --help has no example" >&2; return 1; }
  done
}

@test "output has no colour when stdout is not a terminal, and none with NO_COLOR" {
  run forge_reflect risk src/auth/token.ts
  [[ "$output" != *$'\e['* ]]
  NO_COLOR=1 run forge_reflect risk src/auth/token.ts
  [[ "$output" != *$'\e['* ]]
}

@test "usage errors are one line that names the problem: unknown command, invalid choice" {
  run --separate-stderr forge_reflect frobnicate
  [ "$status" -eq 2 ]
  [[ "$(printf '%s\n' "$stderr" | head -n 1)" == 'forge-reflect: unknown command "frobnicate"' ]]
  run --separate-stderr forge_reflect bogus
  [ "$status" -eq 2 ]
  [[ "$(printf '%s\n' "$stderr" | head -n 1)" == 'forge-reflect: unknown command "bogus"; did you mean '*'?' ]]
  run --separate-stderr forge_reflect metrics --days 5
  [ "$status" -eq 2 ]
  [[ "$(printf '%s\n' "$stderr" | head -n 1)" == "forge-reflect: invalid value: Argument: days, Given: 5, Choices: 7, 30, 90" ]]
  [ "$(printf '%s\n' "$stderr" | wc -l)" -eq 2 ]
}

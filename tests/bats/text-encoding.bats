#!/usr/bin/env bats
# The hooks' two text encoders against the full versions they shortcut or replaced,
# over random texts (tests/helpers/text-encoding-check.bash, run as its own bash: the hooks' bash,
# bash 3.2 in the stock-Mac pass).

load ../helpers/common
load ../helpers/hooks

CHECK="$BATS_TEST_DIRNAME/../helpers/text-encoding-check.bash"

@test "forge_json_string gives what the full escaper gives, for 3,000 random texts of every kind" {
  run bash "$CHECK" json 3000 12
  [ "$status" -eq 0 ]
  read -r word plain escaped controls version <<<"$output"
  [ "$word" = ok ]
  [ "$version" = "$(hook_bash_version)" ]
  # Every branch was taken: nothing to escape, only \ or ", control characters.
  ((plain > 300 && escaped > 300 && controls > 300))
}

@test "forge_task_key gives what the byte-by-byte version gave, for 3,000 random task refs, long ones cut at 200" {
  run bash "$CHECK" task 3000 34
  [ "$status" -eq 0 ]
  read -r word kept encoded cut version <<<"$output"
  [ "$word" = ok ]
  [ "$version" = "$(hook_bash_version)" ]
  ((kept > 300 && encoded > 1000 && cut > 100))
}

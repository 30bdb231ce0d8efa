#!/usr/bin/env bats
# Every hook file parses in bash 3.2 (a stock Mac's bash): `bash -n` with the stand-in's bash, in
# every pass. ShellCheck's --shell=bash cannot see what 3.2 lacks (coproc is no keyword there; it is
# a command name, and `coproc NAME { ...; }` a syntax error). What 3.2 rejects only when it runs a
# line (${x,,}, {fd}> redirections, read -N) is for the hook suites of the stock-Mac pass
# (scripts/test-shell.mjs).

load ../helpers/common

setup() {
  # The stand-in must be there: a machine without it fails here, it does not skip.
  MAC_BIN=$(node "$KIT_ROOT/scripts/macos-like.mjs")
  MAC_BASH=$MAC_BIN/bash
}

# hook_files: every file of hooks/ and hooks/lib/, one path a line.
hook_files() {
  find "$KIT_ROOT/hooks" -type f | LC_ALL=C sort
}

@test "the parser is bash 3.2, and bash -n there rejects what 3.2 cannot parse (else the next test proves nothing)" {
  # shellcheck disable=SC2016 # for the stand-in's bash to expand
  [[ $("$MAC_BASH" -c 'echo "$BASH_VERSION"') == 3.2.* ]]
  printf 'coproc HELPER { cat; }\n' >"$BATS_TEST_TMPDIR/coproc.sh"
  run "$MAC_BASH" -n "$BATS_TEST_TMPDIR/coproc.sh"
  [ "$status" -ne 0 ]
  [[ $output == *'syntax error'* ]]
  # The same file parses in the system's bash: the difference is the version's.
  bash -n "$BATS_TEST_TMPDIR/coproc.sh"
  # shellcheck disable=SC2016 # a script's text
  printf 'x=1\n[[ $x == 1 ]] && echo "$x"\n' >"$BATS_TEST_TMPDIR/fine.sh"
  "$MAC_BASH" -n "$BATS_TEST_TMPDIR/fine.sh"
}

@test "every shell file in hooks/ and hooks/lib/ (the generated risk table too) parses in bash 3.2" {
  [ -f "$KIT_ROOT/hooks/lib/risk-table.sh" ] || { echo "hooks/lib/risk-table.sh is missing: npm run build" >&2; return 1; }
  checked=0 failed=0
  while IFS= read -r file; do
    name=${file#"$KIT_ROOT"/}
    case $name in
      *.sh) ;;
      *.cjs | *.js | *.json | *.md) continue ;;
      *)
        # A file of another kind must say what it is: a shell script without .sh is parsed too.
        if head -n 1 "$file" | grep -qE '^#!.*\b(ba)?sh\b'; then :; else
          echo "$name: neither a shell file nor a known other kind" >&2
          failed=$((failed + 1))
          continue
        fi
        ;;
    esac
    checked=$((checked + 1))
    if ! out=$("$MAC_BASH" -n "$file" 2>&1); then
      printf 'bash 3.2 cannot parse %s:\n%s\n' "$name" "$out" >&2
      failed=$((failed + 1))
    fi
  done < <(hook_files)
  echo "parsed $checked files, $failed failed" >&2
  [ "$failed" -eq 0 ]
  # The two hooks, lib/common.sh, lib/snapshot.sh and lib/risk-table.sh at least.
  [ "$checked" -ge 5 ]
}

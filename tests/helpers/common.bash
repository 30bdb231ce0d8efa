# shellcheck shell=bash
# Shared setup for the bats suites: the kit's root, the CLI, and a scratch folder per test.
bats_require_minimum_version 1.5.0


KIT_ROOT="$(cd "$BATS_TEST_DIRNAME/../.." && pwd)"
export KIT_ROOT
CLI="$KIT_ROOT/packages/forge-reflect/bin/forge-reflect.js"
export CLI

forge_reflect() {
  node "$CLI" "$@"
}

# A git repository with one commit, at $1.
make_repo() {
  local dir=$1
  mkdir -p "$dir"
  git -C "$dir" init -q -b main
  git -C "$dir" config user.email test@example.com
  git -C "$dir" config user.name test
  git -C "$dir" config commit.gpgsign false
  printf 'hello\n' >"$dir/README.md"
  git -C "$dir" add README.md
  git -C "$dir" commit -q -m 'initial commit'
}

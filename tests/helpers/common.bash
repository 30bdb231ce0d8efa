# shellcheck shell=bash
# Shared setup for the bats suites: the kit's root, the CLI, and a scratch folder per test.
bats_require_minimum_version 1.5.0


KIT_ROOT="$(cd "$BATS_TEST_DIRNAME/../.." && pwd)"
export KIT_ROOT

# The pass (scripts/test-shell.mjs): `system`, or `macos-like`, where every hook runs as on a stock
# Mac (the stand-in's bash 3.2, its bin/ alone on the hook's PATH) and the tests as always.
HOOK_PLATFORM=${FORGE_TEST_PLATFORM:-system}
case $HOOK_PLATFORM in
  system) ;;
  macos-like)
    if [[ -z ${FORGE_TEST_SHIM:-} || $(command -v bash) != "$FORGE_TEST_SHIM/bash" || ! -x ${FORGE_TEST_MACOS_BIN:-}/bash ]]; then
      echo "FORGE_TEST_PLATFORM=macos-like, but the hooks would not run as on a Mac: run node scripts/test-shell.mjs --platform macos-like FILE" >&2
      return 1
    fi
    ;;
  *)
    echo "FORGE_TEST_PLATFORM is system or macos-like, not '$HOOK_PLATFORM'" >&2
    return 1
    ;;
esac
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

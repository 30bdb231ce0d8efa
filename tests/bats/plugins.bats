#!/usr/bin/env bats
# The hooks as a plugin or extension runs them (plugins/<runtime>/hooks/, FORGE_PLUGIN=1 from the
# plugin's command): they record on their own, stay quiet when the project registers the kit in
# its settings too (forge_plugin_defers: one event, one row, one sidecar a turn), and the Stop
# hook finds a CLI installed outside the project (forge_cli_elsewhere).

load ../helpers/common
load ../helpers/hooks

setup() {
  REPO="$BATS_TEST_TMPDIR/my repo"
  make_repo "$REPO"
  export HOME="$BATS_TEST_TMPDIR/home"
  mkdir -p "$HOME"
  unset REFLECTION_INPUT REFLECTION_DIR FORGE_DIR CLAUDE_CONFIG_DIR CODEX_HOME NPM_CONFIG_PREFIX PNPM_HOME
  export REFLECTION_MODE=solo
  export CLAUDE_PROJECT_DIR="$REPO"
}

# plugin_hook RUNTIME HOOK ARGS...: runs a hook from plugins/RUNTIME/hooks as its plugin command does.
plugin_hook() {
  local runtime=$1 hook=$2
  shift 2
  FORGE_PLUGIN=1 hook_run "$REPO" bash "$KIT_ROOT/plugins/$runtime/hooks/reflect-$hook-hook.sh" "$@"
}

spooled() {
  local n=0
  if [[ -d $REPO/.forge/spool ]]; then
    n=$(find "$REPO/.forge/spool" -maxdepth 1 -name '*.event' | wc -l | tr -d ' ')
    [[ -f $REPO/.forge/spool/events.log ]] && n=$((n + $(grep -c $'\x1e' "$REPO/.forge/spool/events.log")))
  fi
  echo "$n"
}

# The kit vendored as `forge-reflect install` leaves it, with REGISTRATION written to FILE.
vendor_kit() {
  mkdir -p "$REPO/.claude/hooks/forge-reflect/lib"
  cp "$KIT_ROOT"/hooks/reflect-*.sh "$REPO/.claude/hooks/forge-reflect/"
  cp "$KIT_ROOT"/hooks/lib/* "$REPO/.claude/hooks/forge-reflect/lib/"
  mkdir -p "$(dirname "$REPO/$1")"
  cp "$KIT_ROOT/$2" "$REPO/$1"
}

@test "the Claude Code plugin's hooks record on their own: events and one sidecar" {
  plugin_hook claude-code event SessionStart claude-code <"$PAYLOADS/session-start.json"
  assert_promise
  plugin_hook claude-code event PostToolUse claude-code <"$PAYLOADS/post-tool-use-bash.json"
  assert_promise
  plugin_hook claude-code stop claude-code <"$PAYLOADS/stop.json"
  assert_promise
  [ "$(sidecar_count)" -eq 1 ]
  [ "$(spooled)" -ge 3 ]
  [ "$(jget "$(last_sidecar)" agent)" = '"claude-code"' ]
}

@test "with the mode unset the plugin's hooks write nothing" {
  REFLECTION_MODE='' plugin_hook claude-code event SessionStart claude-code <"$PAYLOADS/session-start.json"
  assert_promise
  REFLECTION_MODE='' plugin_hook claude-code stop claude-code <"$PAYLOADS/stop.json"
  assert_promise
  [ ! -e "$REPO/.forge" ]
}

@test "plugin and project settings: the plugin's hooks stay quiet, the settings hooks record once" {
  vendor_kit .claude/settings.json runtime/claude/settings.json
  plugin_hook claude-code event PostToolUse claude-code <"$PAYLOADS/post-tool-use-bash.json"
  assert_promise
  plugin_hook claude-code stop claude-code <"$PAYLOADS/stop.json"
  assert_promise
  [ ! -e "$REPO/.forge" ]
  # The settings registration's own hooks (no FORGE_PLUGIN) do record.
  hook_run "$REPO" bash "$REPO/.claude/hooks/forge-reflect/reflect-stop-hook.sh" claude-code <"$PAYLOADS/stop.json"
  assert_promise
  [ "$(sidecar_count)" -eq 1 ]
}

@test "a registration in settings.local.json or the user's settings counts; one without the vendored hooks does not" {
  mkdir -p "$REPO/.claude"
  cp "$KIT_ROOT/runtime/claude/settings.json" "$REPO/.claude/settings.local.json"
  plugin_hook claude-code stop claude-code <"$PAYLOADS/stop.json"
  assert_promise
  [ "$(sidecar_count)" -eq 1 ]   # no vendored hooks: that registration cannot run, the plugin records
  rm -rf "$REPO/.forge" "$REPO/.claude"
  vendor_kit .claude/elsewhere.json runtime/claude/settings.json
  mkdir -p "$HOME/.claude"
  cp "$KIT_ROOT/runtime/claude/settings.json" "$HOME/.claude/settings.json"
  plugin_hook claude-code stop claude-code <"$PAYLOADS/stop.json"
  assert_promise
  [ ! -e "$REPO/.forge" ]
}

@test "Codex: a project .codex/hooks.json defers the plugin only once its hooks are trusted" {
  vendor_kit .codex/hooks.json runtime/codex/hooks.json
  unset CLAUDE_PROJECT_DIR
  plugin_hook codex stop codex <"$PAYLOADS/stop.json"
  assert_promise
  [ "$(sidecar_count)" -eq 1 ]
  rm -rf "$REPO/.forge"
  mkdir -p "$HOME/.codex"
  printf '[hooks.state."%s/.codex/hooks.json:stop:0:0"]\ntrusted_hash = "sha256:00"\n' "$REPO" >"$HOME/.codex/config.toml"
  plugin_hook codex stop codex <"$PAYLOADS/stop.json"
  assert_promise
  [ ! -e "$REPO/.forge" ]
}

@test "Gemini: the extension defers to a project .gemini/settings.json registration" {
  unset CLAUDE_PROJECT_DIR
  export GEMINI_PROJECT_DIR="$REPO"
  plugin_hook gemini event SessionStart gemini <"$PAYLOADS/session-start.json"
  assert_promise
  [ "$(spooled)" -eq 1 ]
  rm -rf "$REPO/.forge"
  vendor_kit .gemini/settings.json runtime/gemini/settings.json
  plugin_hook gemini event SessionStart gemini <"$PAYLOADS/session-start.json"
  assert_promise
  [ ! -e "$REPO/.forge" ]
}

@test "the Stop hook drains with a CLI in ~/.forge-reflect when the project has none" {
  unset FORGE_REFLECT_CLI
  mkdir -p "$HOME/.forge-reflect/node_modules/.bin"
  cat >"$HOME/.forge-reflect/node_modules/.bin/forge-reflect" <<SH
#!/bin/sh
echo "\$@" >"$BATS_TEST_TMPDIR/drain-ran"
SH
  chmod +x "$HOME/.forge-reflect/node_modules/.bin/forge-reflect"
  PATH=$(path_without forge-reflect) plugin_hook claude-code stop claude-code <"$PAYLOADS/stop.json"
  assert_promise
  for _ in $(seq 1 100); do [ -f "$BATS_TEST_TMPDIR/drain-ran" ] && break; sleep 0.1; done
  [ "$(cat "$BATS_TEST_TMPDIR/drain-ran")" = ingest ]
}

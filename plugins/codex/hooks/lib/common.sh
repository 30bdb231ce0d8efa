# shellcheck shell=bash disable=SC2034 # FORGE_* results are read by the hooks that source this
# Shared by the forge-reflect hooks. Pure bash where it can be: the per-event path starts no process
# for a payload of up to 4 KiB (`timeout`, `cat`, `head` and `mv` for a longer one), never node.
#
# Every function here fails soft: it returns non-zero and the caller degrades; nothing exits.

FORGE_PAYLOAD_CAP=${FORGE_PAYLOAD_CAP:-1048576}
# Globs, not `=~`: a regex is compiled on first use, a share of the event hook's time.
forge_decimal() {
  [[ $1 == [1-9]* && $1 != *[!0-9]* && ${#1} -le ${2:-10} ]]
}
forge_decimal "$FORGE_PAYLOAD_CAP" || FORGE_PAYLOAD_CAP=1048576

# forge_event_name TEXT: TEXT can name an event: a letter, then at most 63 of [A-Za-z0-9_.-].
# (Bracket ranges in a glob are ASCII: bash's globasciiranges, on by default since 5.0.)
forge_event_name() {
  [[ $1 == [A-Za-z]* && $1 != *[!A-Za-z0-9_.-]* && ${#1} -le 64 ]]
}
# Reading stdin takes at most 7 s in all, well inside the 10 s registration of the event hook:
# 4 s for the payload, then 0.5 s (1 s below bash 4) + 2 s to read and drop whatever is left.
FORGE_STDIN_SECONDS=4
FORGE_STDIN_DRAIN_SECONDS=2
# read -N (bash 4.1) and a fractional read -t (bash 4.0); older bash reads with -n, waits whole seconds.
FORGE_READ_N='' FORGE_STDIN_PEEK_SECONDS=1
if ((BASH_VERSINFO[0] >= 5 || (BASH_VERSINFO[0] == 4 && BASH_VERSINFO[1] >= 1))); then
  FORGE_READ_N=1 FORGE_STDIN_PEEK_SECONDS=0.5
fi
# The first 4 KiB of a payload are read by the `read` builtin: no process, but with a time limit it
# masks signals around every byte, while `cat | head` costs process starts whatever the size. Most payloads (prompts, session events, short commands) fit in 4 KiB.
FORGE_STDIN_INLINE=4096
# The largest record appended to the spool log: under what bash's stdout buffer holds, so it leaves
# in one write. glibc's is 4 KiB (the event hook sizes it on /dev/null); musl's is 1 KiB, and other
# C libraries are not counted on for more.
case ${OSTYPE:-} in linux-gnu*) FORGE_APPEND_MAX=4000 ;; *) FORGE_APPEND_MAX=1000 ;; esac

# forge_bounded SECONDS COMMAND...: runs COMMAND, killed after SECONDS. `timeout` where the system
# has it (GNU; a Mac has none), else a watchdog subshell that kills it. The watchdog holds none of
# the hook's descriptors (the helper's pipe, the lock, a pipeline's pipe), so nothing waits on it,
# and it is itself gone once COMMAND is: its sleep is killed with it.
if command -v timeout >/dev/null 2>&1; then
  forge_bounded() {
    local seconds=$1
    shift
    timeout -k 1 "$seconds" "$@"
  }
else
  forge_bounded() {
    local seconds=$1 pid dog rc
    shift
    # An explicit stdin: a background command would otherwise read /dev/null. Job control for the
    # start only: the command leads a process group of its own, killed whole (its children too).
    set -m
    "$@" <&0 &
    pid=$!
    set +m
    (
      exec </dev/null >/dev/null 2>&1 5>&- 6>&- 7>&- 8>&- 9>&-
      sleep "$seconds" &
      sleeper=$!
      trap 'kill -KILL "$sleeper" 2>/dev/null; exit 0' TERM
      wait "$sleeper" && { kill -KILL -- "-$pid" || kill -KILL "$pid"; }
    ) &
    dog=$!
    wait "$pid"
    rc=$?
    kill -TERM "$dog" 2>/dev/null
    return "$rc"
  }
fi

# forge_state_dir: sets FORGE_STATE (the state dir), FORGE_PROJECT (the folder it belongs to) and
# FORGE_ROOT (the git work tree root, or empty outside one). The project is FORGE_PROJECT_DIR (set
# by a registration), else the runtime's project dir (CLAUDE_PROJECT_DIR, GEMINI_PROJECT_DIR),
# else the git root above the working dir, else the working dir; the state dir is $FORGE_DIR, else
# <project>/.forge. A runtime's project dir does not follow the agent's `cd`, so neither does the
# state. The root is found by walking up to a `.git` entry (a folder, or a worktree's file),
# without forking git.
forge_state_dir() {
  local dir='' candidate
  for candidate in "${FORGE_PROJECT_DIR:-}" "${CLAUDE_PROJECT_DIR:-}" "${GEMINI_PROJECT_DIR:-}"; do
    if [[ $candidate == /* && -d $candidate ]]; then
      dir=$candidate
      break
    fi
  done
  FORGE_PROJECT=${dir%/}
  [[ -n $dir ]] || dir=$PWD
  FORGE_ROOT=''
  while [[ -n $dir ]]; do
    if [[ -e $dir/.git ]]; then
      FORGE_ROOT=$dir
      break
    fi
    dir=${dir%/*}
  done
  [[ -z $FORGE_ROOT && -e /.git ]] && FORGE_ROOT=/
  [[ -n $FORGE_PROJECT ]] || FORGE_PROJECT=${FORGE_ROOT:-$PWD}
  if [[ -n ${FORGE_DIR:-} ]]; then
    FORGE_STATE=$FORGE_DIR
  else
    FORGE_STATE=${FORGE_PROJECT%/}/.forge
  fi
}

# forge_runtime NAME: sets FORGE_RUNTIME to the runtime a registration named (claude-code, codex,
# gemini, qwen, cline, opencode, copilot), or empty when it named none or something else.
# The runtime that calls the hook outranks the registration's word, where it says so in every
# hook's environment and not in its shell tool's (so a runtime started from that shell is not taken
# for it): Qwen Code sets QWEN_PROJECT_DIR and QWEN_CODE_SESSION_ID (its shell tool: the session
# only); Copilot CLI sets COPILOT_CLI=1 and COPILOT_PROJECT_DIR (its shell tool: neither), for its
# own .github/hooks files and .claude/settings.json alike. Another runtime's registration run by one
# of them (Claude's commands in ~/.qwen/settings.json, the kit's Claude registration run by Copilot)
# is logged as that runtime, unless the project registers the kit for it too: that registration
# fires for the same event, and forge_runtime then fails so this hook records nothing (one event,
# one row).
forge_runtime() {
  case "${1:-}" in
    claude-code | codex | gemini | qwen | cline | opencode | copilot) FORGE_RUNTIME=$1 ;;
    *) FORGE_RUNTIME='' ;;
  esac
  if [[ -n ${QWEN_PROJECT_DIR:-} && -n ${QWEN_CODE_SESSION_ID:-} ]]; then
    forge_runtime_caller qwen "$QWEN_PROJECT_DIR/.qwen/settings.json" || return 1
  fi
  if [[ ${COPILOT_CLI:-} == 1 && -n ${COPILOT_PROJECT_DIR:-} ]]; then
    forge_runtime_caller copilot "$COPILOT_PROJECT_DIR/.github/hooks/forge-reflect.json" || return 1
  fi
  return 0
}

# forge_runtime_caller RUNTIME FILE: FORGE_RUNTIME becomes RUNTIME, the runtime running this hook;
# fails when the registration named another runtime and FILE, the project's registration for
# RUNTIME, registers the kit's Stop hook for RUNTIME too.
forge_runtime_caller() {
  local text=''
  [[ $FORGE_RUNTIME == "$1" ]] && return 0
  FORGE_RUNTIME=$1
  [[ -f $2 && ! -L $2 ]] && IFS= read -r -d '' -n 262144 text <"$2"
  [[ $text != *"reflect-stop-hook.sh $1"* ]]
}

# forge_no_links PATH: neither PATH nor its parent is a symbolic link, nor is any folder between
# the state dir and PATH. Nothing is ever written through a link a repo (or anyone) planted.
forge_no_links() {
  local path=${1%/} rest
  [[ -n $path && ! -L $path && ! -L ${path%/*} ]] || return 1
  rest=$path
  while [[ $rest == "${FORGE_STATE%/}"/* ]]; do
    [[ -L $rest ]] && return 1
    rest=${rest%/*}
  done
  return 0
}

# forge_fresh PATH: nothing at PATH yet, not even a dangling link: a temp file or a rename target
# is always new (the hooks also run with noclobber, so `>` never truncates or follows one).
forge_fresh() {
  [[ ! -e $1 && ! -L $1 ]]
}

# forge_ensure_dir DIR: DIR exists, is a real folder (neither it, its parent nor any folder below
# the state dir on the way is a symlink), and is writable.
# The state dir itself gets a .gitignore of `*` so nothing in it is ever committed.
forge_ensure_dir() {
  local dir=$1
  forge_no_links "$dir" || return 1
  # Only a folder made just now is checked again (a link could have been planted meanwhile).
  if [[ ! -d $dir ]]; then
    mkdir -p -- "$dir" 2>/dev/null && forge_no_links "$dir" || return 1   # 0700: umask 077
  fi
  [[ -d $dir && -w $dir ]]
}

forge_ensure_state() {
  forge_ensure_dir "$FORGE_STATE" || return 1
  if [[ ! -e $FORGE_STATE/.gitignore && ! -L $FORGE_STATE/.gitignore ]]; then
    rm -f -- "$FORGE_STATE/.gitignore.tmp-$$"
    printf '*\n' >"$FORGE_STATE/.gitignore.tmp-$$" 2>/dev/null &&
      mv -f -- "$FORGE_STATE/.gitignore.tmp-$$" "$FORGE_STATE/.gitignore" 2>/dev/null
  fi
  return 0
}

# forge_json_string TEXT: sets FORGE_JSON to TEXT as a JSON string literal (quotes included).
# A text with nothing to escape (nearly every id and path) is taken as it is, in one test; any
# other goes through forge_json_escape.
forge_json_string() {
  if [[ $1 != *[\\\"$'\x01'-$'\x1f\x7f']* ]]; then
    FORGE_JSON="\"$1\""
    return 0
  fi
  forge_json_escape "$1"
}

# forge_json_escape TEXT: forge_json_string for any text, escaping character by character where a
# control character needs \u00XX.
forge_json_escape() {
  local s=$1 out='' c i code
  s=${s//\\/\\\\}
  s=${s//\"/\\\"}
  s=${s//$'\n'/\\n}
  s=${s//$'\r'/\\r}
  s=${s//$'\t'/\\t}
  if [[ $s == *[$'\x01'-$'\x1f\x7f']* ]]; then
    for ((i = 0; i < ${#s}; i++)); do
      c=${s:i:1}
      if [[ $c == [$'\x01'-$'\x1f\x7f'] ]]; then
        printf -v code '%d' "'$c"
        printf -v c '\\u%04x' "$code"
      fi
      out+=$c
    done
    s=$out
  fi
  FORGE_JSON="\"$s\""
}

# forge_safe_id TEXT: sets FORGE_SAFE_ID to TEXT with everything but [A-Za-z0-9_-] dropped, at
# most 64 characters, or "unknown" when nothing is left. Only this ever reaches a file name.
forge_safe_id() {
  local LC_ALL=C s=$1
  s=${s//[^A-Za-z0-9_-]/}
  s=${s:0:64}
  FORGE_SAFE_ID=${s:-unknown}
}

# forge_now: sets FORGE_NOW_US, the time a spool file's name and envelope carry (microseconds
# since the epoch, 16 digits); forge_now_seconds: sets FORGE_NOW_US to the time now, whole seconds
# at least, for what needs a value in the hook itself (a session's start, the sidecar's time).
# bash 5 reads the clock itself (EPOCHREALTIME) for both. Older bash (a Mac's 3.2) has no clock at
# all, nor has a Mac's date(1) a finer one than the second: there a spool file is named with 16
# zeros, its envelope says "clock":"file", and the drain takes the event's time, to the
# microsecond, from the file's time of writing, as the file system keeps it: no process on the
# per-event path (docs/decisions.md). Such an event is always a file of its own, never a record of the spool
# log, which has no time of writing per record. forge_now_seconds asks date(1) there.
FORGE_NO_CLOCK=''
if ((BASH_VERSINFO[0] >= 5)); then
  forge_now() {
    local t=${EPOCHREALTIME//[!0-9]/}
    t=${t#"${t%%[!0]*}"}
    printf -v FORGE_NOW_US '%016d' "${t:-0}"
  }
  forge_now_seconds() { forge_now; }
else
  FORGE_NO_CLOCK=1
  forge_now() {
    FORGE_NOW_US=0000000000000000
  }
  forge_now_seconds() {
    local t
    t=$(exec date +%s 2>/dev/null)
    [[ ${#t} == 10 && $t != *[!0-9]* ]] || t=0000000000
    FORGE_NOW_US=${t}000000
  }
fi

# forge_now_iso: sets FORGE_NOW_ISO to the instant FORGE_NOW_US as ISO-8601 UTC with microseconds
# (the Stop hook's; the event hook needs none). The civil date by arithmetic (days since
# 1970-01-01 to year, month, day in the proleptic Gregorian calendar): no process, any bash.
forge_now_iso() {
  local sec=$((10#$FORGE_NOW_US / 1000000)) frac=${FORGE_NOW_US: -6}
  local z era doe yoe doy mp y m d rem
  rem=$((sec % 86400))
  z=$((sec / 86400 + 719468))
  era=$((z / 146097))
  doe=$((z - era * 146097))
  yoe=$(((doe - doe / 1460 + doe / 36524 - doe / 146096) / 365))
  doy=$((doe - (365 * yoe + yoe / 4 - yoe / 100)))
  mp=$(((5 * doy + 2) / 153))
  d=$((doy - (153 * mp + 2) / 5 + 1))
  m=$((mp < 10 ? mp + 3 : mp - 9))
  y=$((yoe + era * 400 + (m <= 2 ? 1 : 0)))
  printf -v FORGE_NOW_ISO '%04d-%02d-%02dT%02d:%02d:%02d.%sZ' "$y" "$m" "$d" $((rem / 3600)) $((rem % 3600 / 60)) $((rem % 60)) "$frac"
}

# forge_spool_name EVENT SOURCE: names a new spool file and makes its one-line envelope, writing
# nothing. Sets FORGE_SPOOL_NAME, FORGE_SPOOL_TMP (a fresh temp name) and FORGE_SPOOL_ENVELOPE.
forge_spool_name() {
  local event=$1 source=$2 spool=$FORGE_STATE/spool rand
  forge_ensure_dir "$spool" || return 1
  forge_now
  printf -v rand '%04x%04x' "$RANDOM" "$RANDOM"
  FORGE_SPOOL_NAME="$FORGE_NOW_US-$$-$rand"
  FORGE_SPOOL_TMP="$spool/.tmp-$FORGE_SPOOL_NAME"
  forge_fresh "$FORGE_SPOOL_TMP" || { FORGE_SPOOL_TMP=''; return 1; }
  forge_json_string "$PWD"
  printf -v FORGE_SPOOL_ENVELOPE '{"v":1,"source":"%s","event":"%s","runtime":"%s","received_us":%s,"pid":%s,"cwd":%s,"cap":%s%s}\n' \
    "$source" "$event" "${FORGE_RUNTIME:-}" "$((10#$FORGE_NOW_US))" "$$" "$FORGE_JSON" "$FORGE_PAYLOAD_CAP" "${FORGE_NO_CLOCK:+,\"clock\":\"file\"}"
}

# forge_spool_begin EVENT SOURCE: a new temp spool file holding the one-line envelope (see
# forge_spool_name); the payload is appended, then forge_spool_commit.
forge_spool_begin() {
  forge_spool_name "$1" "$2" || return 1
  printf '%s' "$FORGE_SPOOL_ENVELOPE" >"$FORGE_SPOOL_TMP"
}

# forge_spool_open EVENT SOURCE [DIRECT]: reads the payload from stdin (to EOF, at most the cap plus
# one byte kept, the rest discarded) into a temp spool file behind its envelope. A payload longer
# than the cap is kept as its first cap+1 bytes; the drain sees the extra byte, cuts it and marks the
# event truncated. The whole read takes at most FORGE_STDIN_SECONDS. When the payload fit in the
# first chunk, FORGE_PAYLOAD holds all of it and FORGE_PAYLOAD_WHOLE is 1 (else both are empty). A
# NUL byte, which no JSON text holds, is the one byte the read builtin drops. FORGE_SPOOL_FILE names
# the file that holds the event.
# With DIRECT (the per-event hook), a payload that fit in the first chunk is written at once under
# its final name, with its length in bytes in the envelope (`"bytes":N`), and FORGE_SPOOL_PLACED is
# 1: no temp file and no `mv`, whose fork and exec are a third of the hook's time. The drain takes
# such a file only once its payload holds exactly N bytes; a shorter one is still being written, or
# its writer was killed, and is left alone for 60 s (docs/spool-format.md).
forge_spool_open() {
  forge_spool_name "$1" "$2" || return 1
  local LC_ALL=C chunk='' rc left _ want=$((FORGE_PAYLOAD_CAP + 1)) started=$SECONDS
  local inline=$FORGE_STDIN_INLINE final out nl record
  ((inline < want)) || inline=$want
  FORGE_PAYLOAD='' FORGE_PAYLOAD_WHOLE='' FORGE_SPOOL_PLACED=''
  # Status 0: `inline` bytes came and more may follow; 1: end of input; above 128: out of time
  # (what came is kept). bash before 4.1 has no -N: -n with NUL as the delimiter reads the same
  # bytes from a JSON text (which holds no NUL), and a read that times out returns 1 with nothing
  # kept, so a writer that stalls for the whole limit leaves an empty event.
  if [[ -n $FORGE_READ_N ]]; then
    IFS= read -r -d '' -N "$inline" -t "$FORGE_STDIN_SECONDS" chunk
  else
    IFS= read -r -d '' -n "$inline" -t "$FORGE_STDIN_SECONDS" chunk
  fi
  rc=$?
  if ((rc == 1)); then
    FORGE_PAYLOAD=$chunk FORGE_PAYLOAD_WHOLE=1
    if [[ -n ${3:-} ]]; then
      FORGE_SPOOL_TMP=''
      FORGE_SPOOL_ENVELOPE="${FORGE_SPOOL_ENVELOPE:0:${#FORGE_SPOOL_ENVELOPE}-2},\"bytes\":${#chunk}"
      # A record of the spool log (docs/spool-format.md): one append (O_APPEND) of at most
      # FORGE_APPEND_MAX bytes ending in a newline, for a payload with no \x1e (it starts a record).
      # It must leave in one write, which the kernel never interleaves with another hook's: bash's
      # stdout is line-buffered, and stdio copies one string up to its last newline and writes it at
      # once when it fits the buffer. So the record is built first and written by ONE %s (written in
      # pieces, each piece holding a newline would flush on its own). Never onto a link or anything
      # but a file.
      final=$FORGE_STATE/spool/events.log
      # (Not without a clock: a record has no time of writing of its own.)
      if [[ -z $FORGE_NO_CLOCK ]] && ((${#FORGE_SPOOL_ENVELOPE} + ${#FORGE_SPOOL_NAME} + ${#chunk} + 16 <= FORGE_APPEND_MAX)) &&
        [[ $chunk != *$'\x1e'* && ! -L $final && (-f $final || ! -e $final) ]]; then
        nl=$'\n'
        [[ $chunk == *$'\n' ]] && nl=''   # the payload's own last newline ends the record
        printf -v record '\036%s,"id":"%s"}\037%s%s' "$FORGE_SPOOL_ENVELOPE" "$FORGE_SPOOL_NAME" "$chunk" "$nl"
        printf '%s' "$record" >>"$final" || return 1
        FORGE_SPOOL_FILE=$final FORGE_SPOOL_PLACED=1
        return 0
      fi
      # Else a file of its own, opened with noclobber (O_EXCL: never onto an existing file or link)
      # under its final name; a write that fails (a full disk) takes the file away again.
      final=$FORGE_STATE/spool/$FORGE_SPOOL_NAME.event
      FORGE_SPOOL_ENVELOPE+=$'}\n'
      exec 3>"$final" || return 1
      if ! printf '%s%s' "$FORGE_SPOOL_ENVELOPE" "$chunk" >&3; then
        exec 3>&-
        rm -f -- "$final"
        return 1
      fi
      exec 3>&-
      FORGE_SPOOL_FILE=$final FORGE_SPOOL_PLACED=1
      return 0
    fi
  fi
  printf '%s%s' "$FORGE_SPOOL_ENVELOPE" "$chunk" >"$FORGE_SPOOL_TMP" || return 1
  FORGE_SPOOL_FILE=$FORGE_SPOOL_TMP
  ((rc == 1)) && return 0
  if ((rc == 0 && inline < want)); then
    left=$((FORGE_STDIN_SECONDS - (SECONDS - started)))
    ((left >= 1)) || left=1
    # The time limit is on `cat`, not on `head`: head buffers what it writes, so a head that is
    # killed loses it, while a head whose input ends (cat stopped) writes out all it read.
    forge_bounded "$left" cat | head -c "$((want - inline))" >>"$FORGE_SPOOL_TMP"
  fi
  # Whatever is left on stdin is read and dropped, so the runtime's writer never sees a broken pipe.
  if IFS= read -r -d '' -n 1 -t "$FORGE_STDIN_PEEK_SECONDS" _; then
    forge_bounded "$FORGE_STDIN_DRAIN_SECONDS" cat >/dev/null
  fi
  return 0
}

# forge_spool_write EVENT SOURCE PAYLOAD: spools a payload built by the hook itself (no stdin to
# read, so no cat: the builtin printf appends it).
forge_spool_write() {
  forge_spool_begin "$1" "$2" && printf '%s\n' "$3" >>"$FORGE_SPOOL_TMP" || return 1
  forge_spool_commit
}

forge_spool_commit() {
  [[ -n ${FORGE_SPOOL_PLACED:-} ]] && return 0
  [[ -n ${FORGE_SPOOL_TMP:-} && -f $FORGE_SPOOL_TMP ]] || return 1
  forge_fresh "$FORGE_STATE/spool/$FORGE_SPOOL_NAME.event" || return 1
  mv -f -- "$FORGE_SPOOL_TMP" "$FORGE_STATE/spool/$FORGE_SPOOL_NAME.event" || return 1
  FORGE_SPOOL_TMP=''
}

# forge_payload_field FILE NAME...: sets FORGE_FIELD to the first string value of any of the
# top-level-looking keys NAME in the first 64 KiB of FILE (a spool file or a payload; `-`: the
# payload in FORGE_PAYLOAD), or empty.
# A regex, not a parser: used only for ids, which are then reduced by forge_safe_id.
forge_payload_field() {
  local file=$1 text='' name
  shift
  FORGE_FIELD=''
  if [[ $file == - ]]; then text=$FORGE_PAYLOAD; else IFS= read -r -d '' -n 65536 text <"$file"; fi
  for name in "$@"; do
    if [[ $text =~ \"$name\"[[:space:]]*:[[:space:]]*\"([^\"\\]*)\" ]]; then
      FORGE_FIELD=${BASH_REMATCH[1]}
      return 0
    fi
  done
  return 0
}

# forge_plugin_defers: succeeds when this hook runs from a plugin or extension of the kit
# (FORGE_PLUGIN set by its command) and the project also registers the kit for the same runtime in
# a settings file, with the vendored hooks there to run: that registration records the event and
# this one stays quiet (settings win; one event, one row, one sidecar a turn). Claude Code runs a
# plugin's hook and the same settings hook side by side; Copilot CLI runs every source it loads.
# A Codex project registration counts only once its hooks have a trusted hash in the user config:
# Codex skips untrusted hooks without a word. Reads files with builtins only, no process.
forge_plugin_defers() {
  [[ -n ${FORGE_PLUGIN:-} && -n ${FORGE_RUNTIME:-} ]] || return 1
  local p=${FORGE_PROJECT%/} f text want=$FORGE_RUNTIME home=${HOME:-}
  [[ -f $p/.claude/hooks/forge-reflect/reflect-stop-hook.sh ]] || return 1
  local files=()
  case $FORGE_RUNTIME in
    claude-code) files=("$p/.claude/settings.json" "$p/.claude/settings.local.json" "${CLAUDE_CONFIG_DIR:-$home/.claude}/settings.json") ;;
    codex)
      f=${CODEX_HOME:-$home/.codex}/config.toml text=''
      [[ -f $f && ! -L $f ]] && IFS= read -r -d '' -n 1048576 text <"$f"
      [[ $text == *"$p/.codex/hooks.json:stop:"* ]] || return 1
      files=("$p/.codex/hooks.json")
      ;;
    gemini) files=("$p/.gemini/settings.json" "$home/.gemini/settings.json") ;;
    # Copilot runs the project's .claude/settings.json hooks too (forge_runtime logs them as copilot).
    copilot)
      files=("$p/.github/hooks/forge-reflect.json" "$p/.claude/settings.json" "$p/.claude/settings.local.json")
      want=''
      ;;
    *) return 1 ;;
  esac
  for f in "${files[@]}"; do
    [[ -f $f && ! -L $f ]] || continue
    text=''
    IFS= read -r -d '' -n 1048576 text <"$f"
    if [[ -n $want ]]; then
      # (JSON escapes the quote that ends a quoted script path: Codex's commands quote theirs.)
      [[ $text == *"reflect-stop-hook.sh $want"* || $text == *"reflect-stop-hook.sh\\\" $want"* ]] && return 0
    else
      [[ $text == *"/.claude/hooks/forge-reflect/reflect-stop-hook.sh "* ]] && return 0
    fi
  done
  return 1
}

# forge_cli_elsewhere: sets FORGE_CLI to a forge-reflect CLI installed outside the project (the
# project's node_modules and PATH are looked at first, by the Stop hook): a prefix install in
# ~/.forge-reflect (`npm install --prefix ~/.forge-reflect …`, or `-g --prefix`), npm's global
# prefix as NPM_CONFIG_PREFIX names it, or pnpm's global bin (PNPM_HOME). Fails when there is none.
forge_cli_elsewhere() {
  local home=${HOME:-} c
  FORGE_CLI=''
  for c in "$home/.forge-reflect/node_modules/.bin/forge-reflect" "$home/.forge-reflect/bin/forge-reflect" \
    "${NPM_CONFIG_PREFIX:-/nonexistent}/bin/forge-reflect" "${PNPM_HOME:-/nonexistent}/forge-reflect"; do
    if [[ $c == /* && -f $c && -x $c ]]; then
      FORGE_CLI=$c
      return 0
    fi
  done
  return 1
}

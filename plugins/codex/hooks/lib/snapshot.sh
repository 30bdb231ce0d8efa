# shellcheck shell=bash disable=SC2034 # FORGE_SNAPSHOT_BASE and _LATE are read by reflect-event-hook.sh
# The working tree as a session found it, kept as a git index file: a copy of the user's index
# with every tracked and untracked-not-ignored file as it is now (the user's own index, stash and
# refs are never touched). The Stop hook later compares the work tree with it: what differs is what
# the session changed, and nothing that was dirty before.
# Sourced by reflect-event-hook.sh on SessionStart only; needs FORGE_ROOT.
#
# It costs one look at the whole tree, git's own: one `git status` of the copy, which uses what git
# keeps for a big tree (the untracked cache and core.fsmonitor where the user has them). Then:
# - a clean tree: the copy is the snapshot as it is (its content is HEAD's);
# - a few changed paths: `git update-index` adds them to the copy; it reads and writes the index
#   but looks at no other file of the tree;
# - many, or a path update-index refuses (a file that became a folder, a nested repository):
#   `git add -A` through the copy, a second look at the whole tree.
# The copy keeps the index file's time (cp -p): git tells a racily clean entry by comparing it with
# that time, and a newer time would hide one.

# Seconds all of it may take. Past them there is no snapshot, and the Stop hook falls back to HEAD
# and says so in risk.reason. Under the 10 s the registration gives the event hook, with room for
# the rest of the hook (milliseconds) and a payload read at once.
FORGE_SNAPSHOT_SECONDS=${FORGE_SNAPSHOT_SECONDS:-8}
[[ $FORGE_SNAPSHOT_SECONDS =~ ^[1-9]$ ]] || FORGE_SNAPSHOT_SECONDS=8
# Changed paths read in bash at most: bash reads them one by one, and many in a small tree cost more
# that way than `git add -A` looking at the whole tree (docs/decisions.md, 2026-12-03).
FORGE_SNAPSHOT_PATHS=${FORGE_SNAPSHOT_PATHS:-2000}
[[ $FORGE_SNAPSHOT_PATHS =~ ^[0-9]{1,6}$ ]] || FORGE_SNAPSHOT_PATHS=2000

# forge_snapshot_user_index: sets FORGE_USER_INDEX to the user's index file, or empty when there is
# none. In a linked worktree .git is a file naming the git dir, read without starting git.
forge_snapshot_user_index() {
  local dir=$FORGE_ROOT/.git line=''
  FORGE_USER_INDEX=''
  if [[ -f $dir ]]; then
    IFS= read -r line <"$dir"
    [[ $line == 'gitdir: '* ]] || return 1
    dir=${line#gitdir: }
    [[ $dir == /* ]] || dir=$FORGE_ROOT/$dir
  fi
  [[ -d $dir && -f $dir/index ]] && FORGE_USER_INDEX=$dir/index
  return 0
}

# forge_snapshot_git SECONDS ARGS...: git in the work tree on the copy, within SECONDS.
forge_snapshot_git() {
  local seconds=$1
  shift
  GIT_INDEX_FILE=$snapshot_tmp forge_bounded "$seconds" git -C "$FORGE_ROOT" "$@"
}

# forge_snapshot_take FILE: writes the snapshot index to FILE (temp file, then rename). Sets
# FORGE_SNAPSHOT_BASE to the commit the status named (empty when unknown), and FORGE_SNAPSHOT_LATE
# to 1 when there is none because git ran out of the budget.
forge_snapshot_take() {
  local out=$1 deadline=$((SECONDS + FORGE_SNAPSHOT_SECONDS)) left record path status rc
  local snapshot_tmp="${1%/*}/.tmp-$$-snapshot" dirty='' many=''
  local -a paths=() dirs=()
  FORGE_SNAPSHOT_BASE='' FORGE_SNAPSHOT_LATE=''
  [[ -n $FORGE_ROOT ]] && forge_fresh "$snapshot_tmp" && forge_fresh "$snapshot_tmp.lock" && forge_fresh "$snapshot_tmp.status" || return 1
  forge_snapshot_user_index
  # Starting from the user's index keeps git's stat cache, untracked cache and fsmonitor token:
  # unchanged files are not read again.
  if [[ -n $FORGE_USER_INDEX ]]; then cp -p -- "$FORGE_USER_INDEX" "$snapshot_tmp" 2>/dev/null || return 1; fi
  status=$snapshot_tmp.status
  # -unormal, not -uall: an untracked cache serves only the mode it was built for, git's default.
  # --no-optional-locks: the copy is not rewritten for a refreshed stat or untracked cache.
  if forge_snapshot_git "$FORGE_SNAPSHOT_SECONDS" --no-optional-locks status --porcelain=v2 -z --branch --no-ahead-behind \
    --untracked-files=normal --no-renames >"$status" 2>/dev/null; then
    while IFS= read -r -d '' record; do
      case "$record" in
        '# branch.oid '*) FORGE_SNAPSHOT_BASE=${record#'# branch.oid '} ;;
        '#'*) ;;
        *)
          dirty=1
          ((${#paths[@]} + ${#dirs[@]} < FORGE_SNAPSHOT_PATHS)) || { many=1; break; }
          case "$record" in
            # `? path`, a folder with a slash at its end; `1 XY` + 7 fields + path; `u` + 9 fields + path.
            '? '*/) dirs+=("${record#'? '}") ;;
            '? '*) paths+=("${record#'? '}") ;;
            '1 '*)
              path=$record
              for _ in 1 2 3 4 5 6 7 8; do path=${path#* }; done
              paths+=("$path")
              ;;
            'u '*)
              path=$record
              for _ in 1 2 3 4 5 6 7 8 9 10; do path=${path#* }; done
              paths+=("$path")
              ;;
            *) many=1; break ;;   # a record of another shape: the whole tree is looked at again
          esac
          ;;
      esac
    done <"$status"
    [[ $FORGE_SNAPSHOT_BASE =~ ^[0-9a-f]{40,64}$ ]] || FORGE_SNAPSHOT_BASE=''
  else
    ((SECONDS < deadline)) || FORGE_SNAPSHOT_LATE=1
    rm -f -- "$snapshot_tmp" "$snapshot_tmp.lock" "$status"
    return 1
  fi
  rm -f -- "$status"
  rc=0
  if [[ -n $dirty && -z $many ]]; then
    # The listed paths, and the files of each new folder, into the copy. pipefail: a listing cut
    # short must not pass for a whole one.
    left=$((deadline - SECONDS))
    ((left > 0)) || left=1
    set -o pipefail
    {
      ((${#paths[@]} == 0)) || printf '%s\0' "${paths[@]}"
      ((${#dirs[@]} == 0)) || GIT_LITERAL_PATHSPECS=1 forge_snapshot_git "$left" ls-files -z --others --exclude-standard -- "${dirs[@]}"
    } 2>/dev/null | forge_snapshot_git "$left" update-index --add --remove -z --stdin >/dev/null 2>&1 || rc=1
    set +o pipefail
  fi
  if [[ -n $many ]] || ((rc != 0)); then
    left=$((deadline - SECONDS))
    rc=1
    # The copy again: a refused update-index writes nothing, but a killed one may have.
    if ((left > 0)) && { [[ -z $FORGE_USER_INDEX ]] || cp -p -- "$FORGE_USER_INDEX" "$snapshot_tmp" 2>/dev/null; }; then
      forge_snapshot_git "$left" add -A -- . >/dev/null 2>&1 && rc=0
    fi
  fi
  if ((rc == 0)) && [[ -f $snapshot_tmp ]]; then
    mv -f -- "$snapshot_tmp" "$out"
  else
    ((SECONDS < deadline)) || FORGE_SNAPSHOT_LATE=1
    rm -f -- "$snapshot_tmp" "$snapshot_tmp.lock"
    return 1
  fi
}

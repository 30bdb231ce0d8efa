# shellcheck shell=bash
# The working tree as a session found it, kept as a git index file: a copy of the user's index
# with every tracked and untracked-not-ignored file added (`git add -A` through GIT_INDEX_FILE, so
# the user's own index, stash and refs are never touched). The Stop hook later compares the work
# tree with it: what differs is what the session changed, and nothing that was dirty before.
# Sourced by reflect-event-hook.sh on SessionStart only; needs FORGE_ROOT.

# Seconds `git add -A` may take: hashing many new untracked files is the slow part. Past it there is
# no snapshot, and the Stop hook falls back to HEAD and says so in risk.reason.
FORGE_SNAPSHOT_SECONDS=${FORGE_SNAPSHOT_SECONDS:-4}
[[ $FORGE_SNAPSHOT_SECONDS =~ ^[1-9]$ ]] || FORGE_SNAPSHOT_SECONDS=4

# forge_snapshot_take FILE: writes the snapshot index to FILE (temp file, then rename).
forge_snapshot_take() {
  local out=$1 tmp="${1%/*}/.tmp-$$-snapshot" index=''
  [[ -n $FORGE_ROOT ]] && forge_fresh "$tmp" && forge_fresh "$tmp.lock" || return 1
  # Starting from the user's index keeps git's stat cache: unchanged files are not read again.
  [[ -d $FORGE_ROOT/.git && -f $FORGE_ROOT/.git/index ]] && index=$FORGE_ROOT/.git/index
  if [[ -n $index ]]; then cp -- "$index" "$tmp" 2>/dev/null || return 1; fi
  if GIT_INDEX_FILE=$tmp forge_bounded "$FORGE_SNAPSHOT_SECONDS" git -C "$FORGE_ROOT" add -A -- . >/dev/null 2>&1 && [[ -f $tmp ]]; then
    mv -f -- "$tmp" "$out"
  else
    rm -f -- "$tmp" "$tmp.lock"
    return 1
  fi
}

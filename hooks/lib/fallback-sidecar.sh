# shellcheck shell=bash disable=SC2154 # the run's variables are set by reflect-stop-hook.sh, which sources this
# The Stop hook's bash fallback, sourced by reflect-stop-hook.sh only when the node helper cannot
# answer (no node, or it failed or ran out of time): the sidecar in pure bash. Reads the run's
# variables (git_ok, work, status_base, status_index, committed_expected, listing_note, blind_reason, the JSON
# strings of the identity, now_iso, FORGE_ATTEMPT).

# forge_fallback_sidecar FILE: the sidecar in pure bash (risk from the generated twin of the risk
# floor, no self-report: it cannot be checked without node). Always degraded.
forge_fallback_sidecar() {
  local out=$1 path record json_files='' first=1 threshold more='' unlisted=''
  local -a files=() sorted=() dirs=() pathspec=()
  # The lists git wrote must still be there: without them the floor would see no file and say "no
  # review". Gone (removed by a helper that was stopped after placing nothing): blind, fail closed.
  if [[ $git_ok == 1 && (! -f $work.status || (-n $committed_expected && ! -f $work.committed)) ]]; then
    git_ok=0
    blind_reason='the list of changed files was gone before the bash fallback could read it'
  fi
  if [[ $git_ok == 1 ]]; then
    # The same rule as the helper's (src/sidecar/git-status.ts): `? path`; `1 XY` + 7 fields + path
    # when the work tree differs (Y), or, against HEAD, also when staged (X); `u` + 9 fields + path.
    while IFS= read -r -d '' record; do
      path=''
      case "$record" in
        # A new folder git did not list file by file (--untracked-files=normal): listed below.
        '? '*/) dirs+=("${record#'? '}") ;;
        '? '*) path=${record#'? '} ;;
        '1 '*)
          if [[ ${record:3:1} != . || ($status_base == head && ${record:2:1} != .) ]]; then
            path=$record
            for _ in 1 2 3 4 5 6 7 8; do path=${path#* }; done
          fi
          ;;
        'u '*)
          path=$record
          for _ in 1 2 3 4 5 6 7 8 9 10; do path=${path#* }; done
          ;;
      esac
      [[ -n $path ]] || continue
      ((${#files[@]} < FORGE_FALLBACK_MAX_FILES)) || { more=1; break; }
      files+=("$path")
    done <"$work.status"
    # The files of the new folders, against the index the status read, as the helper lists them
    # (src/helper/changed-files.ts, untrackedFiles). Not listed: the folders stand in, and the floor fails closed.
    if [[ -z $more && ${#dirs[@]} -gt 0 ]]; then
      pathspec=("${dirs[@]}")
      ((${#dirs[@]} <= 1000)) || pathspec=()
      if if [[ -n $status_index ]]; then
        GIT_INDEX_FILE=$status_index GIT_LITERAL_PATHSPECS=1 forge_git ls-files -z --others --exclude-standard -- "${pathspec[@]}" >"$work.untracked"
      else
        GIT_LITERAL_PATHSPECS=1 forge_git ls-files -z --others --exclude-standard -- "${pathspec[@]}" >"$work.untracked"
      fi; then
        while IFS= read -r -d '' path; do
          [[ -n $path ]] || continue
          ((${#files[@]} < FORGE_FALLBACK_MAX_FILES)) || { more=1; break; }
          files+=("$path")
        done <"$work.untracked"
      else
        unlisted=${#dirs[@]}
        files+=("${dirs[@]}")
      fi
    fi
    # A path committed and still changed is listed twice here (counted twice against the cap, which
    # can only make the floor fail closed sooner) and once after the sort.
    while [[ -z $more && -f $work.committed ]] && IFS= read -r -d '' path; do
      [[ -n $path ]] || continue
      ((${#files[@]} < FORGE_FALLBACK_MAX_FILES)) || { more=1; break; }
      files+=("$path")
    done <"$work.committed"
  fi
  # Sorted like the node helper, each path once: byte order, NUL-separated so any file name survives.
  if ((${#files[@]} > 1)); then
    while IFS= read -r -d '' path; do sorted+=("$path"); done < <(printf '%s\0' "${files[@]}" | LC_ALL=C sort -zu)
    ((${#sorted[@]} == 0)) || files=("${sorted[@]}")
  fi
  # The bash twin of the risk floor is read only here: a run the helper serves never parses it.
  # shellcheck source=lib/risk-table.sh
  if source "$here/lib/risk-table.sh"; then
    forge_risk_threshold "${REFLECTION_RISK_THRESHOLD:-}" || FORGE_RISK_THRESHOLD=$FORGE_RISK_DEFAULT_THRESHOLD
    threshold=$FORGE_RISK_THRESHOLD
    forge_risk_evaluate "$threshold" "${files[@]}"
  else
    FORGE_RISK_SURFACE=none FORGE_RISK_SCORE=0 FORGE_RISK_NEEDS_REVIEW=false
    FORGE_RISK_REASON='risk floor unavailable: hooks/lib/risk-table.sh is missing'
  fi
  [[ -n $listing_note ]] && FORGE_RISK_REASON+="; $listing_note"
  # A floor that could not see every changed file cannot say "no review": it fails closed.
  if [[ -n $more ]]; then
    FORGE_RISK_NEEDS_REVIEW=true
    FORGE_RISK_REASON+="; review: only the first $FORGE_FALLBACK_MAX_FILES changed files were classified (the bash fallback's cap; node was unavailable or too slow), the rest were not seen"
  elif [[ $git_ok != 1 ]]; then
    FORGE_RISK_NEEDS_REVIEW=true
    FORGE_RISK_REASON+="; review: $blind_reason"
  elif [[ -n $unlisted ]]; then
    FORGE_RISK_NEEDS_REVIEW=true
    FORGE_RISK_REASON+="; review: the files in $unlisted new folder(s) could not be listed (git ls-files failed or ran out of the git budget), so the floor saw only the folders' names"
  fi
  for path in "${files[@]}"; do
    forge_json_string "$path"
    if [[ -n $first ]]; then json_files+=$'\n    '"$FORGE_JSON"; first=''; else json_files+=$',\n    '"$FORGE_JSON"; fi
  done
  [[ -n $json_files ]] && json_files+=$'\n  '
  forge_json_string "$FORGE_RISK_REASON"
  local reason_json=$FORGE_JSON
  {
    printf '{\n  "schema": "reflection.v1",\n'
    printf '  "task_ref": %s,\n  "agent": %s,\n  "session_id": %s,\n' "$task_json" "$agent_json" "$session_json"
    printf '  "timestamp": "%s",\n  "repo": %s,\n' "$now_iso" "$repo_json"
    printf '  "confidence": null,\n  "most_likely_wrong": null,\n  "known_not_in_diff": null,\n'
    printf '  "risk": {\n    "needs_review": %s,\n    "score": %s,\n    "surface": "%s",\n    "reason": %s\n  },\n' \
      "$FORGE_RISK_NEEDS_REVIEW" "$FORGE_RISK_SCORE" "$FORGE_RISK_SURFACE" "$reason_json"
    printf '  "files_changed": [%s],\n' "$json_files"
    printf '  "provenance": {\n    "source": "stop-hook",\n    "reflection_attempt": %s,\n    "degraded": true,\n    "reflection_mode": "%s"\n  }\n}\n' \
      "$FORGE_ATTEMPT" "$REFLECTION_MODE"
  } >"$out"
}

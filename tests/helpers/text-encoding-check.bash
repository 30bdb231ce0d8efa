#!/usr/bin/env bash
# text-encoding-check.bash json|task COUNT SEED: holds forge_json_string to forge_json_escape (the
# full escaper its plain-text shortcut skips), or the Stop hook's forge_task_key to the
# byte-by-byte version it replaced, over COUNT random texts. Prints
# `ok <plain> <escaped> <controls|cut> <bash version>` (how many texts of each kind were tried, and
# the bash that ran them: the hooks', tests/helpers/macos-like-bash.sh), or the first
# difference and exits 1. Run as its own bash, not inside a bats test (bats traps every command).
set -u
kit=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=../../hooks/lib/common.sh
source "$kit/hooks/lib/common.sh"
# forge_task_key lives in the Stop hook, which runs when sourced: the function alone is taken.
eval "$(sed -n '/^forge_task_key() {/,/^}/p' "$kit/hooks/reflect-stop-hook.sh")"
declare -F forge_task_key >/dev/null || { echo 'forge_task_key not found in the Stop hook'; exit 1; }

reference_task_key() {
  local LC_ALL=C s=$1 out='' c i
  for ((i = 0; i < ${#s}; i++)); do
    c=${s:i:1}
    if [[ $c == [A-Za-z0-9-] ]]; then
      out+=$c
    else
      # The byte's value, 0 to 255 (bash 3.2's printf gives a byte above 127 as a negative char).
      printf -v c '%d' "'$c"
      printf -v c '_%02x' $((c & 255))
      out+=$c
    fi
  done
  REFERENCE=${out:0:200}
}

# random_text N: N characters from one of three alphabets: plain, plain and JSON's specials, or
# everything (control characters and multibyte ones too).
ALPHABET=(a b Z 0 9 - _ . / '#' ' ' '"' "\\" é 漢 € $'\n' $'\r' $'\t' $'\x01' $'\x1b' $'\x1f' $'\x7f')
random_text() {
  local n=$1 out='' i size
  case $((RANDOM % 3)) in 0) size=6 ;; 1) size=16 ;; *) size=${#ALPHABET[@]} ;; esac
  for ((i = 0; i < n; i++)); do out+=${ALPHABET[RANDOM % size]}; done
  TEXT=$out
}

kind=$1 count=$2
RANDOM=$3
plain=0 escaped=0 other=0
for ((k = 0; k < count; k++)); do
  if [[ $kind == json ]]; then
    random_text $((RANDOM % 40))
    forge_json_string "$TEXT"
    got=$FORGE_JSON
    forge_json_escape "$TEXT"
    REFERENCE=$FORGE_JSON
    if [[ $TEXT == *[$'\x01'-$'\x1f\x7f']* ]]; then other=$((other + 1)); elif [[ $TEXT == *[\\\"]* ]]; then escaped=$((escaped + 1)); else plain=$((plain + 1)); fi
  else
    random_text $((RANDOM % 120))
    forge_task_key "$TEXT"
    reference_task_key "$TEXT"
    got=$FORGE_TASK_KEY
    if [[ $TEXT == *[^A-Za-z0-9-]* ]]; then escaped=$((escaped + 1)); else plain=$((plain + 1)); fi
    ((${#REFERENCE} == 200)) && other=$((other + 1))
  fi
  if [[ $got != "$REFERENCE" ]]; then
    printf 'differs for %q: %q, not %q\n' "$TEXT" "$got" "$REFERENCE"
    exit 1
  fi
done
echo "ok $plain $escaped $other $BASH_VERSION"

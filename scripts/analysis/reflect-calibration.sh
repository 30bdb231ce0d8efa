#!/usr/bin/env bash
# reflect-calibration.sh — P1: does the agent's self-reported confidence discriminate right work
# from wrong work on the self-rated-high subset?
#
# Usage:
#   reflect-calibration.sh --corpus FILE.jsonl [--high 0.7] [--chance 0.5] [--margin 0.05]
#                          [--bootstrap 2000] [--seed 0] [--format json|markdown|html] [--out FILE]
#   reflect-calibration.sh --help
#
#   --corpus FILE   JSON Lines of {"confidence": 0..1, "correct": true|false|0|1|"true"|"false"};
#                   - reads stdin. `forge-reflect corpus` writes one from sidecars and outcomes.
#   --high X        the self-rated-high subset is confidence >= X (default 0.7)
#   --chance X      the AUC of no discrimination (default 0.5)
#   --margin X      the pre-registered band above chance (default 0.05)
#   --bootstrap N   stratified bootstrap replicates (default 2000; 0 skips)
#   --seed S        bootstrap seed, a whole number (default 0): same seed, same interval
#   --format F      json (default), markdown, or html (a self-contained reliability diagram page)
#   --out FILE      with --format html: where to write it (default forge-reflect-report.html; - stdout)
#
# Pre-registered kill condition (printed to stderr before any result):
#   KILL when the 95% DeLong interval of the ROC AUC on the high subset lies at or below
#   chance + margin; CONTINUE when it lies above; INCONCLUSIVE when it straddles chance + margin,
#   or the subset has fewer than 10 correct or wrong rows, one distinct confidence, or more than
#   half of its correct/wrong pairs tied (an AUC of 0.5 made by ties is not evidence of chance).
#
# Requirements: bash, Node.js >= 20, and the forge-reflect kit built (npm run build) or
# `forge-reflect` on PATH. Offline. JSON or markdown on stdout; human text on stderr.
# Exit: 0 a report (whatever the verdict), 1 unreadable input, 2 bad flags.
set -euo pipefail

usage() { sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; }
die() { printf 'reflect-calibration.sh: %s\n' "$1" >&2; exit 2; }
is_fraction() { [[ $1 =~ ^(0(\.[0-9]+)?|1(\.0+)?|\.[0-9]+)$ ]]; }
is_whole() { [[ $1 =~ ^[0-9]{1,10}$ ]]; }

corpus='' high=0.7 chance=0.5 margin=0.05 bootstrap=2000 seed=0 format=json out=''
while (($# > 0)); do
  case $1 in
    -h | --help) usage; exit 0 ;;
    --corpus | --high | --chance | --margin | --bootstrap | --seed | --format | --out)
      (($# >= 2)) || die "$1 needs a value; see --help"
      case $1 in
        --corpus) corpus=$2 ;; --high) high=$2 ;; --chance) chance=$2 ;; --margin) margin=$2 ;;
        --bootstrap) bootstrap=$2 ;; --seed) seed=$2 ;; --format) format=$2 ;; --out) out=$2 ;;
      esac
      shift 2 ;;
    *) die "unknown argument '$1'; see --help" ;;
  esac
done
[[ -n $corpus ]] || die "--corpus FILE.jsonl is required (- reads stdin), e.g. --corpus corpus.jsonl"
is_fraction "$high" || die "--high '$high' is not a number from 0 to 1, e.g. --high 0.7"
is_fraction "$chance" || die "--chance '$chance' is not a number from 0 to 1, e.g. --chance 0.5"
is_fraction "$margin" || die "--margin '$margin' is not a number from 0 to 1, e.g. --margin 0.05"
is_whole "$bootstrap" || die "--bootstrap '$bootstrap' is not a whole number, e.g. --bootstrap 2000"
is_whole "$seed" || die "--seed '$seed' is not a whole number, e.g. --seed 42"
[[ $format == json || $format == markdown || $format == html ]] || die "--format '$format' is not json, markdown or html"
if [[ $corpus != - && ! -r $corpus ]]; then
  printf 'reflect-calibration.sh: cannot read %s; pass a readable JSONL file\n' "$corpus" >&2
  exit 1
fi

printf 'Kill condition (pre-registered): KILL if the 95%% DeLong interval of the AUC on confidence >= %s lies at or below %s + %s; INCONCLUSIVE if it straddles that, or the subset is tied, one-valued or has < 10 per class.\n' \
  "$high" "$chance" "$margin" >&2

cli="$(dirname "$0")/../../packages/forge-reflect/bin/forge-reflect.js"
args=(analyze calibration "--corpus=$corpus" "--high=$high" "--chance=$chance" "--margin=$margin" "--bootstrap=$bootstrap" "--seed=$seed" "--format=$format")
[[ -n $out ]] && args+=("--out=$out")
if [[ -f $cli ]]; then exec node "$cli" "${args[@]}"; fi
command -v forge-reflect >/dev/null 2>&1 || { printf 'reflect-calibration.sh: the forge-reflect CLI was not found; run npm run build in the kit or put forge-reflect on PATH\n' >&2; exit 1; }
exec forge-reflect "${args[@]}"

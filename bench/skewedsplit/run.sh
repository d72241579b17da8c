#!/usr/bin/env bash
# run.sh [SETS...]: the skewed-text table of BENCHMARKS.md ("Skewed text:
# priors and the linear SVM"). For each set, bench/prequential split writes a
# held-out split (train-n 2000, test-n 1000, 10% of the training documents
# labeled at random, seed 1), nmfstream eval --json scores our document
# classifier on it, and bench/skewedsplit + ref.py score scikit-learn's LinearSVC
# LinearSVC Platt-calibrated with and without Saerens's
# EM of the priors, and always-majority on the same TF-IDF rows and the same labeled
# documents. Prints one Markdown row per set and method. Sets: spam7 (7%
# spam), brown7 (7% "learned"), spam (as is), sotu, kjv, and
# versus:FILE:CLASS:SHARE (a tsv corpus, CLASS against the rest). Needs
# Debian's python3-sklearn. EVALFLAGS adds flags to eval (EVALFLAGS="--priors uniform");
# PERCLASS=10 labels 10 training documents of each class instead of a tenth
# at random (issue 26's protocol for skewed text, balanced by design).
set -euo pipefail
cd "$(dirname "$0")/../.."
D=${NMFSTREAM_DATA:-$HOME/.cache/nmfstream-data}
OUT=${OUT:-/tmp/skewedsplit}
SEED=${SEED:-1}
METHOD=${METHOD:-auto}
mkdir -p "$OUT"
go build -o "$OUT/prequential" ./bench/prequential
go build -o "$OUT/skewedsplit" ./bench/skewedsplit
go build -o "$OUT/nmfstream" ./cmd/nmfstream
data() {
  case $1 in
  spam) echo "--data spam:$D/spam" ;;
  spam7) echo "--data spam:$D/spam --rare spam:0.07" ;;
  brown) echo "--data brown:$D/brown" ;;
  brown7) echo "--data brown:$D/brown --rare learned:0.07" ;;
  sotu) echo "--data sotu:$D/sotu" ;;
  kjv) echo "--data kjv:$D/kjv" ;;
  # versus:FILE:CLASS:SHARE, a CLASS<tab>TEXT corpus made two classes,
  # CLASS (thinned to SHARE) against all the others, as the news sets of
  # BENCHMARKS.md's "Skewed text: the priors by mixture proportion
  # estimation" (bench/matsets/convert.py writes such files).
  versus:*:*:*)
    IFS=: read -r _ file class share <<<"$1"
    echo "--data tsv:$file --versus $class --rare $class:$share" ;;
  *) echo "run.sh: unknown set $1" >&2; return 1 ;;
  esac
}
echo "| set | method | accuracy | balanced | macro-F1 | EM priors |"
echo "|---|---|---|---|---|---|"
sets=("$@")
[ ${#sets[@]} -gt 0 ] || sets=(spam7 brown7 spam sotu kjv)
for s in "${sets[@]}"; do
  args=$(data "$s") || exit 1
  dir=$OUT/$(printf %s "$s" | tr /: __)-$SEED
  mkdir -p "$dir"
  # shellcheck disable=SC2046
  "$OUT/prequential" split $args ${PERCLASS:+--per-class $PERCLASS} --seed "$SEED" --train "$dir/train.arrow" --test "$dir/test.arrow"
  "$OUT/skewedsplit" --train "$dir/train.arrow" --test "$dir/test.arrow" --out "$dir"
  /usr/bin/python3 bench/skewedsplit/ref.py "$dir" >"$dir/ref.jsonl"
  # shellcheck disable=SC2086 # EVALFLAGS is a list of words
  "$OUT/nmfstream" eval --train "$dir/train.arrow" --test "$dir/test.arrow" --method "$METHOD" --seed "$SEED" ${EVALFLAGS:-} --json >"$dir/eval.json" 2>"$dir/eval.err"
  /usr/bin/python3 - "$s" "$dir" <<'PY'
import json, sys
s, d = sys.argv[1], sys.argv[2]
e = json.load(open(d + "/eval.json"))
rows = [("nmfstream eval (" + e.get("classifier", "?") + ")", e["accuracy"], e["balanced_accuracy"], e["macro_f1"], "")]
for line in open(d + "/ref.jsonl"):
    r = json.loads(line)
    rows.append((r["method"], r["accuracy"], r["balanced"], r["macro_f1"], ", ".join(f"{v:.3f}" for v in r.get("priors", []))))
for m, a, b, f, p in rows:
    print(f"| {s} | {m} | {a:.3f} | {b:.3f} | {f:.3f} | {p} |")
PY
done

#!/usr/bin/env bash
# run.sh [SETS...]: the skewed-text table of BENCHMARKS.md ("Skewed text:
# priors and the linear SVM"). For each set, bench/prequential split writes a
# held-out split (train-n 2000, test-n 1000, 10% of the training documents
# labeled at random, seed 1), nmfstream eval --json scores our document
# classifier on it, and bench/skewedsplit + ref.py score scikit-learn's LinearSVC
# LinearSVC Platt-calibrated with and without Saerens's
# EM of the priors, and always-majority on the same TF-IDF rows and the same labeled
# documents. Prints one Markdown row per set and method. Sets: spam7 (7%
# spam), brown7 (7% "learned"), spam (as is), sotu, kjv. Needs
# Debian's python3-sklearn. EVALFLAGS adds flags to eval (EVALFLAGS="--priors uniform").
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
  *) echo "run.sh: unknown set $1" >&2; return 1 ;;
  esac
}
echo "| set | method | accuracy | balanced | macro-F1 | EM priors |"
echo "|---|---|---|---|---|---|"
sets=("$@")
[ ${#sets[@]} -gt 0 ] || sets=(spam7 brown7 spam sotu kjv)
for s in "${sets[@]}"; do
  args=$(data "$s") || exit 1
  dir=$OUT/$s-$SEED
  mkdir -p "$dir"
  # shellcheck disable=SC2046
  "$OUT/prequential" split $args --seed "$SEED" --train "$dir/train.arrow" --test "$dir/test.arrow"
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

#!/usr/bin/env bash
# draws.sh [NMFSTREAM [DIR]]: issue 26's image checks over draws of the
# labels (BENCHMARKS.md, "Issue 26's checks over draws of the labels").
# For each SEED, builds the stream of DATA in file order with that seed's
# choice of labeled samples (`prequential make --data DATA --seed SEED`: 10%
# labeled, labels 100 samples late) into DIR (default /tmp/draws), runs
# NMFSTREAM stream (default /tmp/nmfstream) with the default predictor and,
# for each of METHODS, the 1-NN on the labeled codes (`--predictor
# nearest`), scores each from outside, and prints one Markdown row per
# seed (the default's accuracy, second half, ceiling and always-majority's
# accuracy, then each method's 1-NN), then the mean and standard
# deviation of each column and of each method's 1-NN lead over the first
# method's, in points. DATA=digits (the default; seed 1 is issue 26's
# stream), mnist:15000, or a text corpus (spam:DIR, …; MAKE="--rare
# spam:0.07" adds flags to make, METHODS="" skips the 1-NN runs);
# SEEDS="1 2 3" (default 1 to 20); METHODS="gnmf ssknmf" (default gnmf
# ssknmf nge n2s2l; gnmf first); FLAGS="--batch 50" adds flags to every
# stream run (the default's and the methods'). The digits take about a
# minute on 2 cores, MNIST 15k about a minute a seed.
set -euo pipefail
BIN=${1:-/tmp/nmfstream}
OUT=${2:-/tmp/draws}
DATA=${DATA:-digits}
SEEDS=${SEEDS:-$(seq 1 20)}
METHODS=${METHODS-gnmf ssknmf nge n2s2l}
MAKE=${MAKE:-}
FLAGS=${FLAGS:-}
cd "$(dirname "$0")/../.."
mkdir -p "$OUT"
go build -o "$OUT/prequential" ./bench/prequential
P=$OUT/prequential
name=${DATA%%:*}
acc() { "$P" score --in "$1" --pred "$2" | sed -E 's/.*"accuracy":([0-9.eE+-]+).*"second_half":([0-9.eE+-]+).*"ceiling":([0-9.eE+-]+).*"majority":([0-9.eE+-]+).*/\1 \2 \3 \4/'; }
header="| seed | default | second half | ceiling | always-majority |"
rule="|---|---|---|---|---|"
for m in $METHODS; do header="$header $m 1-NN |"; rule="$rule---|"; done
echo "$header"
echo "$rule"
for s in $SEEDS; do
  in=$OUT/${name}_s$s.arrow
  # shellcheck disable=SC2086 # MAKE holds several flags
  [ -f "$in" ] || "$P" make --data "$DATA" $MAKE --seed "$s" --out "$in" >/dev/null
  # shellcheck disable=SC2086 # FLAGS holds several flags
  "$BIN" stream --in "$in" --out "$OUT/p.jsonl" $FLAGS >/dev/null
  read -r a h c j < <(acc "$in" "$OUT/p.jsonl")
  row="$s $a $h $c $j"
  for m in $METHODS; do
    # shellcheck disable=SC2086 # FLAGS holds several flags
    "$BIN" stream --in "$in" --out "$OUT/p.jsonl" --method "$m" --predictor nearest $FLAGS >/dev/null
    read -r a _ _ _ < <(acc "$in" "$OUT/p.jsonl")
    row="$row $a"
  done
  echo "$row"
done | tee "$OUT/${name}_rows.txt" | awk '{printf "| %s |", $1; for (i = 2; i <= NF; i++) printf " %.4f |", $i; printf "\n"}'
# Mean and standard deviation of each column, how often the default fell
# below always-majority, then each method's lead over the first method
# (GNMF), in points.
awk -v methods="$METHODS" '
{ n++; for (i = 2; i <= NF; i++) { s[i] += $i; q[i] += $i * $i }
  for (j = 7; j <= NF; j++) { d = 100 * ($j - $6); ds[j] += d; dq[j] += d * d }
  if ($2 < $5) below++ }
# sd of a column from its sum t and sum of squares u (0 for one draw).
function sd(t, u,   mu, v) { if (n < 2) return 0; mu = t / n; v = (u - n * mu * mu) / (n - 1); return v > 0 ? sqrt(v) : 0 }
END {
  split(methods, m, " ")
  printf "| mean ± sd |"
  for (i = 2; i <= NF; i++) printf " %.4f ± %.4f |", s[i] / n, sd(s[i], q[i])
  printf "\n"
  printf "the default below always-majority on %d of %d draws\n", below, n
  for (j = 7; j <= NF; j++) { e = sd(ds[j], dq[j])
    printf "%s − %s, 1-NN, points: %+.2f ± %.2f (standard error %.2f, %d draws)\n", m[j - 5], m[1], ds[j] / n, e, e / sqrt(n), n }
}' "$OUT/${name}_rows.txt"

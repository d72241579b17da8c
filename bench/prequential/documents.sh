#!/usr/bin/env bash
# documents.sh [NMFSTREAM [DIR]]: the document streams table of BENCHMARKS.md
# ("Streams", "Document streams"). Builds each text stream once into DIR
# (default /tmp/docstreams), runs NMFSTREAM stream (default /tmp/nmfstream,
# built with `go build -o /tmp/nmfstream ./cmd/nmfstream`) with the default
# predictor and with --predictor spread, and the peers of
# `prequential peer`, one run at a time, and prints one Markdown row per
# run: accuracy, balanced accuracy, macro-F1 and the quarters, then the
# accuracy of always answering the stream's majority class. About 6
# minutes on 2 cores. STREAMS="sotu brown" limits it to some streams
# (HELDOUT=1: the eight held-out variants instead of the seven streams);
# PREDICTORS="graph" and PEERS="" to some runs; FLAGS="--codes only" adds
# flags to every stream run.
set -euo pipefail
BIN=${1:-/tmp/nmfstream}
OUT=${2:-/tmp/docstreams}
D=${NMFSTREAM_DATA:-$HOME/.cache/nmfstream-data}
if [ -n "${HELDOUT:-}" ]; then
  STREAMS=${STREAMS:-brown2 brownnews5 kjv2 kjvd500 sotu500 sotuf3 spam15 spamf5}
else
  STREAMS=${STREAMS:-spam spam7 sotu sotub brown brown7 kjv}
fi
PREDICTORS=${PREDICTORS-graph spread}
PEERS=${PEERS-knn nb svm last}
cd "$(dirname "$0")/../.."
mkdir -p "$OUT"
go build -o "$OUT/prequential" ./bench/prequential
P=$OUT/prequential
make_stream() {
  case $1 in
  spam) $P make --data spam:$D/spam --out "$OUT/$1.arrow" ;;
  spam7) $P make --data spam:$D/spam --rare spam:0.07 --out "$OUT/$1.arrow" ;;
  sotu) $P make --data sotu:$D/sotu --out "$OUT/$1.arrow" ;;
  sotub) $P make --data sotu:$D/sotu --shuffle 1 --block 2000 --out "$OUT/$1.arrow" ;;
  brown) $P make --data brown:$D/brown --out "$OUT/$1.arrow" ;;
  brown7) $P make --data brown:$D/brown --rare learned:0.07 --out "$OUT/$1.arrow" ;;
  kjv) $P make --data kjv:$D/kjv --out "$OUT/$1.arrow" ;;
  # Held-out variants: other orders, label draws, label rates, delays and
  # rare classes of the same corpora, for checking a default chosen on the
  # streams above (BENCHMARKS.md, "The hedge's rate").
  brown2) $P make --data brown:$D/brown --seed 2 --out "$OUT/$1.arrow" ;;
  brownnews5) $P make --data brown:$D/brown --rare news:0.05 --seed 3 --out "$OUT/$1.arrow" ;;
  kjv2) $P make --data kjv:$D/kjv --seed 2 --out "$OUT/$1.arrow" ;;
  kjvd500) $P make --data kjv:$D/kjv --delay 500 --seed 3 --out "$OUT/$1.arrow" ;;
  sotu500) $P make --data sotu:$D/sotu --shuffle 2 --block 500 --seed 2 --out "$OUT/$1.arrow" ;;
  sotuf3) $P make --data sotu:$D/sotu --frac 0.03 --seed 4 --out "$OUT/$1.arrow" ;;
  spam15) $P make --data spam:$D/spam --rare spam:0.15 --seed 3 --out "$OUT/$1.arrow" ;;
  spamf5) $P make --data spam:$D/spam --frac 0.05 --seed 2 --out "$OUT/$1.arrow" ;;
  *) echo "documents.sh: unknown stream $1" >&2; return 1 ;;
  esac
}
echo "| stream / predictor | accuracy | balanced | macro-F1 | quarters |"
echo "|---|---|---|---|---|"
# majority PRED: the accuracy of always answering the most frequent class of
# the samples PRED is scored on (score's "majority").
majority() {
  $P score --in "$OUT/$s.arrow" --pred "$1" | grep -o '"majority":[0-9.e-]*' | cut -d: -f2
}
for s in $STREAMS; do
  make_stream "$s"
  maj=
  for p in $PREDICTORS; do
    "$BIN" stream --in "$OUT/$s.arrow" --out "$OUT/$s-$p.jsonl" --predictor "$p" ${FLAGS:-} --json >"$OUT/$s-$p.json" 2>"$OUT/$s-$p.err"
    $P score --in "$OUT/$s.arrow" --pred "$OUT/$s-$p.jsonl" --row "$s $p"
    [ -n "$maj" ] || maj=$(majority "$OUT/$s-$p.jsonl")
  done
  for m in $PEERS; do
    $P peer --in "$OUT/$s.arrow" --out "$OUT/$s-$m.jsonl" --method "$m"
    $P score --in "$OUT/$s.arrow" --pred "$OUT/$s-$m.jsonl" --row "$s peer $m"
    [ -n "$maj" ] || maj=$(majority "$OUT/$s-$m.jsonl")
  done
  if [ -n "$maj" ]; then
    printf '| %s always-majority | %.3f | | | |\n' "$s" "$maj"
  fi
done

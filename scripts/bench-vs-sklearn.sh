#!/usr/bin/env bash
# Measures nmfstream and scikit-learn on the same shapes in one run and
# prints the ratios (issue: GNMF iteration and k-NN graph at 20000×784,
# K = 50, k = 10). Usage: scripts/bench-vs-sklearn.sh [openblas]
# With "openblas", the Go side is built with -tags openblas (needs
# libopenblas-dev). scikit-learn comes from Debian's python3-sklearn.
#
# This machine's speed drifts by a third within minutes, so the two sides
# are measured in pairs, back to back: PAIRS=n (default 3) pairs of each
# kind, one ratio per pair; the summary is the median pair and the range.
#
# Last, the whole batch fit of issue 30: the exact k-NN graph (k = 10)
# plus 100 updates, K = 50, on the first 10,000 MNIST training images
# (from $NMFSTREAM_DATA/mnist, default ~/.cache/nmfstream-data/mnist), in
# float64 and with Common.Float32, against kneighbors_graph + NMF 'mu' in
# float64 and float32, PAIRS rounds (bench/fitspeed; FIT_N=n1,n2,... for
# other sizes, FIT_N= to skip). CI does not run this script: nothing in
# .ci/run needs scikit-learn.
set -euo pipefail
cd "$(dirname "$0")/.."
tags=()
env=()
if [ "${1:-}" = openblas ]; then
  tags=(-tags openblas)
  env=(CGO_LDFLAGS=-lopenblas)
fi
py=/usr/bin/python3
$py -c 'import sklearn' 2>/dev/null || { echo "needs Debian's python3-sklearn (apt-get install python3-sklearn)" >&2; exit 1; }
pairs=${PAIRS:-3}

bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
env "${env[@]}" go test "${tags[@]}" -c -o "$bin/model.test" ./model
env "${env[@]}" go test "${tags[@]}" -c -o "$bin/graph.test" ./model/graph
env "${env[@]}" go build "${tags[@]}" -o "$bin/fitspeed" ./bench/fitspeed

# s/iter of a benchmark, from its one line of output.
siter() { awk -v name="$1" '$1 ~ "^"name"-" {for (i = 1; i < NF; i++) if ($(i+1) == "s/iter") print $i}'; }
json() { $py -c 'import json, sys; print(json.loads(sys.argv[1])[sys.argv[2]])' "$1" "$2"; }

results=()
for p in $(seq "$pairs"); do
  sk=$(json "$($py scripts/sklearn_bench.py nmf)" nmf_mu_iter_seconds)
  out=$(cd model && "$bin/model.test" -test.run '^$' -test.bench 'GNMFIter(Split)?20000x784$' -test.benchtime 3x)
  it=$(siter BenchmarkGNMFIter20000x784 <<<"$out")
  its=$(siter BenchmarkGNMFIterSplit20000x784 <<<"$out")
  echo "pair $p: scikit-learn NMF mu ${sk}s/iter, nmfstream GNMF ${it}s/iter, split ${its}s/iter" >&2
  results+=("iter $sk $it $its")
done
for p in $(seq "$pairs"); do
  sk=$(json "$($py scripts/sklearn_bench.py knn)" knn_graph_seconds)
  out=$(cd model/graph && "$bin/graph.test" -test.run '^$' -test.bench 'KNN(Split)?20000x784$' -test.benchtime 1x -test.timeout 30m)
  knn=$(awk '/^BenchmarkKNN20000x784/ {print $3 / 1e9}' <<<"$out")
  knns=$(awk '/^BenchmarkKNNSplit20000x784/ {print $3 / 1e9}' <<<"$out")
  echo "pair $p: scikit-learn kneighbors_graph ${sk}s, nmfstream ${knn}s, split ${knns}s" >&2
  results+=("knn $sk $knn $knns")
done
printf '%s\n' "${results[@]}" | $py -c '
import statistics, sys
iters, knns = [], []
for line in sys.stdin:
    f = line.split()
    (iters if f[0] == "iter" else knns).append([float(x) for x in f[1:]])
def show(name, ratios):
    ratios = sorted(ratios)
    print(f"{name}: median ratio {statistics.median(ratios):.2f} over {len(ratios)} pairs (" + ", ".join(f"{r:.2f}" for r in ratios) + ")")
show("GNMF iteration / scikit-learn NMF mu iteration", [it / sk for sk, it, _ in iters])
show("  the same with Engine.Split over the cores", [its / sk for sk, _, its in iters])
show("k-NN graph / kneighbors_graph", [knn / sk for sk, knn, _ in knns])
show("  the same with KNN.DenseSplit over the cores", [ks / sk for sk, _, ks in knns])
'
fit_n=${FIT_N-10000}
if [ -n "$fit_n" ]; then
  echo "batch fit, k-NN graph + 100 updates, K = 50, MNIST (time; ratio to scikit-learn float64 per round):"
  "$bin/fitspeed" --mnist "${NMFSTREAM_DATA:-$HOME/.cache/nmfstream-data}/mnist" --n "$fit_n" --pairs "$pairs" --iters 100
fi

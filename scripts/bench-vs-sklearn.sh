#!/usr/bin/env bash
# Measures nmfstream and scikit-learn on the same shapes in one run and
# prints the ratios (issue: GNMF iteration and k-NN graph at 20000×784,
# K = 50, k = 10). Usage: scripts/bench-vs-sklearn.sh [openblas]
# With "openblas", the Go side is built with -tags openblas (needs
# libopenblas-dev). scikit-learn comes from Debian's python3-sklearn.
# REPS=n (default 1) times each side n times and keeps the best, the same
# rule on both sides: on a shared machine other processes only add time.
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

echo "== scikit-learn" >&2
reps=${REPS:-1}
sk=$($py scripts/sklearn_bench.py "$reps")
echo "$sk" >&2
echo "== nmfstream ${1:-native}" >&2
iters=$(env "${env[@]}" go test "${tags[@]}" ./model -run '^$' -bench 'GNMFIter(Split)?20000x784' -benchtime 3x -count "$reps")
best() { awk -v name="$1" '$1 ~ "^"name"-" {for (i = 1; i < NF; i++) if ($(i+1) == "s/iter" && (m == "" || $i < m)) m = $i} END {print m}'; }
it=$(best BenchmarkGNMFIter20000x784 <<<"$iters")
its=$(best BenchmarkGNMFIterSplit20000x784 <<<"$iters")
knn=$(env "${env[@]}" go test "${tags[@]}" ./model/graph -run '^$' -bench 'KNN20000x784' -benchtime 1x -count "$reps" -timeout 30m | awk '/^BenchmarkKNN20000x784/ {if (m == "" || $3 < m) m = $3} END {print m/1e9}')
$py - "$sk" "$it" "$knn" "$its" <<'PY'
import json, sys
sk = json.loads(sys.argv[1]); it = float(sys.argv[2]); knn = float(sys.argv[3]); its = float(sys.argv[4])
mu = sk['nmf_mu_iter_seconds']
print(f"GNMF iteration: nmfstream {it:.3f} s, scikit-learn NMF mu {mu:.3f} s, ratio {it / mu:.2f}")
print(f"  with Engine.Split over the cores: nmfstream {its:.3f} s, ratio {its / mu:.2f}")
print(f"k-NN graph:     nmfstream {knn:.1f} s, scikit-learn {sk['knn_graph_seconds']:.1f} s, ratio {knn / sk['knn_graph_seconds']:.2f}")
PY

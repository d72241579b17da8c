#!/bin/sh
# Skewed text: LinearSVC, always-majority and nmfstream's LapRLS (with and
# without LapRLS.Priors) on the same TF-IDF rows and labeled subsets
# (BENCHMARKS.md, "Skewed text: priors and the linear SVM").
# Needs scripts/fetch-data.sh's corpora and python3-sklearn.
#   bench/skewed/run.sh [DIR]      (SETS='spam7|brown7' to run some only)
set -e
dir=${1:-$(mktemp -d)}
mkdir -p "$dir"
NMFSTREAM_LONG=1 go test ./model/classify -run "^TestSkewedDocuments\$/^(${SETS:-.*})\$" -v -count=1 -timeout 30m \
	-args -skewed-out "$dir" >"$dir/go.log"
/usr/bin/python3 "$(dirname "$0")/compare.py" "$dir"

#!/bin/sh
# Skewed text: LinearSVC, always-majority and nmfstream's LapRLS (laprls:
# eval --doc-codes off's, with LapRLS.Priors, GraphGuard, Masses and Pool; laprls-uniform:
# --priors uniform; laprls-noguard: without GraphGuard; laprls-nomasses:
# without Masses; laprls-nopool: Masses without Pool; laprls-neither:
# without any of them)
# on the same TF-IDF rows and labeled subsets (BENCHMARKS.md, "Skewed text:
# priors and the linear SVM", "Skewed text: the priors estimated, guarded
# and halved" and "Skewed text: the graph overruled").
# Needs scripts/fetch-data.sh's corpora and python3-sklearn.
#   bench/skewed/run.sh [DIR]      (SETS='spam7|brown7' to run some only;
#                                   SEEDS=8 for eight splits per set,
#                                   FIRST=17 to start at seed 17;
#                                   PAIRED='laprls-nopool laprls' for the
#                                   split-by-split difference of two rows;
#                                   PERCLASS=20 for 20 labels per class;
#                                   CODES=0.5 for laprls-pair, eval's
#                                   default --doc-codes pair (the rows'
#                                   fit and the fit with the codes
#                                   appended at that length, averaged),
#                                   laprls-codes, --doc-codes append (the
#                                   second fit alone), and laprls-codescv;
#                                   CODESMETHOD=gnmf for another method's
#                                   basis)
set -e
dir=${1:-$(mktemp -d)}
mkdir -p "$dir"
NMFSTREAM_LONG=1 go test ./model/classify -run "^TestSkewedDocuments\$/^(${SETS:-.*})\$" -v -count=1 -timeout 90m \
	-args -skewed-out "$dir" -skewed-seeds "${SEEDS:-3}" -skewed-first "${FIRST:-1}" -skewed-per-class "${PERCLASS:-0}" -skewed-codes "${CODES:-0}" -skewed-codes-method "${CODESMETHOD:-auto}" >"$dir/go.log"
/usr/bin/python3 "$(dirname "$0")/compare.py" "$dir" ${PAIRED:+--paired $PAIRED}

#!/bin/sh
# stages.sh BINARY PROFILE: the CPU time of a `nmfstream stream --cpuprofile`
# run per stage of the stream, as a Markdown table. Each sample goes to the
# first category, in the order below, that one of its stack's functions
# matches: the prediction (whatever of the graph it reads), the k-NN search
# before the rest of the insertion, the insertion before the factorization
# step that calls it, and so on. The parts that a
# stage runs on the other core (pipeline.Split) carry the stage's own
# functions in their stacks, so they are counted with it.
#
# Usage (see BENCHMARKS.md, "Stream profile"):
#	nmfstream stream --in m15.arrow --out p.jsonl --json --cpuprofile cpu.prof
#	sh bench/streamprof/stages.sh nmfstream cpu.prof
set -eu
[ $# -eq 2 ] || { echo "usage: stages.sh BINARY PROFILE" >&2; exit 2; }
go tool pprof -traces "$1" "$2" 2>/dev/null | awk '
function ms(s) {
	if (s ~ /ms$/) { sub(/ms$/, "", s); return s + 0 }
	if (s ~ /us$/) { sub(/us$/, "", s); return s / 1000 }
	if (s ~ /s$/) { sub(/s$/, "", s); return s * 1000 }
	return s + 0
}
function flush(   c, i) {
	if (w == 0) return
	c = "other (runtime, scheduler)"
	for (i = 1; i <= ncat; i++) if (stack ~ re[i]) { c = name[i]; break }
	t[c] += w; total += w; w = 0; stack = ""
}
BEGIN {
	ncat = 0
	# The step model.Online.PartialFitDeferred leaves runs under
	# stages.(*Learner).predictBeside, beside the spreading: it counts with the
	# factorization step.
	name[++ncat] = "factorization step (model.Online, less the insertion)"
	re[ncat] = "model\\.\\(\\*pendingStep\\)"
	name[++ncat] = "prediction (projection, label spreading)"
	re[ncat] = "stages\\.\\(\\*Learner\\)\\.predict|stages\\.\\(\\*spreader\\)|model\\.\\(\\*Projector\\)"
	name[++ncat] = "k-NN search (graph.search, scan, refine)"
	re[ncat] = "graph\\.\\(\\*Graph\\)\\.(search|scan|scanSplit|scanEuclid|refine)"
	name[++ncat] = "graph insertion and eviction, less the search"
	re[ncat] = "graph\\.\\(\\*Graph\\)\\.|model\\.\\(\\*Online\\)\\.insert"
	name[++ncat] = "factorization step (model.Online, less the insertion)"
	re[ncat] = "model\\.\\(\\*Online\\)|model\\.\\(\\*Engine\\)"
	name[++ncat] = "learner bookkeeping (stages.Learner, the rest)"
	re[ncat] = "stages\\.\\(\\*Learner\\)"
	name[++ncat] = "featurize (stages.Prepare)"
	re[ncat] = "stages\\.Prepare|main\\.featurizeStage"
	name[++ncat] = "decode (Arrow IPC reader)"
	re[ncat] = "sources\\.|arrow/ipc"
	name[++ncat] = "sinks (predictions out, checkpoints)"
	re[ncat] = "sinks\\.|main\\.\\(\\*stepWriter\\)"
	name[++ncat] = "garbage collection"
	re[ncat] = "runtime\\.gcBgMarkWorker|runtime\\.gcDrain|runtime\\.bgsweep|runtime\\.bgscavenge"
}
/^-----------\+/ { flush(); next }
/^ +[0-9.]+(ms|us|s) / { flush(); w = ms($1); stack = $2; next }
w > 0 { stack = stack "\n" $1 }
END {
	flush()
	printf "| stage | CPU s | share |\n|---|---|---|\n"
	for (i = 1; i <= ncat + 1; i++) {
		c = i <= ncat ? name[i] : "other (runtime, scheduler)"
		if (i > ncat && !(c in t)) continue
		if (c in shown) continue # a stage with two patterns
		shown[c] = 1
		printf "| %s | %.2f | %.1f%% |\n", c, t[c] / 1000, 100 * t[c] / total
	}
	printf "| total | %.2f | |\n", total / 1000
}'

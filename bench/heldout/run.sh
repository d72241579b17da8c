#!/bin/sh
# Held-out accuracy of `nmfstream eval` against its own ablation `--codes off` on the
# splits of `prequential split --data DATA --seed S` (S = 1 … SEEDS; DATA digits by default,
# or mnist:15000 / fashion:15000 with scripts/fetch-data.sh's files), one configuration a line:
# the mean accuracy and the paired difference to `--codes off` in points, with its standard
# error over the splits and the splits won and lost (BENCHMARKS.md, "The joint classifier's pair").
#   bench/heldout/run.sh DIR ['NAME flags…' …]
# e.g. bench/heldout/run.sh /tmp/ho 'default' 'gnmf --method gnmf' 'rank20 --rank 20'
set -e
dir=${1:?usage: bench/heldout/run.sh DIR [configuration …]}
shift
[ $# -gt 0 ] || set -- default
data=${DATA:-digits}
seeds=${SEEDS:-20}
mkdir -p "$dir"
go build -o "$dir/nmfstream" ./cmd/nmfstream
go build -o "$dir/prequential" ./bench/prequential
tag=$(echo "$data" | tr ':' '_')
for s in $(seq 1 "$seeds"); do
	[ -f "$dir/$tag-$s-tr.arrow" ] || "$dir/prequential" split --data "$data" --seed "$s" \
		--train "$dir/$tag-$s-tr.arrow" --test "$dir/$tag-$s-te.arrow" >/dev/null
done
run() { # NAME flags…: one accuracy a split into $dir/$tag-NAME.txt
	name=$1
	shift
	: >"$dir/$tag-$name.txt"
	for s in $(seq 1 "$seeds"); do
		"$dir/nmfstream" eval --train "$dir/$tag-$s-tr.arrow" --test "$dir/$tag-$s-te.arrow" --json "$@" 2>/dev/null |
			sed -n 's/.*"accuracy":\([0-9.]*\).*/\1/p' >>"$dir/$tag-$name.txt"
	done
}
run off --codes off
for c in "$@"; do
	# shellcheck disable=SC2086 # the configuration's flags are split on purpose
	run $c
done
for c in "$@"; do
	name=${c%% *}
	paste "$dir/$tag-$name.txt" "$dir/$tag-off.txt" | awk -v name="$name" '
		{ d = 100 * ($1 - $2); n++; s += d; ss += d * d; m += $1; o += $2; w += (d > 0); l += (d < 0) }
		END { mean = s / n; se = sqrt((ss - n * mean * mean) / (n - 1) / n)
			printf "%-12s %d splits: accuracy %.4f, --codes off %.4f, difference %+.2f ± %.2f points (wins %d, losses %d)\n", name, n, m / n, o / n, mean, se, w, l }'
done

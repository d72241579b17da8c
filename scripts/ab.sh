#!/usr/bin/env bash
# ab.sh [-n RUNS] [--timeout SECONDS] [--vs 'COMMAND B'] -- COMMAND A [ARG ...]
#
# Times whole processes with /usr/bin/time: one warm-up run of each command,
# then RUNS counted runs (default 5), A and B in turn (A B A B …), and prints
# for each figure (user, sys, cpu = user + sys, wall seconds, peak RSS MiB)
# its median (min–max), and with --vs the ratios A/B taken pair by pair, so
# that a comparison holds while a shared machine's speed drifts. COMMAND B
# is one string split as the shell splits words (quotes included); the
# commands' output is thrown away. --timeout bounds the whole call. It is
# what BENCHMARKS.md's paired figures are measured with.
set -euo pipefail
runs=5 timeout_s=0 vs=""
while [ $# -gt 0 ]; do
  case $1 in
  -n) runs=$2; shift 2 ;;
  --timeout) timeout_s=$2; shift 2 ;;
  --vs) vs=$2; shift 2 ;;
  --) shift; break ;;
  *) echo "ab.sh: unknown option $1 (usage: ab.sh [-n RUNS] [--timeout S] [--vs 'B'] -- A ...)" >&2; exit 2 ;;
  esac
done
[ $# -gt 0 ] || { echo "ab.sh: no command A after --" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "ab.sh: needs /usr/bin/time (apt-get install time)" >&2; exit 2; }
a=("$@")
b=()
if [ -n "$vs" ]; then eval "b=($vs)"; fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
start=$(date +%s)

# once CMD... appends "wall user sys maxrss_kb" of one run to $tmp/$tag.
once() {
  local tag=$1; shift
  if [ "$timeout_s" -gt 0 ] && [ $(( $(date +%s) - start )) -ge "$timeout_s" ]; then
    echo "ab.sh: --timeout $timeout_s s reached; printing the finished runs" >&2
    return 1
  fi
  /usr/bin/time -f '%e %U %S %M' -o "$tmp/one" "$@" >/dev/null 2>&1 || echo "ab.sh: $tag exited non-zero" >&2
  tail -n 1 "$tmp/one" >>"$tmp/$tag"
}

once warmA "${a[@]}"
[ ${#b[@]} -eq 0 ] || once warmB "${b[@]}"
for ((i = 0; i < runs; i++)); do
  once A "${a[@]}" || break
  [ ${#b[@]} -eq 0 ] || once B "${b[@]}" || break
done

# stats prints "median (min–max)" of the numbers on stdin.
stats() {
  sort -g | awk '{v[NR] = $1} END {
    if (NR == 0) { print "-"; exit }
    m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
    printf "%.4g (%.4g–%.4g)\n", m, v[1], v[NR] }'
}
col() { # col FILE FIELD: user 2, sys 3, cpu 2+3, wall 1, peak MiB 4/1024
  case $2 in
  cpu) awk '{print $2 + $3}' "$1" ;;
  mib) awk '{print $4 / 1024}' "$1" ;;
  *) awk -v f="$2" '{print $f}' "$1" ;;
  esac
}
echo "A: ${a[*]}"
[ ${#b[@]} -eq 0 ] || echo "B: ${b[*]}"
echo "counted runs: A $(wc -l <"$tmp/A" 2>/dev/null || echo 0)$([ ${#b[@]} -eq 0 ] || echo ", B $(wc -l <"$tmp/B" 2>/dev/null || echo 0)"); median (min–max)"
for t in A B; do
  [ -s "$tmp/$t" ] || continue
  for f in "user 2" "sys 3" "cpu cpu" "wall 1" "peakMiB mib"; do
    set -- $f
    printf '%s %-8s %s\n' "$t" "$1" "$(col "$tmp/$t" "$2" | stats)"
  done
done
if [ -s "$tmp/B" ]; then
  n=$(( $(wc -l <"$tmp/A") < $(wc -l <"$tmp/B") ? $(wc -l <"$tmp/A") : $(wc -l <"$tmp/B") ))
  for f in "user 2" "cpu cpu" "wall 1"; do
    set -- $f
    printf 'A/B %-6s %s\n' "$1" "$(paste <(col "$tmp/A" "$2" | head -n "$n") <(col "$tmp/B" "$2" | head -n "$n") |
      awk '$2 > 0 {print $1 / $2}' | stats)"
  done
fi

#!/usr/bin/env bash
# Runs every fuzz target of the module (each func FuzzXxx in a _test.go
# file) for the given number of seconds (default 60), one after the other,
# and fails on the first crash. A crash leaves its input under the
# package's testdata/fuzz/FuzzXxx/; commit it with the fix, so that
# `go test` replays it from then on.
#
#   scripts/fuzz.sh [seconds]
#
# FUZZ_PARALLEL sets the fuzzing workers per target (default: 1, for
# shared machines); FUZZ_MATCH restricts the targets to names matching
# the grep -E pattern; FUZZ_MINIMIZE is -fuzzminimizetime, the effort
# spent minimizing each new input (default 10x, ten runs: with Go's default
# of 60 s a 20 s run of FuzzCheckpoint spent its time minimizing and tried
# 54 inputs; with 10x it tries about 9,000).
set -euo pipefail
cd "$(dirname "$0")/.."

secs="${1:-60}"
case "$secs" in
  ''|*[!0-9]*|0) echo "fuzz.sh: seconds must be a positive integer, got '$secs'" >&2; exit 2 ;;
esac
par="${FUZZ_PARALLEL:-1}"
minimize="${FUZZ_MINIMIZE:-10x}"
match="${FUZZ_MATCH:-.}"

targets=$(git ls-files --cached --others --exclude-standard '*_test.go' | xargs grep -l '^func Fuzz' | while read -r f; do
  dir=$(dirname "$f")
  grep -o '^func Fuzz[A-Za-z0-9_]*' "$f" | sed "s|^func |./$dir |"
done | { grep -E " .*${match}" || true; } | sort -u)

if [ -z "$targets" ]; then
  echo "fuzz.sh: no fuzz targets match $match" >&2
  exit 1
fi

# Go's fuzzer can end a run with "context deadline exceeded" when the time
# is up while it is still handling a new input; that is no crash, and no
# crasher is written. A failure counts only with a new file in the target's
# testdata/fuzz folder, or without that message.
while read -r pkg name; do
  echo "== $name ($pkg, ${secs}s)"
  corpus="$pkg/testdata/fuzz/$name"
  before=$(ls "$corpus" 2>/dev/null | sort || true)
  log=$(mktemp)
  if go test -run '^$' -fuzz "^${name}\$" -fuzztime "${secs}s" -fuzzminimizetime "$minimize" -parallel "$par" "$pkg" 2>&1 | tee "$log"; then
    rm -f "$log"
    continue
  fi
  after=$(ls "$corpus" 2>/dev/null | sort || true)
  if [ "$before" = "$after" ] && grep -q "context deadline exceeded" "$log"; then
    echo "fuzz.sh: $name stopped at its deadline while handling an input (no crasher written): not a failure"
    rm -f "$log"
    continue
  fi
  rm -f "$log"
  echo "fuzz.sh: $name failed; a crasher, if any, is in $corpus" >&2
  exit 1
done <<< "$targets"

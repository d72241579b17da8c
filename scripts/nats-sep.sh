#!/usr/bin/env bash
# nats-sep.sh BINARY IN OUT: one worker and the driver as two processes on
# one machine, one partition: `nmfstream worker` with its embedded NATS
# server (the owner) and `nmfstream stream --nats URL --workers 0` (the
# driver) on the stream IN, predictions to OUT. Both are children of this
# shell, reaped by it, so that an outside timer of this script (scripts/ab.sh,
# /usr/bin/time) counts the CPU of both; nothing else is forked while they
# run (the wait for the server reads a fifo). BINARY must be built with
# -tags nats. Exits with the driver's status. BENCHMARKS.md, "Every sample
# answered, a common start, and the CPU of one worker".
set -u
B=${1:?usage: nats-sep.sh BINARY IN OUT}
IN=${2:?usage: nats-sep.sh BINARY IN OUT}
OUT=${3:?usage: nats-sep.sh BINARY IN OUT}
F=$(mktemp -u /tmp/nats-sep.XXXXXX)
mkfifo "$F"
PORT=$((20000 + RANDOM % 20000))
"$B" worker --listen 127.0.0.1:$PORT --namespace sep --partitions 1 2> "$F" &
W=$!
exec 3< "$F"
rm -f "$F"
read -r line <&3 # "embedded NATS server on …": it listens
"$B" stream --nats nats://127.0.0.1:$PORT --namespace sep --partitions 1 --workers 0 --in "$IN" --out "$OUT" > /dev/null
rc=$?
kill -INT $W
while read -r line <&3; do :; done # the worker's summary, until it exits
wait $W
exit $rc

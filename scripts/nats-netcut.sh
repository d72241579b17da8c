#!/usr/bin/env bash
# nats-netcut.sh: the chain on the owners survives a network cut (issue 29).
# Machines on this one, each a network namespace with one interface, eth0 on
# 10.78.0.0/24, whose other end is a port of a bridge in a hub namespace (no
# interface, address or route of the host's namespace is touched; the machines
# have no route off their subnet): n0, n1, n2 run a NATS JetStream node each
# (distributed/cmd/natsnode, one cluster, --replicas 3), w1..wN one
# `nmfstream worker --chain` each, d0 the driver `nmfstream stream --nats
# ... --workers 0`. Once --cut-at predictions are written, one machine is cut
# off (its port of the bridge set down: the machine's link loses its carrier,
# its TCP connections see silence) for --cut-for seconds, then healed.
#
# What it asserts, for each cut: the run ends; every prediction line of --out
# is byte for byte the uninterrupted run's (`stream --nats --workers P
# --partitions P` on an embedded server, which with one partition is
# `stream`'s), so every sample is predicted exactly once; and the counters of
# `stream --json` (records, samples, rejected, duplicates, late labels,
# labeled, correct, unpredicted, pending) equal the uninterrupted run's. It
# prints one JSON line per cut and exits 1 if any check fails.
#
# Usage: scripts/nats-netcut.sh [options]
#   --in F            the stream (default: MNIST 10k, made into --dir by bench/prequential)
#   --workers N       worker machines (default 3)
#   --partitions P    partitions (default 1)
#   --cut KIND...     worker (the worker that used most CPU so far: the owner),
#                     node (NATS node --node), driver; default "worker node"
#   --node I          the node a node cut takes off (default 0: the first URL)
#   --cut-at N        predictions written before the cut (default 3000)
#   --cut-for S       seconds cut off (default 8: past the pinned TTL, 2 s, and the
#                     clients' dead-connection detection, about 6 s)
#   --dir DIR         binaries, data, logs (default /tmp/nats-netcut)
#   --no-build        use the binaries already in DIR
#   clean             remove the namespaces of runs killed by SIGKILL (oc<PID>-*)
# Needs root, iproute2 (ip) and jq; the kernel's veth and bridge. Example:
#   sudo scripts/nats-netcut.sh --cut "worker node" --partitions 1
set -euo pipefail

cd "$(dirname "$0")/.."
DIR=/tmp/nats-netcut IN="" WORKERS=3 PARTS=1 CUTS="worker node" NODE=0 CUT_AT=3000 CUT_FOR=8 BUILD=1
if [ "${1:-}" = clean ]; then
  for ns in $(ip netns list | awk '{print $1}' | grep -E '^oc[0-9]+-' || true); do
    pid=${ns%%-*}; pid=${pid#oc}
    kill -0 "$pid" 2>/dev/null || ip netns del "$ns"
  done
  exit 0
fi
while [ $# -gt 0 ]; do
  case $1 in
    --in) IN=$2; shift 2 ;;
    --workers) WORKERS=$2; shift 2 ;;
    --partitions) PARTS=$2; shift 2 ;;
    --cut) CUTS=$2; shift 2 ;;
    --node) NODE=$2; shift 2 ;;
    --cut-at) CUT_AT=$2; shift 2 ;;
    --cut-for) CUT_FOR=$2; shift 2 ;;
    --dir) DIR=$2; shift 2 ;;
    --no-build) BUILD=0; shift ;;
    *) echo "nats-netcut: unknown option $1" >&2; exit 2 ;;
  esac
done
[ "$(id -u)" = 0 ] || { echo "nats-netcut: needs root (network namespaces)" >&2; exit 2; }
for c in ip jq; do command -v $c >/dev/null || { echo "nats-netcut: needs $c" >&2; exit 2; }; done
mkdir -p "$DIR"
if [ $BUILD = 1 ]; then
  go build -tags nats -o "$DIR/nmfstream" ./cmd/nmfstream
  go build -tags nats -o "$DIR/natsnode" ./distributed/cmd/natsnode
fi
if [ -z "$IN" ]; then
  IN=$DIR/m10k.arrow
  [ -s "$IN" ] || go run ./bench/prequential make --data mnist:10000 --out "$IN" >&2
fi
NMF=$DIR/nmfstream

PFX=oc$$ PIDS=() NSS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  for ns in "${NSS[@]}"; do ip netns del "$ns" 2>/dev/null || true; done
}
trap cleanup EXIT

# The uninterrupted run, on an embedded server on the host's loopback.
REF=$DIR/ref-p$PARTS
if [ ! -s "$REF.json" ] || [ "$REF.json" -ot "$IN" ] || [ $BUILD = 1 ]; then
  "$NMF" stream --nats --workers "$PARTS" --partitions "$PARTS" --in "$IN" --out "$REF.jsonl" --json > "$REF.json" 2> "$REF.err"
fi

HUB=$PFX-hub
ip netns add $HUB; NSS+=($HUB)
ip -n $HUB link add br0 type bridge
ip -n $HUB link set br0 up
ip -n $HUB link set lo up
# machine NAME HOSTNUM: a namespace with eth0 at 10.78.0.HOSTNUM on the hub's bridge.
machine() {
  local ns=$PFX-$1
  ip netns add "$ns"; NSS+=("$ns")
  ip -n $HUB link add "$PFX-$1" type veth peer name eth0 netns "$ns"
  ip -n $HUB link set "$PFX-$1" master br0 up
  ip -n "$ns" addr add "10.78.0.$2/24" dev eth0
  ip -n "$ns" link set eth0 up
  ip -n "$ns" link set lo up
}
cutoff() { ip -n $HUB link set "$PFX-$1" down; }
heal() { ip -n $HUB link set "$PFX-$1" up; }
cpu() { awk '{print $14 + $15}' "/proc/$1/stat" 2>/dev/null || echo 0; }

run_cut() { # KIND: one run of the cluster, the workers and the driver, with KIND cut off
  local kind=$1 log=$DIR/cut-$1 ns=cut$RANDOM
  rm -rf "$log"; mkdir -p "$log"
  local routes=nats://10.78.0.10:6222,nats://10.78.0.11:6222,nats://10.78.0.12:6222
  local urls=nats://10.78.0.10:4222,nats://10.78.0.11:4222,nats://10.78.0.12:4222
  local npids=() wpids=()
  for i in 0 1 2; do
    ip netns exec $PFX-n$i "$DIR/natsnode" -name "nmf-$i" -host "10.78.0.1$i" -port 4222 -cluster-port 6222 \
      -routes $routes -dir "$log/node-$i" > "$log/node-$i.log" 2>&1 &
    npids+=($!); PIDS+=($!)
  done
  for i in 0 1 2; do
    for _ in $(seq 100); do grep -q "clients on" "$log/node-$i.log" 2>/dev/null && break; sleep 0.1; done
  done
  for i in $(seq "$WORKERS"); do
    ip netns exec $PFX-w$i "$NMF" worker --chain --nats $urls --replicas 3 --namespace $ns --partitions "$PARTS" \
      > "$log/w$i.log" 2>&1 &
    wpids+=($!); PIDS+=($!)
  done
  local start=$(date +%s.%N)
  ip netns exec $PFX-d0 "$NMF" stream --nats $urls --namespace $ns --replicas 3 --workers 0 --partitions "$PARTS" \
    --in "$IN" --out "$log/p.jsonl" --json > "$log/stream.json" 2> "$log/stream.err" &
  local dpid=$!; PIDS+=($dpid)
  local c0=() ; for p in "${wpids[@]}"; do c0+=($(cpu "$p")); done
  while [ "$(wc -l < "$log/p.jsonl" 2>/dev/null || echo 0)" -lt "$CUT_AT" ] && kill -0 $dpid 2>/dev/null; do sleep 0.05; done
  local victim
  case $kind in
    worker) # the worker that used most CPU since the stream began holds the partition
      local best=-1 bi=1
      for i in "${!wpids[@]}"; do
        local d=$(( $(cpu "${wpids[$i]}") - ${c0[$i]} ))
        [ $d -gt $best ] && best=$d bi=$((i + 1))
      done
      victim=w$bi ;;
    node) victim=n$NODE ;;
    driver) victim=d0 ;;
  esac
  local at_cut=$(wc -l < "$log/p.jsonl" 2>/dev/null || echo 0)
  cutoff $victim
  sleep "$CUT_FOR"
  local at_heal=$(wc -l < "$log/p.jsonl" 2>/dev/null || echo 0)
  heal $victim
  local rc=0 waited=0
  while kill -0 $dpid 2>/dev/null && [ $waited -lt 600 ]; do sleep 1; waited=$((waited + 1)); done
  if kill -0 $dpid 2>/dev/null; then kill -9 $dpid; rc=124; else wait $dpid || rc=$?; fi
  local end=$(date +%s.%N)
  for p in "${wpids[@]}" "${npids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  # The checks.
  local identical=false counters=false lines dup
  lines=$(wc -l < "$log/p.jsonl" 2>/dev/null || echo 0)
  dup=$(jq -r .id "$log/p.jsonl" 2>/dev/null | sort | uniq -d | wc -l)
  cmp -s "$log/p.jsonl" "$REF.jsonl" && identical=true
  local keys='[.records, .samples, .rejected, .duplicates, .late_labels, .labeled, .correct, .unpredicted, .pending]'
  if [ $rc = 0 ] && [ "$(jq -c "$keys" "$log/stream.json")" = "$(jq -c "$keys" "$REF.json")" ]; then counters=true; fi
  local held=$(cat "$log"/w*.log | grep -c ": held;" || true)
  local retried=$(cat "$log"/w*.log | grep -c "retrying" || true)
  jq -nc --arg cut "$kind" --arg victim "$victim" --argjson at_cut "$at_cut" --argjson at_heal "$at_heal" \
    --argjson cut_for "$CUT_FOR" --argjson rc "$rc" --argjson lines "$lines" --argjson ref_lines "$(wc -l < "$REF.jsonl")" \
    --argjson dup "$dup" --argjson identical $identical --argjson counters $counters \
    --argjson seconds "$(echo "$end - $start" | bc)" --argjson held "$held" --argjson retried "$retried" \
    --argjson workers "$WORKERS" --argjson partitions "$PARTS" --slurpfile s "$log/stream.json" \
    '{cut: $cut, victim: $victim, workers: $workers, partitions: $partitions, predictions_at_cut: $at_cut, predictions_at_heal: $at_heal,
      cut_seconds: $cut_for, exit: $rc, seconds: $seconds, records_per_second: ($s[0].records_per_second // null),
      accuracy: ($s[0].accuracy // null), prediction_lines: $lines, reference_lines: $ref_lines, ids_twice: $dup,
      identical_to_uninterrupted: $identical, counters_exact: $counters, roles_taken: $held, role_retries: $retried}'
  [ $rc = 0 ] && [ $identical = true ] && [ $counters = true ] && [ "$dup" = 0 ]
}

machine n0 10; machine n1 11; machine n2 12; machine d0 30
for i in $(seq "$WORKERS"); do machine w$i $((20 + i)); done
status=0
for kind in $CUTS; do
  run_cut "$kind" || status=1
done
exit $status

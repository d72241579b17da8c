#!/usr/bin/env bash
# nats-cluster.sh [DIR]
# Starts a 3-node NATS JetStream cluster on loopback for the distributed learner
# (nmfstream worker --nats ...): nodes nmf-0, nmf-1, nmf-2 take clients on ports
# 4222, 4223, 4224 and routes on 6222, 6223, 6224, storing under DIR (default: a
# temporary directory). Each node is a process of distributed/cmd/natsnode (an
# embedded nats-server, no installation needed), built once into DIR.
# Their PIDs are in DIR/pids, one per line, node 0 first: kill one to lose a node.
# Stop them all with: kill $(cat DIR/pids)
# NMF_CLUSTER_PORT moves the client ports to it and the two after it (routes: 2000
# above each), for a second cluster on one machine.
#
# Example:
#   scripts/nats-cluster.sh /tmp/nmf-cluster
#   go run ./cmd/nmfstream worker --nats nats://127.0.0.1:4222,nats://127.0.0.1:4223,nats://127.0.0.1:4224 \
#       --replicas 3 --in ~/.cache/nmfstream-data/mnist/t10k-images-idx3-ubyte --workers 3
set -euo pipefail
DIR=${1:-$(mktemp -d /tmp/nmf-cluster.XXXXXX)}
mkdir -p "$DIR"
cd "$(dirname "$0")/.."
go build -tags nats -o "$DIR/natsnode" ./distributed/cmd/natsnode
: > "$DIR/pids"
PORT=${NMF_CLUSTER_PORT:-4222}
routes=nats://127.0.0.1:$((PORT + 2000)),nats://127.0.0.1:$((PORT + 2001)),nats://127.0.0.1:$((PORT + 2002))
for i in 0 1 2; do
  "$DIR/natsnode" -name "nmf-$i" -port $((PORT + i)) -cluster-port $((PORT + 2000 + i)) -routes "$routes" \
    -dir "$DIR/node-$i" > "$DIR/node-$i.log" 2>&1 &
  echo $! >> "$DIR/pids"
done
# Wait until every node takes clients.
for i in 0 1 2; do
  for _ in $(seq 100); do
    if grep -q "clients on" "$DIR/node-$i.log" 2>/dev/null; then break; fi
    sleep 0.1
  done
  grep -q "clients on" "$DIR/node-$i.log" || { echo "nats-cluster: node $i did not start (see $DIR/node-$i.log)" >&2; kill $(cat "$DIR/pids") 2>/dev/null; exit 1; }
done
echo "nats-cluster: 3 nodes on nats://127.0.0.1:$PORT,nats://127.0.0.1:$((PORT + 1)),nats://127.0.0.1:$((PORT + 2)) (data and logs in $DIR)"
echo "nats-cluster: stop with: kill \$(cat $DIR/pids)"

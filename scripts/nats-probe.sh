#!/usr/bin/env bash
# nats-probe.sh [DIR]
# Probes serve --nats as a hostile client and an unlucky operator would, on
# one NATS server of a stock server's message size (max_payload 1 MiB), and
# prints what each probe got (BENCHMARKS.md, "serve --nats probed"):
#   1. a body of 2 records of 600,000 features (about 8 MB, larger than a
#      NATS message): the service answers it (rejects naming the bound),
#      and answers the next request;
#   2. one request of 3,000 records of 3,000 classes: the classes past
#      --max-classes (1,000) are rejects, and the next request is answered
#      at once;
#   3. the NATS server stopped for 5 s and started again on its store:
#      serve says so on stderr, and the next request is answered;
#   4. 40 concurrent requests of 600 records (--max-inflight 64 admits them
#      all; at the default 16 the others get 429), then SIGTERM: every
#      client gets 200 or 503, and serve exits within its drain bound.
# Builds natsnode and nmfstream (-tags nats) into DIR (default: a temporary
# directory), uses client ports 4390 and 8390 on loopback, and leaves
# nothing running. Needs python3.
set -euo pipefail
DIR=${1:-$(mktemp -d /tmp/nmf-probe.XXXXXX)}
mkdir -p "$DIR"
cd "$(dirname "$0")/.."
go build -tags nats -o "$DIR/natsnode" ./distributed/cmd/natsnode
go build -tags nats -o "$DIR/nmfstream" ./cmd/nmfstream
NATS=nats://127.0.0.1:4390
HTTP=http://127.0.0.1:8390
node() {
  "$DIR/natsnode" -port 4390 -cluster-port 0 -max-payload 1048576 -dir "$DIR/store" >> "$DIR/node.log" 2>&1 &
  echo $! > "$DIR/node.pid"
  for _ in $(seq 100); do grep -q "clients on" "$DIR/node.log" 2>/dev/null && return; sleep 0.1; done
  echo "nats-probe: the NATS server did not start (see $DIR/node.log)" >&2; exit 1
}
cleanup() {
  kill "$(cat "$DIR/serve.pid" 2>/dev/null)" 2>/dev/null || true
  kill "$(cat "$DIR/node.pid" 2>/dev/null)" 2>/dev/null || true
}
trap cleanup EXIT
rm -rf "$DIR/store" "$DIR/node.log"
node
"$DIR/nmfstream" serve --nats "$NATS" --workers 1 --namespace probe --addr 127.0.0.1:8390 --max-inflight 64 > "$DIR/serve.log" 2>&1 &
echo $! > "$DIR/serve.pid"
for _ in $(seq 300); do grep -q "listening on" "$DIR/serve.log" 2>/dev/null && break; sleep 0.1; done

python3 - "$HTTP" probe12 <<'EOF'
import json, random, sys, time, urllib.request
base = sys.argv[1]
def post(body, timeout=1800):
    t = time.time()
    try:
        r = urllib.request.urlopen(urllib.request.Request(base + "/v1/records", data=body, method="POST"), timeout=timeout)
        return r.status, json.loads(r.read()), time.time() - t
    except urllib.error.HTTPError as e:
        return e.code, {}, time.time() - t
small = b'{"id":"s%d","x":[1,2,3]}\n'
random.seed(1)
wide = "".join(json.dumps({"id": "w%d" % i, "x": [round(random.random(), 3) for _ in range(600000)]}) + "\n" for i in range(2)).encode()
st, d, s = post(wide)
print("1. wide body of %d bytes: status %d in %.1f s, %d rejected (%s)" % (len(wide), st, s, len(d.get("rejected", [])), d["rejected"][0]["reason"][:90] if d.get("rejected") else ""))
st, d, s = post(small % 1)
print("   next request: status %d in %.2f s" % (st, s))
many = "".join(json.dumps({"id": "c%d" % i, "x": [random.random() for _ in range(3)], "label": "class%d" % i}) + "\n" for i in range(3000)).encode()
st, d, s = post(many)
print("2. 3,000 classes in one request: status %d in %.1f s, %d predictions, %d rejected" % (st, s, len(d.get("predictions", [])), len(d.get("rejected", []))))
st, d, s = post(small % 2)
print("   next request: status %d in %.2f s" % (st, s))
EOF

kill -INT "$(cat "$DIR/node.pid")"; sleep 5; node
python3 - "$HTTP" <<'EOF'
import sys, time, urllib.request
t = time.time()
r = urllib.request.urlopen(urllib.request.Request(sys.argv[1] + "/v1/records", data=b'{"id":"after","x":[1,2,4]}\n', method="POST"), timeout=600)
print("3. after the NATS server's restart: status %d in %.1f s" % (r.status, time.time() - t))
EOF
grep -E "unreachable|reconnected" "$DIR/serve.log" | sed 's/^/   serve: /'

python3 - "$HTTP" "$(cat "$DIR/serve.pid")" <<'EOF'
import json, os, signal, sys, threading, time, urllib.request
base, pid = sys.argv[1], int(sys.argv[2])
body = lambda c: "".join(json.dumps({"id": "t%d-%d" % (c, i), "x": [i % 7, i % 5, i % 3, 1, 2], "label": "abc"[i % 3]}) + "\n" for i in range(600)).encode()
status = {}
def client(c):
    try:
        r = urllib.request.urlopen(urllib.request.Request(base + "/v1/records", data=body(c), method="POST"), timeout=900)
        status[c] = r.status
    except urllib.error.HTTPError as e:
        status[c] = e.code
    except Exception as e:
        status[c] = type(e).__name__
ts = [threading.Thread(target=client, args=(c,)) for c in range(40)]
for t in ts: t.start()
time.sleep(1)
t0 = time.time()
os.kill(pid, signal.SIGTERM)
while True:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        break
    if open("/proc/%d/stat" % pid).read().split()[2] == "Z":
        break
    time.sleep(0.05)
gone = time.time() - t0
for t in ts: t.join()
counts = {}
for v in status.values(): counts[v] = counts.get(v, 0) + 1
print("4. SIGTERM with 40 requests in flight: serve gone in %.1f s; answers %s" % (gone, dict(sorted(counts.items(), key=str))))
EOF
wait "$(cat "$DIR/serve.pid")" 2>/dev/null || true

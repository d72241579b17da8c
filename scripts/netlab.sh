#!/usr/bin/env bash
# netlab.sh: simulated machines on this one, in network namespaces, for the
# distributed learner, the chain on the owners (issue 29). Each machine is a network namespace with one
# interface, eth0 (10.77.0.0/24), a TAP device whose other end is a switch
# process (bench/netlab switch): it learns the machines' MAC addresses, delivers
# every frame --delay MS milliseconds after it was sent (MS one way between any
# two machines, 2·MS round trip) and drops everything from and to a machine
# that is cut off. (The switch is a process because this machine's kernel has
# no netem queueing discipline, CONFIG_NET_SCH_NETEM unset, so neither a kernel
# bridge nor tc can delay; the switch's own CPU is reported apart, as the
# network's.) No interface, address or route of the host's namespace is
# touched, and the machines have no route but their subnet, so their traffic
# stays between the namespaces made here.
#
# The machines: n0, n1, n2 run a NATS JetStream node each (distributed/cmd/natsnode)
# as one cluster; w1..wN run one `nmfstream worker` each (the owners of the
# partitions); d0 runs the driver, `nmfstream stream --nats ... --workers 0`,
# which featurizes, sends each batch to the owners and writes their answers. Everything is torn down on exit
# (a trap): the processes started here (by PID), then the namespaces, which
# takes their interfaces with them.
#
# Usage:
#   scripts/netlab.sh run   [options]   one run: prints one JSON line (below)
#   scripts/netlab.sh sweep [options]   `stream` on one machine, then a run for each
#                                       --workers-list × --delays, one JSON line each
#   scripts/netlab.sh check [options]   failure test: a run with a worker cut off by
#                                       the network mid-stream, then one with a NATS
#                                       node cut off; exits 1 unless every sample was
#                                       predicted exactly once and counted exactly once by
#                                       the owners (and, for a worker, a partition was taken
#                                       over after the cut)
#   scripts/netlab.sh calibrate [opts]  sweep into --out (default DIR/runs.jsonl), then calibrate the
#                                       cost model on it: go run ./distributed/cmd/scalemodel -calibrate
#   scripts/netlab.sh clean             removes the namespaces of runs killed by SIGKILL
#                                       (named nl<PID>-*, PID no longer running)
# Options:
#   --in F            the stream (default: the digits stream, made into --dir if absent)
#   --workers N       worker machines (default 2)          --workers-list "1 2 4" (sweep)
#   --delay MS        one-way delay (default 0)            --delays "0 1 10" (sweep)
#   --replicas R      replicas of the streams and buckets (default 3: a node may be lost)
#   --partitions P    partitions (default: N, one per worker)
#   --cut worker|node check only that one cut (default: both, one run each): the worker
#                     that used most CPU since the stream began (it owns partitions), or NATS node n2
#   --cut-at N        predictions written before the cut (default 300: mid-stream)
#   --cut-for S       seconds the machine stays cut off (default 6; > --pinned-ttl, so roles move)
#   --dir DIR         binaries, data, logs (default /tmp/netlab); keep it to rebuild nothing
#   --out F           sweep: also append the JSON lines to F
#   --no-build        use the binaries already in DIR/bin
#   -- FLAGS...       more flags for the driver and the single machine (the learner's settings:
#                     --rank, --window, …; the owners learn with the driver's)
# A run's JSON line: mode ("nats" or "single"), workers, partitions, delay_ms, records,
# samples (the owners' count, from the driver), expected (the input's samples), predicted
# (prediction lines), duplicates, missing, unknown (netlab preds), batches (the driver's
# batches answered), seconds, records_per_second, accuracy (outside scorer), scored_missing,
# cpu_seconds (all processes: driver + workers + NATS nodes, during the stream),
# cpu_per_record_ms, cpu (each role's share, and the switch's, which cpu_seconds leaves
# out: it stands for the network), idle_cpu_per_s (the nodes' and workers' CPU seconds per
# second over 3 s before the stream), takeovers (partitions the workers took, their first
# included), owner_batches (batch shares the owners answered, replays included), cut (check
# only: the machine, the predictions written when it was cut and healed, the seconds cut off,
# the partitions taken before the cut and after it).
# CPU seconds of the nodes and workers are read from /proc/PID/stat when the driver
# starts and ends; the driver's from /usr/bin/time.
#
# Needs root, iproute2 (ip), /dev/net/tun, jq. Example:
#   sudo scripts/netlab.sh sweep --workers-list "1 2 4" --delays "0 1 10" --out /tmp/netlab/runs.jsonl
#   sudo scripts/netlab.sh calibrate     # the same sweep, then the cost model calibrated on it
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$PWD
CMD=${1:-}
[ -n "$CMD" ] && shift || true
DIR=/tmp/netlab IN="" WORKERS=2 DELAY=0 REPLICAS=3 PARTITIONS="" CUT="worker node" CUT_AT=300 CUT_FOR=6
WLIST="1 2 4" DLIST="0 1 10" OUT="" BUILD=1 EXTRA=()
while [ $# -gt 0 ]; do
  case $1 in
    --in) IN=$2; shift 2 ;;
    --workers) WORKERS=$2; shift 2 ;;
    --workers-list) WLIST=$2; shift 2 ;;
    --delay) DELAY=$2; shift 2 ;;
    --delays) DLIST=$2; shift 2 ;;
    --replicas) REPLICAS=$2; shift 2 ;;
    --partitions) PARTITIONS=$2; shift 2 ;;
    --cut) CUT=$2; shift 2 ;;
    --cut-at) CUT_AT=$2; shift 2 ;;
    --cut-for) CUT_FOR=$2; shift 2 ;;
    --dir) DIR=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    --no-build) BUILD=0; shift ;;
    --) shift; EXTRA=("$@"); break ;;
    *) echo "netlab: unknown option $1 (see the head of $0)" >&2; exit 2 ;;
  esac
done

die() { echo "netlab: $*" >&2; exit 1; }
log() { echo "netlab: $*" >&2; }

prereq() {
  [ "$(id -u)" = 0 ] || die "needs root (ip netns add)"
  command -v ip >/dev/null || die "needs iproute2 (ip)"
  [ -c /dev/net/tun ] || die "needs /dev/net/tun (TAP devices)"
  command -v jq >/dev/null || die "needs jq"
  ip netns add "nl$$-probe" 2>/dev/null || die "cannot create network namespaces here (ip netns add failed)"
  ip netns del "nl$$-probe"
}

clean_stale() {
  local ns pid
  for ns in $(ip netns list | awk '{print $1}' | grep -E '^nl[0-9]+-' || true); do
    pid=${ns#nl}; pid=${pid%%-*}
    if ! kill -0 "$pid" 2>/dev/null; then
      for p in $(ip netns pids "$ns" 2>/dev/null); do kill -9 "$p" 2>/dev/null || true; done
      ip netns del "$ns" 2>/dev/null && log "removed stale namespace $ns"
    fi
  done
}

build() {
  mkdir -p "$DIR/bin"
  if [ "$BUILD" = 1 ]; then
    log "building into $DIR/bin"
    go build -o "$DIR/bin/" ./cmd/nmfstream ./bench/prequential ./bench/netlab
    go build -tags nats -o "$DIR/bin/" ./distributed/cmd/natsnode
  fi
  for b in nmfstream prequential netlab natsnode; do [ -x "$DIR/bin/$b" ] || die "missing $DIR/bin/$b (drop --no-build)"; done
  if [ -z "$IN" ]; then
    IN=$DIR/d2.arrow
    [ -s "$IN" ] || "$DIR/bin/prequential" make --data digits --shuffle 2 --seed 2 --out "$IN" >&2
  fi
  [ -s "$IN" ] || die "--in $IN: no such file"
}

# ---- the lab: namespaces, links, processes --------------------------------

P=nl$$          # prefix of this run's namespaces
MACHINES=()     # namespaces made, for teardown
PIDS=()         # processes started, for teardown
declare -A ADDR # machine → address
declare -A PID  # role (n0, w1, …) → PID

teardown() {
  local p ns
  for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for _ in $(seq 30); do
    local alive=0
    for p in "${PIDS[@]}"; do kill -0 "$p" 2>/dev/null && alive=1; done
    [ $alive = 0 ] && break
    sleep 0.1
  done
  for p in "${PIDS[@]}"; do kill -KILL "$p" 2>/dev/null || true; done
  # Anything still in a machine (a child of /usr/bin/time, say) was started here too.
  for ns in "${MACHINES[@]}"; do
    for p in $(ip netns pids "$ns" 2>/dev/null); do kill -KILL "$p" 2>/dev/null || true; done
    ip netns del "$ns" 2>/dev/null || true
  done
  PIDS=() MACHINES=()
}

# teardown_all: the last resort of the main shell (a run works in a subshell,
# whose arrays the main shell does not see): every process in a namespace of
# this invocation (all started here), then the namespaces.
teardown_all() {
  local ns p f
  for f in "$DIR"/run-"$P"-*/switch.pid; do [ -s "$f" ] && kill -TERM "$(cat "$f")" 2>/dev/null || true; done
  for ns in $(ip netns list | awk '{print $1}' | grep -E "^$P-" || true); do
    for p in $(ip netns pids "$ns" 2>/dev/null); do kill -KILL "$p" 2>/dev/null || true; done
    ip netns del "$ns" 2>/dev/null || true
  done
}
trap teardown_all EXIT
trap 'exit 130' INT TERM

# lab_up: the machines' namespaces, the switch between them, their addresses.
lab_up() {
  local m i ports=()
  declare -gA INDEX=([d0]=2 [n0]=10 [n1]=11 [n2]=12)
  for j in $(seq "$WORKERS"); do INDEX[w$j]=$((20 + j)); done
  for m in "${!INDEX[@]}"; do
    ip netns add "$P-$m"
    MACHINES+=("$P-$m")
    ports+=("$m=/var/run/netns/$P-$m")
  done
  SOCK=$RUN/switch.sock
  "$DIR/bin/netlab" switch --delay "${DELAY}ms" --control "$SOCK" "${ports[@]}" > "$RUN/switch.log" 2>&1 &
  PID[switch]=$!
  PIDS+=($!)
  echo $! > "$RUN/switch.pid"
  for _ in $(seq 100); do grep -q ready "$RUN/switch.log" 2>/dev/null && break; sleep 0.1; done
  grep -q ready "$RUN/switch.log" || die "the switch did not start ($RUN/switch.log)"
  for m in "${!INDEX[@]}"; do
    ip -n "$P-$m" link set lo up
    ip -n "$P-$m" addr add "10.77.0.${INDEX[$m]}/24" dev eth0
    ip -n "$P-$m" link set eth0 up
    ADDR[$m]=10.77.0.${INDEX[$m]}
  done
}

# start ROLE CMD...: runs CMD in ROLE's namespace, logging to DIR/run/ROLE.log.
start() {
  local m=$1; shift
  ip netns exec "$P-$m" "$@" > "$RUN/$m.log" 2>&1 &
  PID[$m]=$!
  PIDS+=($!)
}

nats_up() {
  local routes="nats://${ADDR[n0]}:6222,nats://${ADDR[n1]}:6222,nats://${ADDR[n2]}:6222"
  URLS="nats://${ADDR[n0]}:4222,nats://${ADDR[n1]}:4222,nats://${ADDR[n2]}:4222"
  for i in 0 1 2; do
    start "n$i" "$DIR/bin/natsnode" -name "nmf-$i" -host "${ADDR[n$i]}" -port 4222 -cluster-port 6222 \
      -routes "$routes" -dir "$RUN/store-n$i"
  done
  for i in 0 1 2; do
    for _ in $(seq 200); do grep -q "clients on" "$RUN/n$i.log" 2>/dev/null && break; sleep 0.1; done
    grep -q "clients on" "$RUN/n$i.log" || die "NATS node n$i did not start (see $RUN/n$i.log)"
  done
  # Every node answers JetStream requests once the cluster has a meta leader.
  ip netns exec "$P-d0" "$DIR/bin/netlab" ready --nats "$URLS" --timeout 60s || die "the NATS cluster did not form"
}

# cpu PID: user + system seconds of a live process, from /proc (0 if gone).
cpu() {
  local f
  f=$(cat "/proc/$1/stat" 2>/dev/null) || { echo 0; return; }
  f=${f##*) }
  awk -v t="$(getconf CLK_TCK)" '{printf "%.3f", ($12 + $13) / t}' <<<"$f"
}

# cut M on|off: the switch drops everything M sends and everything sent to it,
# or stops dropping.
cut() {
  local what=cut
  [ "$2" = off ] && what=heal
  "$DIR/bin/netlab" control --control "$SOCK" "$what" "$1"
}

# spread P: waits until the workers hold the P partitions, none more than
# its share ⌈P/N⌉ (each worker logs "<role> taken" and "<role> released"),
# for up to 90 s.
spread() {
  local share=$(( ($1 + WORKERS - 1) / WORKERS )) j t r h sum most
  for _ in $(seq 450); do
    sum=0 most=0
    for j in $(seq "$WORKERS"); do
      t=$(grep -c ' taken$' "$RUN/w$j.log" || true)
      r=$(grep -c ' released$' "$RUN/w$j.log" || true)
      h=$((t - r)) sum=$((sum + t - r))
      [ $h -gt $most ] && most=$h
    done
    [ $sum = "$1" ] && [ $most -le $share ] && return 0
    sleep 0.2
  done
  return 1
}

# one_run [CUTROLE]: the lab up, workers, the driver through the whole stream,
# the outside scorer, the checks; prints the run's JSON line; the lab down.
one_run() {
  local cutrole=${1:-} parts=${PARTITIONS:-$WORKERS}
  trap teardown EXIT # this runs in a subshell, which does not inherit the main shell's trap
  trap "exit 130" INT TERM
  RUN=$DIR/run-$P-w$WORKERS-d$DELAY${cutrole:+-cut-$cutrole}
  rm -rf "$RUN"; mkdir -p "$RUN"
  lab_up
  nats_up
  # The namespace's settings, the same for every process; the learner's
  # (EXTRA) are the driver's alone: the owners build theirs from them.
  local ns=(--namespace nl --partitions "$parts" --pinned-ttl 2s --replicas "$REPLICAS")
  for j in $(seq "$WORKERS"); do
    start "w$j" "$DIR/bin/nmfstream" worker --nats "$URLS" --workers 1 --json "${ns[@]}"
  done
  local roles=(n0 n1 n2) c0=() j
  for j in $(seq "$WORKERS"); do roles+=("w$j"); done
  # Every worker up (workers started at once on a new namespace of a fresh
  # cluster take 20-40 s), then the partitions spread over them
  # (Worker.mayPull: each worker holds at most its share), so that the
  # stream measures the steady state, not the moves.
  for j in $(seq "$WORKERS"); do
    for _ in $(seq 900); do grep -q "owner(s) running" "$RUN/w$j.log" 2>/dev/null && break; sleep 0.1; done
    grep -q "owner(s) running" "$RUN/w$j.log" || die "worker w$j did not start within 90 s ($RUN/w$j.log)"
  done
  spread "$parts" || die "the $parts partitions did not spread over the $WORKERS workers within 90 s"
  # The idle CPU of the nodes and workers, all up, before the stream: 3 s.
  local ia=0 ib=0
  for m in "${roles[@]}"; do ia=$(awk -v x=$ia -v y="$(cpu "${PID[$m]}")" 'BEGIN{print x + y}'); done
  sleep 3
  for m in "${roles[@]}"; do ib=$(awk -v x=$ib -v y="$(cpu "${PID[$m]}")" 'BEGIN{print x + y}'); done
  local idle; idle=$(awk -v a=$ia -v b=$ib 'BEGIN{printf "%.4f", (b - a) / 3}')
  for m in "${roles[@]}"; do c0+=("$(cpu "${PID[$m]}")"); done
  local sw0; sw0=$(cpu "${PID[switch]}")
  ip netns exec "$P-d0" /usr/bin/time -o "$RUN/d0.time" -f "%U %S %e %M" \
    "$DIR/bin/nmfstream" stream --nats "$URLS" --workers 0 --owner-timeout 60s --in "$IN" --out "$RUN/pred.jsonl" \
    --json "${ns[@]}" "${EXTRA[@]}" > "$RUN/d0.json" 2> "$RUN/d0.log" &
  local drv=$!
  PIDS+=($drv)
  local cutinfo=null
  if [ -n "$cutrole" ]; then
    local victim
    local at=0 healed t0 t1
    until [ "$at" -ge "$CUT_AT" ]; do
      kill -0 $drv 2>/dev/null || die "the stream ended with $at predictions, before the cut at --cut-at $CUT_AT ($RUN/d0.log)"
      sleep 0.1
      at=$(wc -l < "$RUN/pred.jsonl" 2>/dev/null || echo 0)
    done
    case $cutrole in
      worker)
        # The worker that has worked most since the stream began: it owns
        # partitions (they go to whoever pulls first, so one worker may own all).
        local best=-1 used
        for i in "${!roles[@]}"; do
          case ${roles[$i]} in w*)
            used=$(awk -v a="${c0[$i]}" -v b="$(cpu "${PID[${roles[$i]}]}")" 'BEGIN{printf "%.3f", b - a}')
            if awk -v u="$used" -v b="$best" 'BEGIN{exit !(u > b)}'; then best=$used victim=${roles[$i]}; fi ;;
          esac
        done ;;
      node) victim=n2 ;;
    esac
    local taken0; taken0=$(cat "$RUN"/w*.log | grep -c ' taken$' || true)
    log "cutting $victim off for ${CUT_FOR}s, $at predictions written"
    t0=$(date +%s.%N)
    cut "$victim" on
    sleep "$CUT_FOR"
    cut "$victim" off
    t1=$(date +%s.%N)
    healed=$(wc -l < "$RUN/pred.jsonl")
    log "healed $victim, $healed predictions written"
    cutinfo=$(jq -nc --arg m "$victim" --argjson a "$at" --argjson h "$healed" --argjson f "$(awk -v a=$t0 -v b=$t1 'BEGIN{printf "%.2f", b - a}')" \
      --argjson t0 "$taken0" '{machine: $m, predicted_at_cut: $a, predicted_at_heal: $h, for_s: $f, taken_before: $t0}')
  fi
  local rc=0
  wait $drv || rc=$?
  if [ "$cutinfo" != null ]; then
    # The partitions taken since the cut (a worker's moved to another).
    cutinfo=$(jq -c --argjson t "$(cat "$RUN"/w*.log | grep -c ' taken$' || true)" '. + {taken_after: ($t - .taken_before)}' <<<"$cutinfo")
  fi
  local c1=()
  for m in "${roles[@]}"; do c1+=("$(cpu "${PID[$m]}")"); done
  local sw; sw=$(awk -v a="$sw0" -v b="$(cpu "${PID[switch]}")" 'BEGIN{printf "%.3f", b - a}')
  [ $rc = 0 ] || { tail -5 "$RUN/d0.log" >&2; die "the driver failed (exit $rc; $RUN/d0.log)"; }
  for j in $(seq "$WORKERS"); do
    kill -0 "${PID[w$j]}" 2>/dev/null || { tail -5 "$RUN/w$j.log" >&2; die "worker w$j exited during the stream ($RUN/w$j.log)"; }
  done
  teardown
  # Each worker printed its summary (JSON) when stopped: the partitions it
  # took over, the batch shares it answered.
  local takeovers=0 obatches=0 t b
  for j in $(seq "$WORKERS"); do
    t=$(grep '^{' "$RUN/w$j.log" | tail -n 1 | jq '.takeovers // 0' 2>/dev/null || echo 0)
    b=$(grep '^{' "$RUN/w$j.log" | tail -n 1 | jq '.batches // 0' 2>/dev/null || echo 0)
    takeovers=$((takeovers + ${t:-0})) obatches=$((obatches + ${b:-0}))
  done
  "$DIR/bin/prequential" score --in "$IN" --pred "$RUN/pred.jsonl" > "$RUN/score.json"
  "$DIR/bin/netlab" preds --in "$IN" --pred "$RUN/pred.jsonl" > "$RUN/preds.json"
  local i nodes=0 workers=0 d
  for i in "${!roles[@]}"; do
    d=$(awk -v a="${c0[$i]}" -v b="${c1[$i]}" 'BEGIN{printf "%.3f", b - a}')
    case ${roles[$i]} in n*) nodes=$(awk -v x=$nodes -v y=$d 'BEGIN{print x + y}') ;; *) workers=$(awk -v x=$workers -v y=$d 'BEGIN{print x + y}') ;; esac
  done
  read -r du ds de dm < "$RUN/d0.time"
  jq -nc --slurpfile s "$RUN/d0.json" --slurpfile pr "$RUN/preds.json" --slurpfile sc "$RUN/score.json" \
    --argjson w "$WORKERS" --argjson p "$parts" --argjson dl "$DELAY" \
    --argjson du "$du" --argjson ds "$ds" --argjson dm "$dm" --argjson nodes "$nodes" --argjson workers "$workers" \
    --argjson sw "$sw" --argjson idle "$idle" --argjson tk "$takeovers" --argjson ob "$obatches" \
    --argjson cut "$cutinfo" '
    $s[0] as $s | $pr[0] as $pr | $sc[0] as $sc | ($du + $ds + $nodes + $workers) as $cpu |
    {mode: "nats", workers: $w, partitions: $p, delay_ms: $dl, records: $s.records, samples: $s.samples,
     expected: $pr.samples, predicted: $pr.predicted, duplicates: $pr.duplicates, missing: $pr.missing, unknown: $pr.unknown,
     seconds: $s.seconds, records_per_second: $s.records_per_second,
     accuracy: $sc.accuracy, scored_missing: $sc.missing, stream_accuracy: $s.accuracy,
     cpu_seconds: $cpu, cpu_per_record_ms: (1000 * $cpu / $s.records),
     cpu: {driver: ($du + $ds), workers: $workers, nodes: $nodes, switch: $sw}, idle_cpu_per_s: $idle, driver_max_rss_kib: $dm,
     takeovers: $tk, owner_batches: $ob, shares: $s.partition_samples, cut: $cut}' | tee "$RUN/result.json"
}

single_run() {
  RUN=$DIR/run-$P-single
  rm -rf "$RUN"; mkdir -p "$RUN"
  /usr/bin/time -o "$RUN/time" -f "%U %S %e %M" "$DIR/bin/nmfstream" stream --in "$IN" --out "$RUN/pred.jsonl" --json "${EXTRA[@]}" \
    > "$RUN/out.json" 2> "$RUN/log" || { tail -5 "$RUN/log" >&2; die "stream failed"; }
  "$DIR/bin/prequential" score --in "$IN" --pred "$RUN/pred.jsonl" > "$RUN/score.json"
  read -r du ds de dm < "$RUN/time"
  jq -nc --slurpfile s "$RUN/out.json" --slurpfile sc "$RUN/score.json" --argjson du "$du" --argjson ds "$ds" \
    --argjson de "$de" --argjson dm "$dm" '
    $s[0] as $s | $sc[0] as $sc | ($s.records // $s.n_records) as $r |
    {mode: "single", workers: 0, delay_ms: 0, records: $r, seconds: $de, records_per_second: ($r / $de),
     accuracy: $sc.accuracy, missing: $sc.missing, cpu_seconds: ($du + $ds), cpu_per_record_ms: (1000 * ($du + $ds) / $r),
     max_rss_kib: $dm}' | tee "$RUN/result.json"
}

emit() { if [ -n "$OUT" ]; then tee -a "$OUT"; else cat; fi; }

case $CMD in
  run)
    prereq; clean_stale; build
    one_run | emit ;;
  sweep|calibrate)
    prereq; clean_stale; build
    if [ "$CMD" = calibrate ]; then OUT=${OUT:-$DIR/runs.jsonl}; : > "$OUT"; fi
    single_run | emit
    for d in $DLIST; do
      for w in $WLIST; do
        DELAY=$d WORKERS=$w
        one_run | emit
      done
    done
    if [ "$CMD" = calibrate ]; then go run ./distributed/cmd/scalemodel -calibrate "$OUT"; fi ;;
  check)
    prereq; clean_stale; build
    fail=0
    for c in $CUT; do
      line=$(one_run "$c") || { fail=1; continue; }
      echo "$line" | emit
      if ! jq -e '.duplicates == 0 and .missing == 0 and .unknown == 0 and .predicted == .expected and .samples == .expected and .cut.predicted_at_cut < .expected and ((.cut.machine | startswith("w") | not) or .cut.taken_after >= 1)' <<<"$line" >/dev/null; then
        log "FAIL: $c cut: $line"
        fail=1
      else
        log "ok: $c cut off mid-stream and healed: every sample predicted once and counted once"
      fi
    done
    exit $fail ;;
  clean)
    [ "$(id -u)" = 0 ] || die "needs root"
    clean_stale ;;
  *)
    echo "usage: $0 run|sweep|calibrate|check|clean [options] (see the head of $0)" >&2; exit 2 ;;
esac

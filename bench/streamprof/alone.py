#!/usr/bin/env python3
"""alone.py: where the stream's learner runs while no other goroutine does.

Reads `go tool trace -d=parsed TRACE` on stdin, for a trace written by
`nmfstream stream --trace TRACE --cpuprofile CPU` (the CPU profile puts the
CPU samples into the trace), and prints a Markdown table: for each part of
the learner's work, the CPU seconds of the learner's goroutine (the one whose
samples run stages.(*Learner).LearnFeatures) sampled while it was the only
goroutine running, and in all. Time the learner runs alone is time one of
the two cores waits: the wall time the stream cannot gain by more cores.

It then prints the wall seconds of the trace regions the learner marks
(stages.Learner.LearnFeatures: insert, beside, step, predict; model.Online:
firstFit, searchBasis, and Common's initialize in every fit), summed over
the run, with their count and the CPU seconds every goroutine spent while
they were open (over the wall seconds: how many cores were busy); when the first batch reached the learner (the
first insert region's start, from the trace's start: reading and decoding
the input's first batch); and the step's tail, the wall seconds by which
each batch's step outlasted its predictions, summed (the time in which
the predictions' goroutine lends itself to the step's parts).

Usage (BENCHMARKS.md, "Eleventh pass" and "Twelfth pass"):
    nmfstream stream --in m15.arrow --out p.jsonl --json --cpuprofile cpu.prof --trace trace.out
    go tool trace -d=parsed trace.out | python3 bench/streamprof/alone.py
"""
import bisect
import collections
import re
import sys

# The parts, innermost first: a sample goes to the first of its frames,
# from the leaf up, that ends with one of these names.
PARTS = ["fitSearchBasis", "firstFit", "updateStats", "stepU", "sweepRows",
         "storeRows", "revisited", "WeightRows", "InsertDense", "searchStep",
         "forget", "dropNonzeros", "normalize", "predictInOrder", "presweep",
         "refreshSpread", "fillCodes", "ProjectTo", "linearPass", "stepCodes",
         "update", "PartialFitDeferred", "insert", "predictBeside", "LearnFeatures"]
RATE = 100  # CPU samples per second (runtime/pprof's default)

trans = re.compile(r"StateTransition Time=(\d+) GoID=(\d+) (\w+)->(\w+)")
sample = re.compile(r"G=(-?\d+) StackSample Time=(\d+)")
region = re.compile(r"G=(-?\d+) Region(Begin|End) Time=(\d+) .*Type=\"([^\"]*)\"")


def main():
    events, samples = [], []
    open_regions = collections.defaultdict(list)  # (goroutine, name) → begin times
    region_wall, region_n = collections.Counter(), collections.Counter()
    spans = collections.defaultdict(list)  # region name → (begin, end) times
    ends = collections.defaultdict(list)  # region name → end times, in order
    first_insert = None
    stack = None
    for line in sys.stdin:
        if stack is not None:
            if line.startswith("Stack="):
                continue
            if line.startswith("\t\t"):
                continue
            if line.startswith("\t"):
                stack.append(line.strip().split(" @")[0])
                continue
            stack = None
        m = trans.search(line)
        if m:
            events.append((int(m.group(1)), m.group(2), m.group(3), m.group(4)))
            continue
        m = sample.search(line)
        if m:
            stack = []
            samples.append((int(m.group(2)), m.group(1), stack))
            continue
        m = region.search(line)
        if m:
            key, t = (m.group(1), m.group(4)), int(m.group(3))
            if m.group(2) == "Begin":
                open_regions[key].append(t)
                if key[1] == "insert" and first_insert is None:
                    first_insert = t
            elif open_regions[key]:
                begin = open_regions[key].pop()
                region_wall[key[1]] += t - begin
                region_n[key[1]] += 1
                ends[key[1]].append(t)
                spans[key[1]].append((begin, t))
    if not events or not samples:
        sys.exit("alone.py: no state transitions or CPU samples: was the trace written with --cpuprofile too?")
    events.sort()
    running, times, counts = set(), [], []
    for t, g, a, b in events:
        if b == "Running":
            running.add(g)
        elif a == "Running":
            running.discard(g)
        times.append(t)
        counts.append(len(running))
    learner = collections.Counter(g for _, g, st in samples if any(f.endswith(".LearnFeatures") for f in st))
    if not learner:
        sys.exit("alone.py: no sample of stages.(*Learner).LearnFeatures")
    lg = learner.most_common(1)[0][0]
    alone, total = collections.Counter(), collections.Counter()
    for t, g, st in samples:
        if g != lg:
            continue
        part = next((p for f in st for p in PARTS if f.endswith("." + p)), "other")
        total[part] += 1
        k = bisect.bisect_right(times, t) - 1
        if k < 0 or counts[k] <= 1:
            alone[part] += 1
    wall = (events[-1][0] - events[0][0]) / 1e9
    print(f"trace {wall:.2f} s; the learner's goroutine {sum(total.values()) / RATE:.2f} CPU s, "
          f"{sum(alone.values()) / RATE:.2f} of them alone\n")
    print("| part | alone: CPU s | in all: CPU s |")
    print("|---|---|---|")
    for part, n in sorted(total.items(), key=lambda kv: (-alone[kv[0]], -kv[1])):
        print(f"| {part} | {alone[part] / RATE:.2f} | {n / RATE:.2f} |")
    if region_n:
        # The CPU samples of every goroutine taken while a region was open:
        # over its wall time, the cores busy on average in it.
        at = sorted(t for t, _, _ in samples)
        print("\n| region | wall s | count | CPU s, all goroutines | cores busy |")
        print("|---|---|---|---|---|")
        for name, ns in sorted(region_wall.items(), key=lambda kv: -kv[1]):
            cpu = sum(bisect.bisect_right(at, b) - bisect.bisect_left(at, a) for a, b in spans[name]) / RATE
            busy = cpu / (ns / 1e9) if ns else 0
            print(f"| {name} | {ns / 1e9:.2f} | {region_n[name]} | {cpu:.2f} | {busy:.2f} |")
    if first_insert is not None:
        print(f"\nthe first batch reached the learner {(first_insert - events[0][0]) / 1e9:.3f} s into the trace")
    steps, preds = sorted(ends["step"]), sorted(ends["predict"])
    if steps and len(steps) == len(preds):
        tail = sum(max(0, s - p) for s, p in zip(steps, preds))
        print(f"the steps outlasted their predictions by {tail / 1e9:.2f} s in all")


if __name__ == "__main__":
    main()

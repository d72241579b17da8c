#!/usr/bin/env python3
"""Times scikit-learn's TfidfVectorizer and stages.TFIDF on the same Brown
documents, in one session, and prints the Go/scikit-learn throughput ratio.

Usage (from the repository root, after `bash scripts/fetch-data.sh /tmp/nmfdata`;
scikit-learn is Debian's python3-sklearn, so use /usr/bin/python3):

    /usr/bin/python3 stages/testdata/bench_tfidf.py [--brown /tmp/nmfdata/brown] [--docs 500|45]
        [--rounds 5] [--seconds 1] [--gomaxprocs 1]

Documents: all 500 Brown files (--docs 500, Go benchmark BenchmarkTFIDF500Brown) or the
45 golden ones, the first three of each genre (--docs 45, BenchmarkTFIDF45Brown), each
preprocessed as in make_tfidf_golden.py (split on whitespace, drop the '/tag' of every
token, join with spaces); TestBrownCorpusPreprocessing checks that Go reads the same texts.

Settings: the golden configuration, TfidfVectorizer(stop_words="english", min_df=2,
max_df=0.9, sublinear_tf=True), and the equal TFIDF in Go. The script checks that both
find the same number of terms and stored entries.

Protocol: the Go test binary is built once, then each round times scikit-learn
(fit_transform, then transform of the fitted vectorizer, each repeated for about
--seconds and averaged) and right after runs the Go benchmark (-test.benchtime
--seconds), so the two share the machine's state. The Go run uses GOMAXPROCS=--gomaxprocs
(default 1: scikit-learn's vectorizer is single-threaded, so Go gets one core too, garbage
collector included). Rates are documents per second of wall-clock time and per second of
process CPU time (Python's time.process_time, Go's getrusage in the benchmark's cpu-docs/s);
on a busy machine the CPU-time rates are the steadier ones. The ratios printed are
median(Go rate) / median(scikit-learn rate) over the rounds; per-round ratios show the spread.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

import sklearn
from sklearn.feature_extraction.text import TfidfVectorizer

PARAMS = dict(stop_words="english", min_df=2, max_df=0.9, sublinear_tf=True)


def load(brown, docs):
    names = sorted(n for n in os.listdir(brown)
                   if len(n) == 4 and n[0] == "c" and n[2:].isdigit())
    if docs == 45:
        per_genre, chosen = {}, []
        for n in names:
            if per_genre.get(n[1], 0) < 3:
                per_genre[n[1]] = per_genre.get(n[1], 0) + 1
                chosen.append(n)
        names = chosen
    texts = []
    for n in names:
        with open(os.path.join(brown, n), encoding="utf-8") as f:
            texts.append(" ".join(tok.rsplit("/", 1)[0] for tok in f.read().split()))
    return texts


def rate(fn, ndocs, seconds):
    """Documents per wall-clock second and per CPU second of fn, averaged over
    repetitions filling about seconds of wall-clock time."""
    fn()  # warm up
    reps, t0, c0 = 0, time.perf_counter(), time.process_time()
    while True:
        fn()
        reps += 1
        el = time.perf_counter() - t0
        if el >= seconds:
            return reps * ndocs / el, reps * ndocs / (time.process_time() - c0)


def go_bench(binary, name, seconds, procs):
    env = dict(os.environ, GOMAXPROCS=str(procs))
    out = subprocess.run([binary, "-test.run", "^$", "-test.bench", "^" + name + "$",
                          "-test.benchtime", f"{seconds}s", "-test.count", "1"],
                         cwd=STAGES, env=env,
                         capture_output=True, text=True, check=True).stdout
    res = {}
    for line in out.splitlines():
        m = re.match(r"^" + name + r"/(\w+)(?:-\d+)?\s", line)
        if not m:
            continue
        fields = dict((unit, float(v)) for v, unit in re.findall(r"([\d.]+) ([\w/-]+)", line))
        res[m.group(1)] = fields
    if "FitTransform" not in res or "Transform" not in res:
        sys.exit("bench_tfidf: unexpected Go benchmark output:\n" + out)
    return res


STAGES = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main():
    ap = argparse.ArgumentParser()
    data = os.environ.get("NMFSTREAM_DATA", os.path.expanduser("~/.cache/nmfstream-data"))
    ap.add_argument("--brown", default=os.path.join(data, "brown"),
                    help="the Brown corpus folder, named brown (default: $NMFSTREAM_DATA/brown)")
    ap.add_argument("--docs", type=int, choices=(45, 500), default=500)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--seconds", type=float, default=1.0)
    ap.add_argument("--gomaxprocs", type=int, default=1)
    a = ap.parse_args()

    texts = load(a.brown, a.docs)
    if len(texts) != a.docs:
        sys.exit(f"bench_tfidf: found {len(texts)} documents in {a.brown}, want {a.docs}")
    name = f"BenchmarkTFIDF{a.docs}Brown"
    v = TfidfVectorizer(**PARAMS)
    x = v.fit_transform(texts)
    terms, nnz = len(v.vocabulary_), x.nnz

    tmp = tempfile.mkdtemp()
    binary = os.path.join(tmp, "stages.test")
    subprocess.run(["go", "test", "-c", "-o", binary, "."], cwd=STAGES, check=True)
    if os.path.basename(os.path.normpath(a.brown)) != "brown":
        sys.exit(f"bench_tfidf: --brown {a.brown}: the folder must be named brown (the Go benchmark reads $NMFSTREAM_DATA/brown)")
    os.environ["NMFSTREAM_DATA"] = os.path.dirname(os.path.normpath(a.brown))

    rows = {k: [] for k in ("sk_fit", "go_fit", "sk_tr", "go_tr")}  # (wall, cpu) rates
    print(f"scikit-learn {sklearn.__version__}, Python {sys.version.split()[0]}; {a.docs} Brown documents, "
          f"{sum(map(len, texts)) / 1e6:.1f} MB; {terms} terms, {nnz} entries; Go GOMAXPROCS={a.gomaxprocs}")
    print("docs/s, wall-clock (CPU time)")
    print("round  sklearn fit_transform  Go FitTransform  ratio         | sklearn transform  Go Transform  ratio")
    for r in range(a.rounds):
        rows["sk_fit"].append(rate(lambda: TfidfVectorizer(**PARAMS).fit_transform(texts), len(texts), a.seconds))
        rows["sk_tr"].append(rate(lambda: v.transform(texts), len(texts), a.seconds))
        g = go_bench(binary, name, a.seconds, a.gomaxprocs)
        if int(g["FitTransform"]["terms"]) != terms or int(g["FitTransform"]["nnz"]) != nnz:
            sys.exit(f"bench_tfidf: Go found {g['FitTransform']['terms']:.0f} terms and "
                     f"{g['FitTransform']['nnz']:.0f} entries, scikit-learn {terms} and {nnz}")
        for k, sub in (("go_fit", "FitTransform"), ("go_tr", "Transform")):
            rows[k].append((g[sub]["docs/s"], g[sub].get("cpu-docs/s", float("nan"))))
        f = lambda sk, go: (f"{sk[0]:6.0f} ({sk[1]:5.0f})  {go[0]:6.0f} ({go[1]:5.0f})  "
                            f"{go[0] / sk[0]:5.2f} ({go[1] / sk[1]:5.2f})")
        print(f"{r + 1:5d}  {f(rows['sk_fit'][-1], rows['go_fit'][-1])} | {f(rows['sk_tr'][-1], rows['go_tr'][-1])}")
    med = lambda k, i: statistics.median(x[i] for x in rows[k])
    for what, sk, go in (("fit_transform", "sk_fit", "go_fit"), ("transform", "sk_tr", "go_tr")):
        print(f"median {what:13s}: sklearn {med(sk, 0):5.0f} docs/s ({med(sk, 1):5.0f} per CPU s), "
              f"Go {med(go, 0):5.0f} docs/s ({med(go, 1):5.0f} per CPU s); "
              f"ratio Go/sklearn {med(go, 0) / med(sk, 0):.2f} wall-clock, {med(go, 1) / med(sk, 1):.2f} CPU time")


if __name__ == "__main__":
    main()

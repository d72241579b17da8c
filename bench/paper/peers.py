"""Peers for nmfstream's evaluation report, measured with scikit-learn.

The Go side (bench/paper) writes, into one directory:
  tasks.json           what to run (see below)
  <name>.f64           row-major little-endian float64 matrices
  <name>.i64           little-endian int64 vectors
and runs: /usr/bin/python3 peers.py DIR. This script writes DIR/results.json:
{"sklearn": version, "numpy": version, "results": [{"id": ..., ...}, ...]}.

Task kinds:
  accuracy  {x, y, train, test, labeled, rank, max_iter, seed}:
            NMF(init="nndsvda") fitted on the training pool, test samples
            transformed, 1-NN on the labeled samples' codes (scaled to a
            unit-norm basis, and raw); raw-pixel 1-NN; and LabelSpreading
            (kernel="knn", n_neighbors=7) on the pool, predicting the test set.
  speed     {x, rank, max_iter, knn, project_rows, stream_batch}: timings of
            NMF(solver="mu") fit, kneighbors_graph, NMF.transform and
            MiniBatchNMF.partial_fit on the same data as the Go side.

Only the standard library, numpy and scikit-learn are used.
"""
import json
import os
import sys
import time
import warnings

import numpy as np
import sklearn
from sklearn.decomposition import NMF, MiniBatchNMF
from sklearn.exceptions import ConvergenceWarning
from sklearn.neighbors import KNeighborsClassifier, kneighbors_graph
from sklearn.semi_supervised import LabelSpreading

warnings.filterwarnings("ignore", category=ConvergenceWarning)
# LabelSpreading divides by zero for samples no label reaches (L = 1).
warnings.filterwarnings("ignore", category=RuntimeWarning)


def load(d, name, shape=None):
    path = os.path.join(d, name)
    if name.endswith(".f64"):
        a = np.fromfile(path, dtype="<f8")
        return a.reshape(shape) if shape else a
    return np.fromfile(path, dtype="<i8")


def accuracy(d, t):
    x = load(d, t["x"], tuple(t["shape"]))
    y = load(d, t["y"])
    train, test, labeled = (load(d, t[k]) for k in ("train", "test", "labeled"))
    out = {"id": t["id"]}
    xtr, xte = x[train], x[test]
    # Positions of the labeled rows inside the training pool.
    pos = np.searchsorted(train, labeled)
    start = time.perf_counter()
    nmf = NMF(n_components=t["rank"], init="nndsvda", max_iter=t["max_iter"],
              random_state=t["seed"])
    codes = nmf.fit_transform(xtr)
    out["nmf_fit_seconds"] = time.perf_counter() - start
    test_codes = nmf.transform(xte)
    # Codes scaled by the norms of the basis rows, i.e. the codes of the
    # unit-norm basis, as model.NMF{NormalizeU: true} gives: without it,
    # Euclidean 1-NN weighs each factor by 1/‖h_k‖ (nmf_1nn_raw).
    scale = np.linalg.norm(nmf.components_, axis=1)
    nn = KNeighborsClassifier(n_neighbors=1).fit(codes[pos] * scale, y[labeled])
    out["nmf_1nn"] = float(np.mean(nn.predict(test_codes * scale) == y[test]))
    nn = KNeighborsClassifier(n_neighbors=1).fit(codes[pos], y[labeled])
    out["nmf_1nn_raw"] = float(np.mean(nn.predict(test_codes) == y[test]))
    ytr = np.full(len(train), -1)
    ytr[pos] = y[labeled]
    start = time.perf_counter()
    ls = LabelSpreading(kernel="knn", n_neighbors=7).fit(xtr, ytr)
    out["label_spreading_seconds"] = time.perf_counter() - start
    out["label_spreading"] = float(np.mean(ls.predict(xte) == y[test]))
    raw = KNeighborsClassifier(n_neighbors=1).fit(xtr[pos], y[labeled])
    out["raw_1nn"] = float(np.mean(raw.predict(xte) == y[test]))
    return out


def best_of(f, repeat):
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        f()
        best = min(best, time.perf_counter() - start)
    return best


def speed(d, t):
    x = load(d, t["x"], tuple(t["shape"]))
    k, iters = t["rank"], t["max_iter"]
    out = {"id": t["id"]}
    # Same algorithm as model.NMF: multiplicative updates, fixed budget.
    nmf = NMF(n_components=k, init="nndsvda", solver="mu", max_iter=iters, tol=0,
              random_state=t["seed"])
    out["nmf_fit_seconds"] = best_of(lambda: nmf.fit(x), t["repeat"])
    out["knn_graph_seconds"] = best_of(
        lambda: kneighbors_graph(x, t["knn"], mode="connectivity"), t["repeat"])
    rows = x[: t["project_rows"]]
    secs = best_of(lambda: nmf.transform(rows), t["repeat"])
    out["project_rows_per_second"] = len(rows) / secs
    b = t["stream_batch"]
    mb = MiniBatchNMF(n_components=k, init="nndsvda", batch_size=b, random_state=t["seed"])

    def stream():
        mb.partial_fit(x[:max(b, k)])
        for i in range(max(b, k), len(x), b):
            mb.partial_fit(x[i:i + b])

    secs = best_of(stream, 1)
    out["stream_records_per_second"] = len(x) / secs
    return out


def main():
    d = sys.argv[1]
    with open(os.path.join(d, "tasks.json")) as f:
        tasks = json.load(f)
    results = []
    for t in tasks:
        start = time.perf_counter()
        if t["kind"] == "accuracy":
            r = accuracy(d, t)
        elif t["kind"] == "speed":
            r = speed(d, t)
        else:
            raise SystemExit("peers.py: unknown task kind %r" % t["kind"])
        r["seconds"] = time.perf_counter() - start
        results.append(r)
        print("peers.py: %s done in %.1f s" % (t["id"], r["seconds"]), file=sys.stderr, flush=True)
    with open(os.path.join(d, "results.json"), "w") as f:
        json.dump({"sklearn": sklearn.__version__, "numpy": np.__version__,
                   "results": results}, f)


if __name__ == "__main__":
    main()

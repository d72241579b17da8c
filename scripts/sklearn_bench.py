"""Times scikit-learn on the shapes of nmfstream's benchmarks, for ratios
measured in the same run (scripts/bench-vs-sklearn.sh).

Prints one JSON object: seconds per NMF 'mu' iteration and seconds for
kneighbors_graph, on uniform [0, 1) data of 20000×784, K = 50, k = 10, each
the best of REPS runs (first argument, default 1).
Needs Debian's python3-sklearn (run with /usr/bin/python3).
"""
import json
import sys
import time
import warnings

import numpy as np
from sklearn.decomposition import NMF
from sklearn.neighbors import kneighbors_graph

rng = np.random.default_rng(1)
X = rng.random((20000, 784))

out = {"sklearn": __import__("sklearn").__version__}

reps = int(sys.argv[1]) if len(sys.argv) > 1 else 1

# Best of reps: other processes on a shared machine only ever add time.
iters = 10
best = float("inf")
for _ in range(reps):
    nmf = NMF(n_components=50, solver="mu", init="random", max_iter=iters, tol=0, random_state=1)
    t = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        nmf.fit(X)
    best = min(best, (time.perf_counter() - t) / iters)
out["nmf_mu_iter_seconds"] = best

best = float("inf")
for _ in range(reps):
    t = time.perf_counter()
    kneighbors_graph(X, 10, mode="connectivity")
    best = min(best, time.perf_counter() - t)
out["knn_graph_seconds"] = best
print(json.dumps(out))

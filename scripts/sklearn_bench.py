"""Times scikit-learn on the shapes of nmfstream's benchmarks, for ratios
measured in the same run (scripts/bench-vs-sklearn.sh).

Usage: sklearn_bench.py nmf|knn
Prints one JSON object: seconds per NMF 'mu' iteration (a fit of 10
iterations, divided by 10) or seconds for kneighbors_graph, on uniform
[0, 1) data of 20000×784, K = 50, k = 10.
Needs Debian's python3-sklearn (run with /usr/bin/python3).
"""
import json
import sys
import time
import warnings

import numpy as np
from sklearn.decomposition import NMF
from sklearn.neighbors import kneighbors_graph

what = sys.argv[1] if len(sys.argv) > 1 else "nmf"
rng = np.random.default_rng(1)
X = rng.random((20000, 784))

out = {"sklearn": __import__("sklearn").__version__}
if what == "nmf":
    iters = 10
    nmf = NMF(n_components=50, solver="mu", init="random", max_iter=iters, tol=0, random_state=1)
    t = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        nmf.fit(X)
    out["nmf_mu_iter_seconds"] = (time.perf_counter() - t) / iters
elif what == "knn":
    t = time.perf_counter()
    kneighbors_graph(X, 10, mode="connectivity")
    out["knn_graph_seconds"] = time.perf_counter() - t
else:
    sys.exit(f"unknown measurement {what!r}: want nmf or knn")
print(json.dumps(out))

"""Times scikit-learn's counterpart of a batch GNMF fit for bench/fitspeed:
kneighbors_graph (k = 10, connectivity) plus NMF with the 'mu' solver (K = 50,
random init, tol 0, a fixed number of iterations) on the first n MNIST
training images scaled to [0, 1], as float64 or float32 (scikit-learn keeps
float32 input in float32).

Usage: sklearn_fit.py IMAGES N DTYPE ITERS
Prints one JSON object: knn_seconds, nmf_seconds, seconds (their sum),
n_iter, reconstruction_err (the Frobenius norm ‖X − WH‖), sklearn.
Needs Debian's python3-sklearn (run with /usr/bin/python3).
"""
import json
import sys
import time
import warnings

import numpy as np
import sklearn
from sklearn.decomposition import NMF
from sklearn.neighbors import kneighbors_graph

path, n, dtype, iters = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
raw = open(path, "rb").read()
if raw[2] != 8 or raw[3] != 3:
    sys.exit(f"{path}: not an IDX file of unsigned bytes in 3 dimensions")
count = int.from_bytes(raw[4:8], "big")
if n > count:
    sys.exit(f"{path}: {count} images, {n} asked for")
X = np.frombuffer(raw, dtype=np.uint8, offset=16, count=n * 784).reshape(n, 784)
X = (X / 255.0).astype(dtype)

t0 = time.perf_counter()
kneighbors_graph(X, 10, mode="connectivity")
t1 = time.perf_counter()
nmf = NMF(n_components=50, solver="mu", init="random", max_iter=iters, tol=0, random_state=1)
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    nmf.fit(X)
t2 = time.perf_counter()
print(json.dumps({"knn_seconds": t1 - t0, "nmf_seconds": t2 - t1, "seconds": t2 - t0,
                  "n_iter": int(nmf.n_iter_), "reconstruction_err": float(nmf.reconstruction_err_),
                  "sklearn": sklearn.__version__}))

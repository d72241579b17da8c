#!/usr/bin/env python3
"""Converts the MATLAB data sets of the graph-regularized NMF literature to
the plain files that `bench/prequential make|split --data csv:FILE|tsv:FILE`
reads, so nmfstream's streams and held-out checks can be run on sets no
default was chosen on (BENCHMARKS.md, "Sets from the GNMF papers").

    convert.py IN.mat OUT

Image sets (a dense matrix of pixels and a class vector) become OUT.csv,
one image a line: its class, then its pixels scaled to [0, 1] (by 255 for
8-bit pixels, by the largest value otherwise). Document-term sets (a sparse
count matrix `fea` and `gnd`) become OUT.tsv, one document a line: its
class, a tab, then each term as the word w<column> repeated as often as
it is counted, so nmfstream's own tokenizer and TF-IDF see the same bag of
words. Rows keep the .mat file's order; `make --shuffle S` deals them out.

Needs scipy (apt-get install -y python3-scipy).
"""
import sys

import numpy as np
import scipy.io
import scipy.sparse


def arrays(path):
    """Returns (features, classes) from the .mat file at path, whichever of
    the usual names (fea/gnd, data/class, X/Y) it uses."""
    m = {k: v for k, v in scipy.io.loadmat(path).items() if not k.startswith("__")}
    for xk, yk in (("fea", "gnd"), ("data", "class"), ("X", "Y"), ("X", "y")):
        if xk in m and yk in m:
            x, y = m[xk], np.asarray(m[yk]).ravel()
            if x.shape[0] != len(y) and x.shape[1] == len(y):
                x = x.T
            return x, y
    sys.exit("%s: no features and classes among %s" % (path, sorted(m)))


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    x, y = arrays(sys.argv[1])
    out = sys.argv[2]
    if scipy.sparse.issparse(x):
        x = scipy.sparse.csr_matrix(x)
        with open(out + ".tsv", "w") as f:
            for i in range(x.shape[0]):
                row = x.getrow(i)
                words = []
                for j, v in zip(row.indices, row.data):
                    words += ["w%d" % j] * int(round(v))
                if words:
                    f.write("%d\t%s\n" % (y[i], " ".join(words)))
        return
    x = np.asarray(x, dtype=np.float64)
    scale = 255.0 if x.max() > 1 and x.max() <= 255 else max(x.max(), 1.0)
    with open(out + ".csv", "w") as f:
        for i in range(x.shape[0]):
            f.write("%d," % y[i] + ",".join("%.6g" % v for v in x[i] / scale) + "\n")


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""Where a two-class skewed split's accuracy is lost: the ranking or the share.

Reads the splits that TestSkewedDocuments (model/classify/skewed_test.go)
writes under DIR (SET-seedN folders: train.svm, the labeled training rows;
test.svm, the held-out rows; pred-*.txt, nmfstream's predictions) and, for
each set with two classes in its test rows, prints means over the splits:

- always-majority's accuracy;
- a LinearSVC (C = 1) fitted on the labeled rows as a ranking of the test
  rows: its ROC AUC, the best accuracy any threshold on it reaches (an
  oracle: the threshold is chosen on the test labels), and the accuracy of
  answering the rare class for the top q·P rows, P the test rows of the
  rare class, for q in 0.25 ... 3 (q = 1 is the threshold a right estimate
  of the rare class's share would give);
- for each pred-*.txt, the rows it answers with the rare class as a
  multiple of P, and its accuracy.

    /usr/bin/python3 bench/skewed/shares.py DIR   (the system python, where apt put scikit-learn)
"""
import collections
import glob
import os
import sys

import numpy as np
from sklearn.datasets import load_svmlight_files
from sklearn.metrics import roc_auc_score
from sklearn.svm import LinearSVC

QS = (0.25, 0.5, 0.75, 1, 1.5, 2, 3)


def main(root):
    rows = collections.defaultdict(lambda: collections.defaultdict(list))
    for d in sorted(glob.glob(os.path.join(root, "*-seed*"))):
        name = os.path.basename(d).rsplit("-seed", 1)[0]
        xtr, ytr, xte, yte = load_svmlight_files(
            [os.path.join(d, "train.svm"), os.path.join(d, "test.svm")])
        ytr, yte = ytr.astype(int), yte.astype(int)
        classes = np.unique(yte)
        if len(classes) != 2:
            continue
        counts = np.array([(yte == c).sum() for c in classes])
        rare = classes[counts.argmin()]
        n, p = len(yte), counts.min()
        r = rows[name]
        r["majority"].append(counts.max() / n)
        svc = LinearSVC(C=1.0).fit(xtr, ytr)
        s = svc.decision_function(xte)
        if rare != svc.classes_[1]:
            s = -s
        pos = yte[np.argsort(-s, kind="stable")] == rare
        tp = np.concatenate([[0], np.cumsum(pos)])  # rare rows among the top j
        acc = (tp + (n - p) - (np.arange(n + 1) - tp)) / n
        r["auc"].append(roc_auc_score(yte == rare, s))
        r["oracle"].append(acc.max())
        for q in QS:
            r["q%g" % q].append(acc[int(round(q * p))])
        for f in sorted(glob.glob(os.path.join(d, "pred-*.txt"))):
            pred = np.loadtxt(f, dtype=int, ndmin=1)
            clf = os.path.basename(f)[5:-4]
            r["share " + clf].append((pred == rare).sum() / p)
            r["accuracy " + clf].append((pred == yte).mean())
    for name, r in rows.items():
        m = {k: np.mean(v) for k, v in r.items()}
        print(f"{name} ({len(r['majority'])} splits): always-majority {m['majority']:.3f}; "
              f"LinearSVC ranking: AUC {m['auc']:.3f}, best threshold {m['oracle']:.3f}")
        print("  the top q·P rows answered rare, q = " + " / ".join("%g" % q for q in QS) + ": "
              + " / ".join("%.3f" % m["q%g" % q] for q in QS))
        for k in sorted(r):
            if k.startswith("share "):
                clf = k[6:]
                print(f"  {clf}: answers rare {m[k]:.2f}·P (splits {' '.join('%.2f' % v for v in r[k])}), "
                      f"accuracy {m['accuracy ' + clf]:.3f}")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])

#!/usr/bin/python3
"""Score LinearSVC, always-majority and nmfstream's LapRLS side by side.

Reads the splits that TestSkewedDocuments (model/classify/skewed_test.go)
writes under DIR (one folder SET-seedN per split: train.svm with the labeled
training rows, test.svm with the held-out rows, both nmfstream's TF-IDF, and
pred-*.txt with nmfstream's predictions of the test rows) and prints, per set,
the mean over seeds of accuracy / balanced accuracy / macro-F1. With
--paired A B it also prints, per set, B's macro-F1 minus A's split by
split, in points: the mean, its standard error, and B's wins and losses
(A and B are classifier names of the table, e.g. laprls-nopool laprls).

    /usr/bin/python3 bench/skewed/compare.py DIR [--paired A B]   (the system python, where apt put scikit-learn)
"""
import collections
import glob
import os
import sys

import numpy as np
from sklearn.datasets import load_svmlight_files
from sklearn.metrics import accuracy_score, balanced_accuracy_score, f1_score
from sklearn.svm import LinearSVC


def score(pred, truth):
    return (accuracy_score(truth, pred), balanced_accuracy_score(truth, pred),
            f1_score(truth, pred, average="macro", labels=np.unique(truth), zero_division=0))


def main(root):
    table = collections.defaultdict(lambda: collections.defaultdict(list))
    order = []
    for d in sorted(glob.glob(os.path.join(root, "*-seed*"))):
        name = os.path.basename(d).rsplit("-seed", 1)[0]
        if name not in order:
            order.append(name)
        xtr, ytr, xte, yte = load_svmlight_files(
            [os.path.join(d, "train.svm"), os.path.join(d, "test.svm")])
        svc = LinearSVC(C=1.0).fit(xtr, ytr)  # scikit-learn's default C
        table[name]["LinearSVC"].append(score(svc.predict(xte), yte))
        vals, counts = np.unique(yte, return_counts=True)
        table[name]["majority"].append(score(np.full_like(yte, vals[np.argmax(counts)]), yte))
        for p in sorted(glob.glob(os.path.join(d, "pred-*.txt"))):
            pred = np.loadtxt(p, dtype=int)
            table[name][os.path.basename(p)[5:-4]].append(score(pred, yte))
        rare = counts.min() / counts.sum()
        table[name]["_share"].append((rare, len(yte), ytr.shape[0]))
    print("| set | seeds | test docs | rarest test class | classifier | accuracy | balanced | macro-F1 |")
    print("|---|---|---|---|---|---|---|---|")
    for name in order:
        share = np.mean(table[name]["_share"], axis=0)
        for clf, rows in table[name].items():
            if clf.startswith("_"):
                continue
            m = np.mean(rows, axis=0)
            print(f"| {name} | {len(rows)} | {share[1]:.0f} | {share[0]:.3f} | {clf} | {m[0]:.3f} | {m[1]:.3f} | {m[2]:.3f} |")
    return table, order


def paired(table, order, a, b):
    print()
    print(f"| set | splits | macro-F1, {b} − {a} (points) | wins / losses |")
    print("|---|---|---|---|")
    for name in order:
        if a not in table[name] or b not in table[name]:
            continue
        d = 100 * (np.array(table[name][b])[:, 2] - np.array(table[name][a])[:, 2])
        se = d.std(ddof=1) / np.sqrt(len(d)) if len(d) > 1 else float("nan")
        print(f"| {name} | {len(d)} | {d.mean():+.2f} ± {se:.2f} | {(d > 1e-9).sum()} / {(d < -1e-9).sum()} |")


if __name__ == "__main__":
    table, order = main(sys.argv[1])
    if len(sys.argv) == 5 and sys.argv[2] == "--paired":
        paired(table, order, sys.argv[3], sys.argv[4])

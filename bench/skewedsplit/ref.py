#!/usr/bin/python3
"""ref.py DIR: the peers of the skewed-text table (BENCHMARKS.md, "Skewed
text: priors and the linear SVM") on the files bench/skewedsplit writes into DIR
(nmfstream's own TF-IDF rows, the labeled training documents and the test
documents). Prints one JSON object per line: LinearSVC (C = 1, fitted on the
labeled documents only), the same LinearSVC Platt-calibrated by 3-fold
cross-validation with its test posteriors' priors re-estimated by the EM of
Saerens, Latinne and Decaestecker 2002 (classify.EstimatePriors; an
experiment to tell whether the prior fix helps here) and always-majority (the most frequent class of the
test set, an oracle floor), each with accuracy, balanced accuracy and macro-F1.
Needs Debian's python3-sklearn (run with /usr/bin/python3).
"""
import json
import sys

from sklearn.datasets import load_svmlight_files
from sklearn.metrics import accuracy_score, balanced_accuracy_score, f1_score
from sklearn.calibration import CalibratedClassifierCV
from sklearn.svm import LinearSVC
import numpy as np


def scores(name, y, p):
    return {"method": name, "accuracy": round(accuracy_score(y, p), 4),
            "balanced": round(balanced_accuracy_score(y, p), 4),
            "macro_f1": round(f1_score(y, p, average="macro"), 4)}


def em_priors(post, train, iters=1000, tol=1e-8):
    """Saerens et al.'s EM: the priors of the rows of post (computed under train)."""
    prior = train.copy()
    for _ in range(iters):
        a = post * (prior / train)
        a /= a.sum(axis=1, keepdims=True)
        new = a.mean(axis=0)
        if np.max(np.abs(new - prior)) <= tol:
            prior = new
            break
        prior = new
    a = post * (prior / train)
    return prior, a / a.sum(axis=1, keepdims=True)


def main():
    d = sys.argv[1]
    xl, yl, xt, yt = load_svmlight_files([d + "/labeled.svm", d + "/test.svm"])
    svc = LinearSVC(C=1.0).fit(xl, yl)
    print(json.dumps(scores("linearsvc", yt, svc.predict(xt))))
    folds = int(min(3, np.bincount(yl.astype(int))[np.unique(yl.astype(int))].min()))
    if folds >= 2:
        cal = CalibratedClassifierCV(LinearSVC(C=1.0), cv=folds, method="sigmoid").fit(xl, yl)
        post = cal.predict_proba(xt)
        print(json.dumps(scores("linearsvc-platt", yt, cal.classes_[post.argmax(axis=1)])))
        _, counts_l = np.unique(yl, return_counts=True)
        prior, adj = em_priors(post, counts_l / counts_l.sum())
        r = scores("linearsvc-platt-em", yt, cal.classes_[adj.argmax(axis=1)])
        r["priors"] = [round(v, 3) for v in prior]
        print(json.dumps(r))
    vals, counts = np.unique(yt, return_counts=True)
    print(json.dumps(scores("majority", yt, np.full_like(yt, vals[np.argmax(counts)]))))


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Writes the scikit-learn golden files for stages/tfidf_test.go.

Usage (from the repository root, after `bash scripts/fetch-data.sh /tmp/nmfdata`
and `apt-get install -y python3-sklearn`):

    /usr/bin/python3 stages/testdata/make_tfidf_golden.py /tmp/nmfdata/brown stages/testdata

Input subset (deterministic): the Brown corpus files named c<genre><nn>, sorted by name,
keeping the first 3 files of each of the 15 genres (ca..cr), i.e. 45 documents.

Preprocessing of each file (the Go test gets the result, not the raw files):
  - read as ASCII/UTF-8 text,
  - split on runs of whitespace (Python str.split()),
  - drop the part-of-speech tag of every token: keep what precedes the LAST '/',
    ("Fulton/np-tl" -> "Fulton", "``/``" -> "``"); a token without '/' is kept whole,
  - join the kept words with single spaces.

Outputs (gzip JSON):
  ../../datasets/brown_sample.json.gz   {"names": [...], "texts": [...]}
  tfidf_golden.json.gz  {"sklearn": version, "configs": [{"name", "params", "vocabulary"|null,
                          "n_features", "indptr", "indices", "data"}]}
  english_stop_words.txt  sklearn's ENGLISH_STOP_WORDS, sorted, one per line.
"""
import gzip
import json
import os
import sys
import time

import sklearn
from sklearn.feature_extraction.text import (
    ENGLISH_STOP_WORDS,
    HashingVectorizer,
    TfidfTransformer,
    TfidfVectorizer,
)


def load(brown):
    names = sorted(n for n in os.listdir(brown)
                   if len(n) == 4 and n[0] == "c" and n[2:].isdigit())
    per_genre = {}
    chosen = []
    for n in names:
        g = n[1]
        if per_genre.get(g, 0) < 3:
            per_genre[g] = per_genre.get(g, 0) + 1
            chosen.append(n)
    texts = []
    for n in chosen:
        with open(os.path.join(brown, n), encoding="utf-8") as f:
            words = [tok.rsplit("/", 1)[0] for tok in f.read().split()]
        texts.append(" ".join(words))
    return chosen, texts


CONFIGS = [
    # The documented golden configuration.
    ("english_min2_max0.9_sublinear",
     dict(stop_words="english", min_df=2, max_df=0.9, sublinear_tf=True)),
    # sklearn defaults except: raw idf (no smoothing), no normalization, int max_df.
    ("nosmooth_nonorm_max30",
     dict(smooth_idf=False, norm=None, max_df=30)),
    # sklearn defaults, l1 norm, min_df as a proportion.
    ("l1_min0.1",
     dict(norm="l1", min_df=0.1)),
]

HASHING = ("hashing_2p18_english_sublinear",
           dict(n_features=2 ** 18, stop_words="english"),
           dict(sublinear_tf=True))


def csr_dict(x):
    x.sort_indices()
    return dict(indptr=x.indptr.tolist(), indices=x.indices.tolist(),
                data=[float(v) for v in x.data])


def main():
    brown, out = sys.argv[1], sys.argv[2]
    names, texts = load(brown)
    # The texts are datasets/brown_sample.json.gz (datasets.BrownSample).
    with gzip.open(os.path.join(out, "..", "..", "datasets", "brown_sample.json.gz"), "wt", encoding="utf-8") as f:
        json.dump({"names": names, "texts": texts}, f)
    configs = []
    for name, params in CONFIGS:
        v = TfidfVectorizer(**params)
        x = v.fit_transform(texts)
        vocab = sorted(v.vocabulary_, key=v.vocabulary_.get)
        configs.append(dict(name=name, params=params, vocabulary=vocab,
                            n_features=len(vocab), **csr_dict(x)))
    name, hparams, tparams = HASHING
    h = HashingVectorizer(alternate_sign=False, norm=None, **hparams)
    x = TfidfTransformer(**tparams).fit_transform(h.transform(texts))
    configs.append(dict(name=name, params=dict(hashing=hparams, tfidf=tparams),
                        vocabulary=None, n_features=hparams["n_features"], **csr_dict(x)))
    with gzip.open(os.path.join(out, "tfidf_golden.json.gz"), "wt", encoding="utf-8") as f:
        json.dump({"sklearn": sklearn.__version__, "configs": configs}, f)
    with open(os.path.join(out, "english_stop_words.txt"), "w") as f:
        f.write("\n".join(sorted(ENGLISH_STOP_WORDS)) + "\n")

    # Throughput of the first configuration, for the comparison with BenchmarkTFIDF.
    v = TfidfVectorizer(**CONFIGS[0][1])
    reps = 20
    t0 = time.perf_counter()
    for _ in range(reps):
        TfidfVectorizer(**CONFIGS[0][1]).fit_transform(texts)
    fit_s = (time.perf_counter() - t0) / reps
    v.fit(texts)
    t0 = time.perf_counter()
    for _ in range(reps):
        v.transform(texts)
    tr_s = (time.perf_counter() - t0) / reps
    print(f"sklearn {sklearn.__version__}: {len(texts)} docs; "
          f"fit_transform {len(texts) / fit_s:.0f} docs/s; transform {len(texts) / tr_s:.0f} docs/s",
          file=sys.stderr)


if __name__ == "__main__":
    main()

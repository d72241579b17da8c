package main

import (
	"flag"
	"fmt"

	"github.com/nmfstream/nmfstream/stages"
)

// textParams are the vectorizer flags of fit and eval: how the documents
// of a text column become TF-IDF rows. The defaults are
// stages.DefaultDocumentTFIDF's, chosen by measurement (BENCHMARKS.md,
// "Documents").
type textParams struct {
	sublinear bool
	minDF     int
	stopWords string
	stem      bool
}

func addTextFlags(fs *flag.FlagSet, t *textParams) {
	fs.BoolVar(&t.sublinear, "sublinear-tf", true, "text: weigh a term by 1 + ln(count) instead of its count")
	fs.IntVar(&t.minDF, "min-df", 2, "text: drop terms found in fewer training documents than this (≥ 1)")
	fs.StringVar(&t.stopWords, "stop-words", "english", "text: stop words to drop: english or none")
	fs.BoolVar(&t.stem, "stem", false, "text: Snowball (Porter2) stemming of the terms")
}

// defaultTextParams are the flags' defaults, for callers without flags.
func defaultTextParams() textParams {
	return textParams{sublinear: true, minDF: 2, stopWords: "english"}
}

// tfidf returns the vectorizer the flags describe.
func (t textParams) tfidf() (*stages.TFIDF, error) {
	tf := stages.DefaultDocumentTFIDF()
	tf.SublinearTF, tf.Stem = t.sublinear, t.stem
	if t.minDF < 1 {
		return nil, fmt.Errorf("%w: --min-df %d: pass 1 (keep every term) or more", errUsage, t.minDF)
	}
	tf.MinDF = stages.DocFreq{Count: t.minDF}
	switch t.stopWords {
	case "english":
	case "none":
		tf.StopWords = nil
	default:
		return nil, fmt.Errorf("%w: --stop-words %q: pass english or none", errUsage, t.stopWords)
	}
	return tf, nil
}

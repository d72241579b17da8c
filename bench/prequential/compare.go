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
)

// runCompare prints where two prediction files of one stream disagree:
// over the samples A predicted, how many each got right where they
// differ, and the same by tenths of A's score (its confidence).
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
	var n, differ, aRight, bRight int
	var bins [11][3]int // by A's score: disagreements, A right, B right
	for id, p := range pa {
		want, ok := truth[id]
		if !ok || p.pred == "" {
			continue
		}
		n++
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
	fmt.Printf("%d samples predicted by A; they differ on %d: A right %d, B right %d\n", n, differ, aRight, bRight)
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

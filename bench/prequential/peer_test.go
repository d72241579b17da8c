package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// TestPeers runs the peers on a small stream of two topics whose documents
// share their topic's words: each peer writes one line per sample, no
// prediction before the first label arrives, and (knn and nb) predicts the
// documents of the second half right (once both topics have labels).
func TestPeers(t *testing.T) {
	var docs []doc
	for i := range 400 {
		if i%2 == 0 {
			docs = append(docs, doc{text: fmt.Sprintf("goal striker match league keeper %d", i), class: "sport"})
		} else {
			docs = append(docs, doc{text: fmt.Sprintf("ballot senate election vote campaign %d", i), class: "politics"})
		}
	}
	dir := t.TempDir()
	in := filepath.Join(dir, "s.arrow")
	if err := makeText(docs, 1, 0, 0.1, 20, 1, "", in); err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"knn", "nb", "last"} {
		out := filepath.Join(dir, m+".jsonl")
		if err := runPeer([]string{"--in", in, "--out", out, "--method", m}); err != nil {
			t.Fatalf("%s: %v", m, err)
		}
		f, err := os.Open(out)
		if err != nil {
			t.Fatal(err)
		}
		lines, nulls, right, scored := 0, 0, 0, 0 // scored: in the second half
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			var r struct {
				ID   string  `json:"id"`
				Pred *string `json:"pred"`
			}
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
				t.Fatal(err)
			}
			lines++
			if r.Pred == nil {
				nulls++
				continue
			}
			var id int
			fmt.Sscan(r.ID, &id)
			if lines <= len(docs)/2 {
				continue
			}
			scored++
			if *r.Pred == docs[id].class {
				right++
			}
		}
		f.Close()
		if lines != len(docs) {
			t.Errorf("%s: %d lines, want %d", m, lines, len(docs))
		}
		// The first label comes 20 samples after its sample.
		if nulls < 20 || nulls == len(docs) {
			t.Errorf("%s: %d samples without a prediction, want the first 20 or more and not all", m, nulls)
		}
		if m != "last" && right != scored {
			t.Errorf("%s: %d of %d right, want all", m, right, scored)
		}
	}
}

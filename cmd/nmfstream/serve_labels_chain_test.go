package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strings"
	"testing"

	"github.com/nmfstream/nmfstream/record"
	"github.com/nmfstream/nmfstream/sources"
)

// TestServeLabelsThroughChain: serve learns a POST /v1/labels as one batch
// of late labels through the chain (labelsBatch), as stream and serve
// --nats do, its records numbered after those counted before it. Its
// answers to the documents posted between label requests are those of a
// Learner that Learns the same batches itself, bit for bit. The labels
// applied one at a time instead (stages.Learner.Label, which makes no
// pass of the linear model over the labeled documents) answer otherwise,
// which this checks too, so that the comparison can tell the two apart.
func TestServeLabelsThroughChain(t *testing.T) {
	// 225 documents (each text in five parts), posted 25 at a time; after
	// each post but the first, the labels of every other document of the
	// post before it.
	docs, labels := brownFifths(t)
	const per = 25
	var bodies [][]byte
	var isLabels []bool
	for start := 0; start < len(docs); start += per {
		var b bytes.Buffer
		for i := start; i < min(start+per, len(docs)); i++ {
			json.NewEncoder(&b).Encode(map[string]string{"id": fmt.Sprint("d", i), "text": docs[i]})
		}
		bodies, isLabels = append(bodies, b.Bytes()), append(isLabels, false)
		if start == 0 {
			continue
		}
		b = bytes.Buffer{}
		for i := start - per; i < start; i += 2 {
			fmt.Fprintf(&b, "{\"id\":\"d%d\",\"label\":%q}\n", i, labels[i])
		}
		bodies, isLabels = append(bodies, b.Bytes()), append(isLabels, true)
	}

	cfg := onlineConfig{Rank: 10, Neighbors: 5, Window: 1000, Batch: 10, Seed: 1}
	lim := sources.JSONLimits{MaxDim: sources.DefaultMaxDim}
	s := &server{learner: cfg.learner(), cfg: cfg, maxBody: 4 << 20, limits: lim}
	url, stop := startServer(t, s)
	var served []string
	for i, body := range bodies {
		path := "/v1/records"
		if isLabels[i] {
			path = "/v1/labels"
		}
		resp, err := http.Post(url+path, mediaJSONL, bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		var ans struct {
			Predictions []struct {
				ID     string   `json:"id"`
				Offset int64    `json:"offset"`
				Pred   *string  `json:"pred"`
				Score  *float64 `json:"score"` // null for NaN
			} `json:"predictions"`
		}
		err = json.NewDecoder(resp.Body).Decode(&ans)
		resp.Body.Close()
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("%s: status %d, %v", path, resp.StatusCode, err)
		}
		for _, p := range ans.Predictions {
			score := math.NaN()
			if p.Score != nil {
				score = *p.Score
			}
			served = append(served, fmt.Sprintf("%s@%d %v %v", p.ID, p.Offset, predString(p.Pred), score))
		}
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}

	// learn drives a Learner of cfg over the same bodies, each a run of
	// batches numbered after the records counted before it; oneByOne
	// applies the labels with Label instead.
	learn := func(oneByOne bool) []string {
		l := cfg.learner()
		var out []string
		for i, body := range bodies {
			var batches []*record.Batch
			if isLabels[i] {
				lines, _, err := sources.ReadJSONLabels(bytes.NewReader(body), lim)
				if err != nil {
					t.Fatal(err)
				}
				if oneByOne {
					for _, ll := range lines {
						if err := l.Label(ll.ID, ll.Label); err != nil {
							t.Fatal(err)
						}
					}
					continue
				}
				batches = []*record.Batch{labelsBatch(lines)}
			} else {
				var err error
				if batches, err = sources.ReadJSONLines(bytes.NewReader(body), cfg.Batch, lim); err != nil {
					t.Fatal(err)
				}
			}
			base := l.Counters().Records
			for _, b := range batches {
				shiftOffsets(b, base)
				st, err := l.Learn(b)
				if err != nil {
					t.Fatal(err)
				}
				for _, p := range st.Predictions {
					out = append(out, fmt.Sprintf("%s@%d %v %v", p.ID, p.Offset, predString(predictionOf(p).Pred), p.Score))
				}
			}
		}
		return out
	}
	if want := learn(false); !equalLines(t, "serve", served, "the Learner on the same batches", want) {
		return
	}
	old := learn(true)
	differ := 0
	for i := range old {
		// Offsets differ from the first label request on: Label takes none.
		if i >= len(served) || served[i][strings.Index(served[i], " "):] != old[i][strings.Index(old[i], " "):] {
			differ++
		}
	}
	if differ == 0 {
		t.Error("the labels applied one at a time answer as the chain does: this test cannot tell them apart")
	}
	t.Logf("%d of %d answers differ with the labels applied one at a time", differ, len(old))
}

// predString is a prediction's class, or "none".
func predString(p *string) string {
	if p == nil {
		return "none"
	}
	return *p
}

// equalLines reports whether got and want hold the same lines, and
// reports the first difference as an error if not.
func equalLines(t *testing.T, gotName string, got []string, wantName string, want []string) bool {
	t.Helper()
	for i := range max(len(got), len(want)) {
		if i >= len(got) || i >= len(want) || got[i] != want[i] {
			g, w := "(none)", "(none)"
			if i < len(got) {
				g = got[i]
			}
			if i < len(want) {
				w = want[i]
			}
			t.Errorf("answer %d of %d / %d: %s %s, %s %s", i, len(got), len(want), gotName, g, wantName, w)
			return false
		}
	}
	return true
}

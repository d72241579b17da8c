package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"testing"

	"github.com/nmfstream/nmfstream/datasets"
)

// BenchmarkServeLabels posts labels to serve, 10 a request, once its
// window holds the 1,797 digits or the 225 passages of the embedded Brown
// sample (each text in five parts), and reports labels/s: what a label
// request costs as a batch of late labels through the chain (the spreading's
// refresh and, on documents, the linear model's pass), beside the records.
func BenchmarkServeLabels(b *testing.B) {
	x, y := datasets.Digits()
	var digits, docs bytes.Buffer
	var digitLabels, docLabels []string
	for i := range len(y) {
		json.NewEncoder(&digits).Encode(map[string]any{"id": fmt.Sprint("d", i), "x": x.RawRowView(i)})
		digitLabels = append(digitLabels, fmt.Sprintf("{\"id\":\"d%d\",\"label\":%d}\n", i, y[i]))
	}
	passages, genres := brownFifths(b)
	for i, text := range passages {
		json.NewEncoder(&docs).Encode(map[string]string{"id": fmt.Sprint("t", i), "text": text})
		docLabels = append(docLabels, fmt.Sprintf("{\"id\":\"t%d\",\"label\":%q}\n", i, genres[i]))
	}
	for _, c := range []struct {
		name    string
		records []byte
		labels  []string
	}{{"digits", digits.Bytes(), digitLabels}, {"documents", docs.Bytes(), docLabels}} {
		b.Run(c.name, func(b *testing.B) {
			cfg := onlineConfig{Rank: 40, Neighbors: 5, Window: 10000, Batch: 100, Seed: 1}
			s := &server{learner: cfg.learner(), cfg: cfg, maxBody: 16 << 20}
			url, stop := startServer(b, s)
			post := func(path string, body []byte) {
				resp, err := http.Post(url+path, mediaJSONL, bytes.NewReader(body))
				if err != nil {
					b.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					b.Fatalf("%s: status %d", path, resp.StatusCode)
				}
			}
			post("/v1/records", c.records)
			b.ResetTimer()
			for i := range b.N {
				var body bytes.Buffer
				for k := range 10 {
					body.WriteString(c.labels[(10*i+k)%len(c.labels)])
				}
				post("/v1/labels", body.Bytes())
			}
			b.StopTimer()
			b.ReportMetric(float64(10*b.N)/b.Elapsed().Seconds(), "labels/s")
			if err := stop(); err != nil {
				b.Fatal(err)
			}
		})
	}
}

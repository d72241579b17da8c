package sinks_test

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"

	"github.com/apache/arrow/go/v15/arrow/ipc"
	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/sinks"
)

func ExampleNewArrow() {
	var buf bytes.Buffer
	s := sinks.NewArrow(&buf, 2) // K = 2 code columns
	s.Write(sinks.Results{
		IDs:    []string{"a", "b"},
		Codes:  mat.NewDense(2, 2, []float64{0.5, 0, 0.25, 1}),
		Preds:  []string{"cat", ""}, // "" is null
		Scores: []float64{0.8, math.NaN()},
	})
	s.Close()

	r, _ := ipc.NewReader(&buf)
	defer r.Release()
	for r.Next() {
		rec := r.Record()
		for i, col := range rec.Columns() {
			fmt.Println(rec.ColumnName(i), col)
		}
	}
	// Output:
	// id ["a" "b"]
	// code [[0.5 0] [0.25 1]]
	// pred ["cat" (null)]
	// score [0.8 (null)]
}

func ExampleNewJSONL() {
	s := sinks.NewJSONL(os.Stdout, 2)
	s.Write(sinks.Results{IDs: []string{"a"}, Codes: mat.NewDense(1, 2, []float64{0.1, 2}), Preds: []string{"cat"}})
	s.Close()
	// Output:
	// {"id":"a","code":[0.1,2],"pred":"cat","score":null}
}

func ExampleNewRejects() {
	r := sinks.NewRejects(os.Stdout)
	r.Write(4, "x9", errors.New("sources: record 4 (id \"x9\"): empty document"))
	r.Close()
	fmt.Println(r.Count(), "rejected")
	// Output:
	// {"offset":4,"id":"x9","reason":"sources: record 4 (id \"x9\"): empty document"}
	// 1 rejected
}

func ExampleCreate() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	s, err := sinks.Create(filepath.Join(dir, "preds.jsonl"), 0)
	if err != nil {
		fmt.Println(err)
		return
	}
	s.Write(sinks.Results{IDs: []string{"a"}, Preds: []string{"dog"}, Scores: []float64{1}})
	if err := s.Close(); err != nil {
		fmt.Println(err)
	}
	data, _ := os.ReadFile(filepath.Join(dir, "preds.jsonl"))
	fmt.Print(string(data))
	// Output:
	// {"id":"a","pred":"dog","score":1}
}

package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// writeSotu writes a small State of the Union corpus as loadSotu reads it:
// six addresses of the three parties, three passages each.
func writeSotu(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	parties := []string{"Democratic", "Republican", "Democratic-Republican"}
	text := strings.Repeat("The union is strong and the people are free to choose their way. ", 12)
	for i := range 6 {
		b, err := json.Marshal(map[string]any{"year": 1900 + i, "name": fmt.Sprint("P", i), "party": parties[i%3], "text": text})
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("%d.json", 1900+i)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// runGuarded runs run(args) and returns its error, a panic as an error, or
// an error if it has not returned within a minute (the goroutine is left
// running: a test that meets it fails).
func runGuarded(run func([]string) error, args []string) error {
	done := make(chan error, 1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				done <- fmt.Errorf("panic: %v", r)
			}
		}()
		done <- run(args)
	}()
	select {
	case err := <-done:
		return err
	case <-time.After(time.Minute):
		return fmt.Errorf("still running after a minute")
	}
}

// expectRefused checks that each of cases is refused with an error that
// names want[i] (its flag), without a panic or a hang, and without writing
// an output file.
func expectRefused(t *testing.T, cmd string, run func([]string) error, outs []string, cases [][]string, want []string) {
	t.Helper()
	for i, args := range cases {
		all := append(slices.Clone(args), outs...)
		err := runGuarded(run, all)
		if err == nil || !strings.Contains(err.Error(), want[i]) {
			t.Errorf("%s %v: %v, want a refusal naming %s", cmd, args, err, want[i])
		}
		for j := 1; j < len(outs); j += 2 {
			if _, err := os.Stat(outs[j]); err == nil {
				t.Errorf("%s %v wrote %s", cmd, args, outs[j])
				os.Remove(outs[j])
			}
		}
	}
}

// TestMakeFracRefused: make refuses a --frac outside (0, 1] (it panicked
// on 2 and NaN), and one that labels no sample.
func TestMakeFracRefused(t *testing.T) {
	sotu := writeSotu(t)
	out := filepath.Join(t.TempDir(), "x.arrow")
	var cases [][]string
	var want []string
	for _, data := range []string{"digits", "sotu:" + sotu} {
		for _, f := range []string{"2", "NaN", "+Inf", "-Inf", "-0.1", "0", "1.0001"} {
			cases = append(cases, []string{"--data", data, "--frac", f})
			want = append(want, "--frac "+f)
		}
	}
	cases = append(cases, []string{"--data", "digits", "--frac", "0.0001"})
	want = append(want, "labels none")
	expectRefused(t, "make", runMake, []string{"--out", out}, cases, want)
}

// TestSplitFracRefused: split refuses a --frac outside (0, 1] (it panicked
// on NaN) or a --test-frac outside (0, 1), on a text corpus and, for
// --test-frac, an image set, and a --frac that labels no training document.
func TestSplitFracRefused(t *testing.T) {
	sotu := "sotu:" + writeSotu(t)
	dir := t.TempDir()
	outs := []string{"--train", filepath.Join(dir, "tr.arrow"), "--test", filepath.Join(dir, "te.arrow")}
	var cases [][]string
	var want []string
	for _, f := range []string{"NaN", "2", "+Inf", "0", "-0.5"} {
		cases = append(cases, []string{"--data", sotu, "--frac", f})
		want = append(want, "--frac "+f)
	}
	for _, data := range []string{sotu, "digits"} {
		for _, f := range []string{"NaN", "1", "0", "-Inf", "Inf"} {
			cases = append(cases, []string{"--data", data, "--test-frac", f})
			want = append(want, "--test-frac")
		}
	}
	cases = append(cases, []string{"--data", sotu, "--train-n", "2", "--frac", "0.1"})
	want = append(want, "labels none")
	expectRefused(t, "split", runSplit, outs, cases, want)
}

// TestMakeDelayRefused: make refuses a negative --delay (it looped for
// ever on one).
func TestMakeDelayRefused(t *testing.T) {
	out := filepath.Join(t.TempDir(), "x.arrow")
	expectRefused(t, "make", runMake, []string{"--out", out},
		[][]string{{"--data", "digits", "--delay", "-5"}, {"--data", "sotu:" + writeSotu(t), "--delay", "-1"}},
		[]string{"--delay -5", "--delay -1"})
}

// TestScheduleLongDelay: a delay past the end, however large (t+delay
// overflowed and looped for ever), gives every label at the end in stream
// order, and a delay of 0 right after its sample.
func TestScheduleLongDelay(t *testing.T) {
	order := []int{4, 2, 0, 1, 3}
	for _, delay := range []int{5, 1 << 40, math.MaxInt} {
		var got []string
		done := make(chan bool, 1)
		go func() {
			schedule(order, 1, delay, 1, func(i int) { got = append(got, fmt.Sprint("s", i)) },
				func(i int) { got = append(got, fmt.Sprint("l", i)) })
			done <- true
		}()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("delay %d: schedule still running after 10 s", delay)
		}
		want := "s4 s2 s0 s1 s3 l4 l2 l0 l1 l3"
		if s := strings.Join(got, " "); s != want {
			t.Errorf("delay %d: %s, want %s", delay, s, want)
		}
	}
	var got []string
	schedule(order, 1, 0, 1, func(i int) { got = append(got, fmt.Sprint("s", i)) },
		func(i int) { got = append(got, fmt.Sprint("l", i)) })
	if s, want := strings.Join(got, " "), "s4 l4 s2 l2 s0 l0 s1 l1 s3 l3"; s != want {
		t.Errorf("delay 0: %s, want %s", s, want)
	}
}

// TestRareRefused: --rare wants CLASS:SHARE with 0 < SHARE < 1; NaN (once
// accepted, dropping the class) and ±Inf are refused by make and split
// before the corpus is read, and by thin.
func TestRareRefused(t *testing.T) {
	sotu := "sotu:" + writeSotu(t)
	dir := t.TempDir()
	bad := []string{"Democratic:NaN", "Democratic:Inf", "Democratic:-Inf", "Democratic:0", "Democratic:1", ":0.1", "Democratic", "Democratic:x"}
	var cases [][]string
	var want []string
	for _, r := range bad {
		cases = append(cases, []string{"--data", sotu, "--rare", r})
		want = append(want, "--rare")
		if _, err := thin([]doc{{class: "Democratic"}, {class: "Republican"}}, r, 1); err == nil {
			t.Errorf("thin %q: no error", r)
		}
	}
	expectRefused(t, "make", runMake, []string{"--out", filepath.Join(dir, "x.arrow")}, cases, want)
	expectRefused(t, "split", runSplit, []string{"--train", filepath.Join(dir, "tr.arrow"), "--test", filepath.Join(dir, "te.arrow")}, cases, want)
	// A meaningful share still thins.
	if err := runMake([]string{"--data", sotu, "--rare", "Republican:0.2", "--out", filepath.Join(dir, "ok.arrow")}); err != nil {
		t.Errorf("--rare Republican:0.2: %v", err)
	}
}

// TestSplitCountsRefused: split refuses --per-class below 1 (0 wrote a
// training file without a label) and a negative --train-n or --test-n
// (taken as 0, all).
func TestSplitCountsRefused(t *testing.T) {
	sotu := "sotu:" + writeSotu(t)
	dir := t.TempDir()
	outs := []string{"--train", filepath.Join(dir, "tr.arrow"), "--test", filepath.Join(dir, "te.arrow")}
	expectRefused(t, "split", runSplit, outs, [][]string{
		{"--data", "digits", "--per-class", "0"},
		{"--data", "digits", "--per-class", "-2"},
		{"--data", sotu, "--train-n", "-1"},
		{"--data", sotu, "--test-n", "-5"},
	}, []string{"--per-class 0", "--per-class -2", "--train-n -1", "--test-n -5"})
}

// TestMakeBlockRefused: make refuses a negative --block, and a --block
// where nothing is shuffled in blocks (an image set; a time-ordered text
// corpus without --shuffle), rather than ignoring it.
func TestMakeBlockRefused(t *testing.T) {
	sotu := "sotu:" + writeSotu(t)
	out := filepath.Join(t.TempDir(), "x.arrow")
	expectRefused(t, "make", runMake, []string{"--out", out}, [][]string{
		{"--data", sotu, "--shuffle", "1", "--block", "-3"},
		{"--data", "digits", "--shuffle", "1", "--block", "100"},
		{"--data", sotu, "--block", "100"},
	}, []string{"--block -3", "--block applies", "--block needs --shuffle"})
	if err := runMake([]string{"--data", sotu, "--shuffle", "1", "--block", "4", "--out", out}); err != nil {
		t.Errorf("--shuffle 1 --block 4: %v", err)
	}
}

package main

import (
	"errors"
	"fmt"
	"strings"
)

// The checks of make's and split's flags, run before any corpus is read: a
// value out of its range (NaN and ±Inf included) is refused, naming the
// flag and the range, rather than ignored, looped on or panicked over.

// checkFrac refuses a fraction of labeled samples outside (0, 1]: a stream
// or a training file without a label has nothing to be scored or trained
// on.
func checkFrac(cmd string, frac float64) error {
	if !(frac > 0 && frac <= 1) {
		return fmt.Errorf("%s: --frac %v: want 0 < frac ≤ 1", cmd, frac)
	}
	return nil
}

// checkRare refuses a --rare that is set but not CLASS:SHARE with
// 0 < SHARE < 1, or that is set for an image set.
func checkRare(cmd, data, rare string) error {
	if rare == "" {
		return nil
	}
	if isImageSet(data) {
		return fmt.Errorf("%s: --rare applies to the text corpora only", cmd)
	}
	if _, _, err := parseRare(rare); err != nil {
		return fmt.Errorf("%s: %w", cmd, err)
	}
	return nil
}

// checkMake refuses make's flags out of their ranges: --frac in (0, 1],
// --delay ≥ 0, --block ≥ 0 and only where it shuffles (a text corpus with
// --shuffle, or brown and kjv, which are shuffled by --seed), --rare as
// checkRare.
func checkMake(data string, frac float64, delay, block int, shuffle uint64, rare string) error {
	if err := checkFrac("make", frac); err != nil {
		return err
	}
	if delay < 0 {
		return fmt.Errorf("make: --delay %d: want delay ≥ 0 (samples between a sample and its label)", delay)
	}
	if block < 0 {
		return fmt.Errorf("make: --block %d: want block ≥ 0 (0: shuffle the whole stream)", block)
	}
	if block > 0 {
		if isImageSet(data) {
			return errors.New("make: --block applies to the text corpora only")
		}
		shuffledBySeed := strings.HasPrefix(data, "brown:") || strings.HasPrefix(data, "kjv:")
		if shuffle == 0 && !shuffledBySeed {
			return errors.New("make: --block needs --shuffle SEED (≥ 1) on this corpus, which is kept in file order otherwise")
		}
	}
	return checkRare("make", data, rare)
}

// splitFlags are split's flags that checkSplit checks.
type splitFlags struct {
	data           string
	perClass       int
	rare, versus   string
	nTrain, nTest  int
	testFrac, frac float64
	set            map[string]bool // the flags given
}

// checkSplit refuses split's flags out of their ranges: --test-frac in
// (0, 1), --per-class ≥ 1 (image sets), --train-n and --test-n ≥ 0, --frac
// in (0, 1] and --rare as checkRare (text corpora), and the flags of one
// kind of corpus given for the other.
func checkSplit(f splitFlags) error {
	if !(f.testFrac > 0 && f.testFrac < 1) {
		return fmt.Errorf("split: --test-frac %v: want 0 < test-frac < 1", f.testFrac)
	}
	if !isImageSet(f.data) {
		if f.set["per-class"] && f.set["frac"] {
			return errors.New("split: --per-class and --frac both say how many training documents are labeled: give one")
		}
		if f.set["versus"] && f.versus == "" {
			return errors.New("split: --versus needs a class name")
		}
		if f.set["per-class"] && f.perClass < 1 {
			return fmt.Errorf("split: --per-class %d: want per-class ≥ 1", f.perClass)
		}
		if f.nTrain < 0 {
			return fmt.Errorf("split: --train-n %d: want train-n ≥ 0 (0: all)", f.nTrain)
		}
		if f.nTest < 0 {
			return fmt.Errorf("split: --test-n %d: want test-n ≥ 0 (0: all)", f.nTest)
		}
		if err := checkFrac("split", f.frac); err != nil {
			return err
		}
		return checkRare("split", f.data, f.rare)
	}
	for _, name := range []string{"rare", "versus", "train-n", "test-n", "frac"} {
		if f.set[name] {
			return fmt.Errorf("split: --%s applies to the text corpora only", name)
		}
	}
	if f.perClass < 1 {
		return fmt.Errorf("split: --per-class %d: want per-class ≥ 1", f.perClass)
	}
	return nil
}

// labeledCount returns how many of n samples a fraction frac is, rounded
// to the nearest, within [0, n] whatever frac is (NaN: 0).
func labeledCount(frac float64, n int) int {
	switch {
	case !(frac > 0):
		return 0
	case frac >= 1:
		return n
	}
	return min(int(frac*float64(n)+0.5), n)
}

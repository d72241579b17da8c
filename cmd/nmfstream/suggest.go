package main

import (
	"fmt"
	"strings"
)

// editDistance returns the Levenshtein distance between a and b, with a
// swap of two adjacent runes counted as one edit (the optimal string
// alignment distance): the fewest insertions, deletions, substitutions and
// adjacent swaps of runes that turn one into the other, no substring
// edited twice. Swaps are the commonest typo ("fti", "trian").
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	// d[i][j] is the distance between ra[:i] and rb[:j].
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j-1]+cost, d[i-1][j]+1, d[i][j-1]+1)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}

// suggest returns the candidate nearest to word by editDistance,
// case ignored, if it is near enough to be a typo: at most 1 edit for
// words of up to 4 runes, 2 for longer ones (so "fti" finds "fit",
// "trian" finds "train" and "lables" finds "labels", but "x" finds
// nothing). A candidate that starts
// with word (an abbreviation of 3 or more runes) also counts. Ties go to
// the first candidate in the order given. "" when none is near.
func suggest(word string, candidates []string) string {
	w := strings.ToLower(word)
	limit := 1
	if len([]rune(w)) > 4 {
		limit = 2
	}
	best, bestD := "", limit+1
	for _, c := range candidates {
		d := editDistance(w, strings.ToLower(c))
		if d < bestD {
			best, bestD = c, d
		}
	}
	if best != "" {
		return best
	}
	if len([]rune(w)) >= 3 {
		for _, c := range candidates {
			if strings.HasPrefix(strings.ToLower(c), w) {
				return c
			}
		}
	}
	return ""
}

// didYouMean returns `; did you mean "X"?` for the nearest candidate
// (suggest), or "".
func didYouMean(word string, candidates []string) string {
	if s := suggest(word, candidates); s != "" {
		return fmt.Sprintf("; did you mean %q?", s)
	}
	return ""
}

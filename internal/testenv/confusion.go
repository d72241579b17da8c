package testenv

import "math/rand/v2"

// RandomConfusion returns the classes and counts of a random dense
// confusion matrix: k classes, least ≤ k ≤ len(names), drawn from names
// in a random order, as a Learner keeps one (k rows of k + 1 counts, the
// last column for no prediction) unless odd, then with fewer or more rows
// and shorter or longer rows; mostly zero, with counts of 1 to 50 and of
// 2²⁰ to 2⁴⁰. The stages and distributed tests of the sparse confusion
// draw their cases from it.
func RandomConfusion(rnd *rand.Rand, names []string, least int, odd bool) (classes []string, n [][]int64) {
	k := least + rnd.IntN(len(names)+1-least)
	for _, i := range rnd.Perm(len(names))[:k] {
		classes = append(classes, names[i])
	}
	rows, cols := k, k+1
	if odd {
		rows, cols = rnd.IntN(k+2), rnd.IntN(k+3)
	}
	for range rows {
		row := make([]int64, cols)
		for j := range row {
			switch rnd.IntN(8) {
			case 0:
				row[j] = int64(1 + rnd.IntN(50))
			case 1:
				row[j] = 1 << (20 + rnd.IntN(21))
			}
		}
		n = append(n, row)
	}
	return classes, n
}

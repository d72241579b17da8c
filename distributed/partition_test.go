package distributed

import (
	"gonum.org/v1/gonum/floats"

	"testing"
)

// TestPartitionerKeepsNeighbours checks that the partitions preserve
// locality: most samples' nearest neighbour lies in their own partition,
// far more than the 1/P of a random split.
func TestPartitionerKeepsNeighbours(t *testing.T) {
	const parts = 4
	samples := clusteredSamples(400, 30, 8, 11)
	p, err := NewPartitioner(samples, parts, 16, 1)
	if err != nil {
		t.Fatal(err)
	}
	same := 0
	for i := range samples {
		best, bi := -1.0, -1
		for j := range samples {
			if j == i {
				continue
			}
			if d := floats.Distance(denseOf(&samples[i]), denseOf(&samples[j]), 2); bi < 0 || d < best {
				best, bi = d, j
			}
		}
		if p.Partition(&samples[i]) == p.Partition(&samples[bi]) {
			same++
		}
	}
	if frac := float64(same) / float64(len(samples)); frac < 0.9 {
		t.Errorf("%.2f of nearest-neighbour edges inside a partition, want ≥ 0.9 (random: %.2f)", frac, 1.0/parts)
	}
	// The encoded partitioner places samples as the original does.
	q, err := decodePartitioner(encodePartitioner(p))
	if err != nil {
		t.Fatal(err)
	}
	for i := range samples {
		if a, b := p.Partition(&samples[i]), q.Partition(&samples[i]); a != b {
			t.Fatalf("sample %d: partition %d, %d after a round trip", samples[i].ID, a, b)
		}
	}
}

// TestPartitionerSparseBalanced checks the partitioner on documents-like
// sparse samples, fitted as stream --nats fits it, on its first batch of
// 10: nearly orthogonal rows must not all fall in one partition (k-means
// in the sketch space with centroids of unequal norm sends every sample
// orthogonal to all of them to the smallest centroid), and nearest
// neighbours still share a partition more often than in a random split.
// (The spherical centroids of NewPartitioner give 0.58 here; the
// Euclidean ones put 337 of the 400 samples in one partition.)
func TestPartitionerSparseBalanced(t *testing.T) {
	const parts = 2
	samples := sparseSamples(400, 800, 4, 8, 3)
	p, err := NewPartitioner(samples[:10], parts, 16, 1)
	if err != nil {
		t.Fatal(err)
	}
	count := make([]int, parts)
	same := 0
	for i := range samples {
		count[p.Partition(&samples[i])]++
		best, bi := -1.0, -1
		for j := range samples {
			if j == i {
				continue
			}
			if d := floats.Distance(denseOf(&samples[i]), denseOf(&samples[j]), 2); bi < 0 || d < best {
				best, bi = d, j
			}
		}
		if p.Partition(&samples[i]) == p.Partition(&samples[bi]) {
			same++
		}
	}
	for q, c := range count {
		// A quarter: a split no worse than 3 to 1.
		if c < len(samples)/4 {
			t.Errorf("partition %d holds %d of %d samples (all: %v)", q, c, len(samples), count)
		}
	}
	if frac := float64(same) / float64(len(samples)); frac < 0.55 {
		// 0.55: two standard errors above a random split's 0.5 at 400
		// samples; sketches of nearly orthogonal rows keep little locality.
		t.Errorf("%.2f of nearest-neighbour edges inside a partition, want ≥ 0.55 (random: %.2f)", frac, 1.0/parts)
	}
	t.Logf("partition sizes %v, %.2f of nearest-neighbour edges inside one", count, float64(same)/float64(len(samples)))
}

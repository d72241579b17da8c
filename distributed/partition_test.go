package distributed

import (
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
			if d := sqDistSample(&samples[i], &samples[j]); bi < 0 || d < best {
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

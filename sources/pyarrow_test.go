package sources

import (
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
)

// pyarrowScript writes the same records as denseRows1+denseRows2 with
// pyarrow, in the three containers, plus a sparse file with dim metadata.
const pyarrowScript = `
import sys, math
import pyarrow as pa, pyarrow.parquet as pq, pyarrow.feather as feather
d = sys.argv[1]
ids = [10, 11, 12, 13, 10, None, None, 14, 15]
xs = [[1, 2, 3], [1, -2, 3], [0, 0, 0], [math.nan, 0, 0], None, None, [4, 5, 6], [math.inf, 1, 1], [0.5, 0.25, 0.125]]
labels = ["a", "b", None, "a", "c", "c", "b", None, "a"]
t = pa.table({"id": pa.array(ids, pa.int64()), "x": pa.array(xs, pa.list_(pa.float32())),
              "label": pa.array(labels, pa.string())})
with pa.OSFile(d + "/py.arrows", "wb") as f:
    with pa.ipc.new_stream(f, t.schema) as w:
        w.write_table(t, max_chunksize=4)
with pa.OSFile(d + "/py.arrow", "wb") as f:
    with pa.ipc.new_file(f, t.schema) as w:
        w.write_table(t, max_chunksize=4)
pq.write_table(t, d + "/py.parquet", row_group_size=4)
s = pa.table({"indices": pa.array([[4, 0], [1]], pa.list_(pa.int32())),
              "values": pa.array([[1.0, 2.0], [0.5]], pa.list_(pa.float64()))}).replace_schema_metadata({"dim": "5"})
pq.write_table(s, d + "/sparse.parquet")
`

// TestPyarrowFixtures reads files written by pyarrow, when python3 has it.
func TestPyarrowFixtures(t *testing.T) {
	if exec.Command("python3", "-c", "import pyarrow").Run() != nil {
		t.Skip("python3 with pyarrow not available")
	}
	dir := t.TempDir()
	if out, err := exec.Command("python3", "-c", pyarrowScript, dir).CombinedOutput(); err != nil {
		t.Fatalf("pyarrow: %v\n%s", err, out)
	}
	for _, name := range []string{"py.arrows", "py.arrow", "py.parquet"} {
		src, err := Open(filepath.Join(dir, name))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		c := readAll(t, src)
		if err := src.Err(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		src.Close()
		checkDense(t, c)
	}
	src, err := Open(filepath.Join(dir, "sparse.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	c := readAll(t, src)
	if c.dim != 5 || !slices.EqualFunc(c.sparseInd, [][]int{{0, 4}, {1}}, slices.Equal) {
		t.Errorf("sparse: dim %d, indices %v", c.dim, c.sparseInd)
	}
}

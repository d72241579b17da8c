package interop

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/nmfstream/nmfstream/record"

	"github.com/nmfstream/nmfstream/sources"
)

// havePyarrow skips t unless python3 imports pyarrow.
func havePyarrow(t *testing.T) {
	t.Helper()
	if exec.Command("python3", "-c", "import pyarrow").Run() != nil {
		t.Skip("python3 with pyarrow not available")
	}
}

// python runs script with dir as its argument.
func python(t *testing.T, script, dir string) {
	t.Helper()
	if out, err := exec.Command("python3", "-c", script, dir).CombinedOutput(); err != nil {
		t.Fatalf("pyarrow: %v\n%s", err, out)
	}
}

// recordsScript writes nine records in three containers (IPC stream, IPC
// file, Parquet) and a sparse Parquet file with its dimension in the
// schema metadata: samples at 0, 2, 6 and 8; rejects at 1 (a negative
// value), 3 (NaN), 5 (no features and no id) and 7 (infinite); at 4 a late
// label for id 10.
const recordsScript = `
import sys, math
import pyarrow as pa, pyarrow.parquet as pq
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

// TestPyarrowFiles reads the records of recordsScript from each container.
func TestPyarrowFiles(t *testing.T) {
	havePyarrow(t)
	dir := t.TempDir()
	python(t, recordsScript, dir)
	for _, name := range []string{"py.arrows", "py.arrow", "py.parquet"} {
		src, err := sources.Open(filepath.Join(dir, name))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var ids []string
		var first []float64
		var rejects []int64
		var late []record.LateLabel
		for src.Next() {
			b := src.Batch()
			ids = append(ids, b.IDs...)
			if first == nil && b.Dense != nil {
				first = slices.Clone(b.Dense.RawRowView(0))
			}
			for _, r := range b.Rejects {
				rejects = append(rejects, r.Offset)
			}
			late = append(late, b.LateLabels...)
		}
		if err := src.Err(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		src.Close()
		if want := []string{"10", "12", "", "15"}; !slices.Equal(ids, want) {
			t.Errorf("%s: sample ids %q, want %q", name, ids, want)
		}
		if want := []float64{1, 2, 3}; !slices.Equal(first, want) {
			t.Errorf("%s: first sample %v, want %v", name, first, want)
		}
		if want := []int64{1, 3, 5, 7}; !slices.Equal(rejects, want) {
			t.Errorf("%s: rejects at %v, want %v", name, rejects, want)
		}
		if want := []record.LateLabel{{Offset: 4, ID: "10", Label: "c"}}; !slices.Equal(late, want) {
			t.Errorf("%s: late labels %v, want %v", name, late, want)
		}
	}
	src, err := sources.Open(filepath.Join(dir, "sparse.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	var ind [][]int
	for src.Next() {
		b := src.Batch()
		if _, d := b.Sparse.Dims(); d != 5 {
			t.Errorf("sparse: dimension %d, want 5", d)
		}
		for i := range b.Len() {
			r, _ := b.Sparse.Row(i)
			ind = append(ind, slices.Clone(r))
		}
	}
	if want := [][]int{{0, 4}, {1}}; !slices.EqualFunc(ind, want, slices.Equal) {
		t.Errorf("sparse: indices %v, want %v", ind, want)
	}
}

// TestPyarrowEval runs nmfstream eval on a train and a test file written by
// pyarrow (fixed_size_list features, int64 labels with nulls, string ids).
func TestPyarrowEval(t *testing.T) {
	havePyarrow(t)
	dir := t.TempDir()
	python(t, `
import sys, random
import pyarrow as pa
random.seed(1)
def rows(n, labeled):
    xs, ys, ids = [], [], []
    for i in range(n):
        c = i % 3
        xs.append([random.random()*0.2 + (1.5 if j*3//12 == c else 0) for j in range(12)])
        ys.append(c if labeled(i) else None)
        ids.append("p%d" % i)
    return pa.table({"x": pa.array(xs, pa.list_(pa.float32(), 12)), "label": pa.array(ys, pa.int64()), "id": ids})
for name, t in [("train", rows(60, lambda i: i < 15)), ("test", rows(30, lambda i: True))]:
    with pa.OSFile(sys.argv[1] + "/" + name + ".arrow", "wb") as f:
        with pa.ipc.new_file(f, t.schema) as w:
            w.write_table(t)
`, dir)
	bin := filepath.Join(dir, "nmfstream")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/nmfstream/nmfstream/cmd/nmfstream").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "eval", "--train", filepath.Join(dir, "train.arrow"), "--test", filepath.Join(dir, "test.arrow"), "--rank", "3", "--json").Output()
	if err != nil {
		t.Fatalf("eval: %v", err)
	}
	var got map[string]any
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	if got["n_train"] != 60.0 || got["n_labeled"] != 15.0 || got["accuracy"].(float64) < 0.9 {
		t.Errorf("eval on pyarrow files: %s", out)
	}
}

package sources_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/nmfstream/nmfstream/model/sparse"
	"github.com/nmfstream/nmfstream/record"
	"github.com/nmfstream/nmfstream/sources"
)

// A resumed Reader checks the records it skips against the checkpoint's
// fingerprint: on another input it stops at the first record that differs.
func ExampleReader_Check() {
	first := sources.NewCSV(strings.NewReader("label,a\n1,1\n2,2\n1,3\n2,4\n"))
	first.BatchSize = 2
	r := sources.NewReader(first)
	for {
		if _, err := r.Read(context.Background()); err != nil {
			break
		}
	}
	fp := r.Fingerprint(2) // a checkpoint after the first two records

	other := sources.NewCSV(strings.NewReader("label,a\n1,1\n2,5\n1,3\n2,4\n"))
	other.BatchSize = 2
	r = sources.NewReader(other)
	r.Skip, r.Check = 2, fp
	_, err := r.Read(context.Background())
	var ce *sources.ChangedError
	fmt.Println(errors.As(err, &ce), ce.Offset)
	// Output:
	// true 1
}

// readFingerprint reads src to its end with a Reader skipping skip
// records, and returns Fingerprint(n) and the error that stopped it (nil
// at io.EOF).
func readFingerprint(t *testing.T, src sources.Source, skip int64, check sources.Fingerprint, n int64) (sources.Fingerprint, error) {
	t.Helper()
	r := sources.NewReader(src)
	r.Skip, r.Check = skip, check
	for {
		_, err := r.Read(context.Background())
		if err == io.EOF {
			return r.Fingerprint(n), nil
		}
		if err != nil {
			return r.Fingerprint(n), err
		}
	}
}

// csvOf returns a CSV source of body in batches of size records.
func csvOf(body string, size int) *sources.CSV {
	src := sources.NewCSV(strings.NewReader(body))
	src.BatchSize = size
	return src
}

// digitsCSV is ten records: labeled, unlabeled and one rejected
// (negative), with ids.
const digitsCSV = "id,label,a,b\n" +
	"a0,1,0.5,1\na1,,1,0\na2,2,0.25,2\na3,1,-1,0\na4,,2,0\n" +
	"a5,2,3,1\na6,1,0,0.5\na7,,1,1\na8,2,4,0\na9,1,0,4\n"

// TestReaderFingerprintBatching checks that the fingerprint is the input's,
// not its batching's: the same for batches of 1, 3 and 10 records and for
// a Reader that skipped the first records, one sum a record, and
// Fingerprint(n) its first n.
func TestReaderFingerprintBatching(t *testing.T) {
	want, err := readFingerprint(t, csvOf(digitsCSV, 10), 0, nil, 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(want) != 10 {
		t.Fatalf("fingerprint of %d records, want 10", len(want))
	}
	if slices.Contains(want[1:], want[0]) {
		t.Errorf("records share a sum: %x", want)
	}
	for _, c := range []struct {
		size int
		skip int64
	}{{1, 0}, {3, 0}, {1, 6}, {3, 6}, {10, 10}} {
		got, err := readFingerprint(t, csvOf(digitsCSV, c.size), c.skip, want, 100)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("batches of %d, skip %d: %x, %v; want %x", c.size, c.skip, got, err, want)
		}
	}
	got, _ := readFingerprint(t, csvOf(digitsCSV, 3), 0, nil, 4)
	if !slices.Equal(got, want[:4]) {
		t.Errorf("Fingerprint(4) = %x, want %x", got, want[:4])
	}
}

// TestReaderCheck resumes at record 6, with the fingerprint of the first
// 6 records, on inputs that differ from digitsCSV at record 4 in one
// respect each, and checks that each stops at record 4 with a
// *ChangedError, also when it skips nothing (a driver that reads its
// input again from the start), while a difference from record 6 on
// (after the checkpoint) or in a record Check does not hold (nil: a
// checkpoint without a fingerprint) lets the Reader go on.
func TestReaderCheck(t *testing.T) {
	want, err := readFingerprint(t, csvOf(digitsCSV, 10), 0, nil, 6)
	if err != nil {
		t.Fatal(err)
	}
	change := func(old, new string) string {
		if !strings.Contains(digitsCSV, old) {
			t.Fatalf("%q is not in the input", old)
		}
		return strings.Replace(digitsCSV, old, new, 1)
	}
	for name, body := range map[string]string{
		"a feature":       change("a4,,2,0", "a4,,2,0.5"),
		"a label":         change("a4,,2,0", "a4,1,2,0"),
		"an id":           change("a4,,2,0", "b4,,2,0"),
		"a record less":   change("a4,,2,0\n", ""),
		"a record more":   change("a4,,2,0\n", "z4,,2,0\na4,,2,0\n"),
		"records swapped": change("a4,,2,0\na5,2,3,1\n", "a5,2,3,1\na4,,2,0\n"),
	} {
		for _, c := range []struct {
			size int
			skip int64
		}{{1, 6}, {2, 6}, {2, 0}} {
			_, err := readFingerprint(t, csvOf(body, c.size), c.skip, want, 0)
			var ce *sources.ChangedError
			if !errors.As(err, &ce) || ce.Offset != 4 || !strings.Contains(err.Error(), "record 4 differs") {
				t.Errorf("%s at record 4, batches of %d, skip %d: %v; want a *ChangedError at record 4", name, c.size, c.skip, err)
			}
		}
	}
	after := change("a7,,1,1", "a7,2,1,1")
	if _, err := readFingerprint(t, csvOf(after, 2), 6, want, 0); err != nil {
		t.Errorf("a difference after the resume offset: %v", err)
	}
	other := change("a1,,1,0", "a1,,1,9")
	if _, err := readFingerprint(t, csvOf(other, 2), 6, nil, 0); err != nil {
		t.Errorf("no Check (an older checkpoint): %v", err)
	}
	if _, err := readFingerprint(t, csvOf(other, 2), 6, want[:1], 0); err != nil {
		t.Errorf("a Check of record 0 only: %v", err)
	}
	if _, err := readFingerprint(t, csvOf(other, 2), 6, want[:2], 0); err == nil {
		t.Error("a Check of records 0 and 1, record 1 changed: no error")
	}
}

// TestReaderFingerprintLimit checks that only the first FingerprintRecords
// records are fingerprinted: Fingerprint is no longer, and a resume on an
// input that differs only after them is not refused (the documented limit).
func TestReaderFingerprintLimit(t *testing.T) {
	n := sources.FingerprintRecords + 10
	var a, b strings.Builder
	a.WriteString("label,x\n")
	b.WriteString("label,x\n")
	for i := range n {
		fmt.Fprintf(&a, "%d,%d\n", i%3, i)
		v := i
		if i == sources.FingerprintRecords+2 {
			v = -i // rejected: another record
		}
		fmt.Fprintf(&b, "%d,%d\n", i%3, v)
	}
	want, err := readFingerprint(t, csvOf(a.String(), 100), 0, nil, int64(n))
	if err != nil || len(want) != sources.FingerprintRecords {
		t.Fatalf("fingerprint of %d records (%v), want %d", len(want), err, sources.FingerprintRecords)
	}
	if _, err := readFingerprint(t, csvOf(b.String(), 1), int64(n-5), want, 0); err != nil {
		t.Errorf("a difference after the fingerprinted records: %v", err)
	}
}

// batches is a Source of the given batches, in order.
type batches struct {
	bs []*record.Batch
	i  int
}

func (s *batches) Next() bool                 { s.i++; return s.i <= len(s.bs) }
func (s *batches) Batch() *record.Batch       { return s.bs[s.i-1] }
func (s *batches) Err() error                 { return nil }
func (s *batches) Form() (record.Form, error) { return s.bs[0].Form, nil }
func (s *batches) Close() error               { return nil }

// TestReaderFingerprintForms checks that each part of a record enters its
// sum, in every feature form and for late labels and rejects, listed in a
// batch apart from its samples: changing one changes that record's sum
// only.
func TestReaderFingerprintForms(t *testing.T) {
	build := func(form record.Form) *record.Batch {
		b := &record.Batch{Form: form, IDs: []string{"p", "q"}, Labels: []string{"1", ""}, Labeled: []bool{true, false}, Offsets: []int64{0, 3},
			LateLabels: []record.LateLabel{{Offset: 2, ID: "p", Label: "2"}},
			Rejects:    []record.Reject{record.Rejectf(1, "r", "negative value")}}
		switch form {
		case record.FormDense:
			b.Dense = mat.NewDense(2, 2, []float64{0.5, 1, 2, 0})
		case record.FormSparse:
			b.Sparse = sparse.Zeros(0, 4)
			b.Sparse.AppendRow([]int{1}, []float64{0.5})
			b.Sparse.AppendRow([]int{0, 3}, []float64{2, 1})
		case record.FormText:
			b.Text = []string{"a document", "another"}
		}
		return b
	}
	sums := func(b *record.Batch) sources.Fingerprint {
		fp, err := readFingerprint(t, &batches{bs: []*record.Batch{b}}, 0, nil, 10)
		if err != nil || len(fp) != 4 {
			t.Fatalf("fingerprint %x, %v; want 4 sums", fp, err)
		}
		return fp
	}
	for _, form := range []record.Form{record.FormDense, record.FormSparse, record.FormText} {
		base := sums(build(form))
		for _, c := range []struct {
			name   string
			record int
			edit   func(b *record.Batch)
		}{
			{"features", 3, func(b *record.Batch) {
				switch form {
				case record.FormDense:
					b.Dense.Set(1, 1, 1e-300)
				case record.FormSparse:
					b.Sparse.Val[2] = 1.5
				case record.FormText:
					b.Text[1] = "another one"
				}
			}},
			{"sample id", 0, func(b *record.Batch) { b.IDs[0] = "p2" }},
			{"sample label", 0, func(b *record.Batch) { b.Labels[0] = "3" }},
			{"labeled", 3, func(b *record.Batch) { b.Labeled[1] = true }},
			{"late label", 2, func(b *record.Batch) { b.LateLabels[0].Label = "3" }},
			{"late label id", 2, func(b *record.Batch) { b.LateLabels[0].ID = "q" }},
			{"reject id", 1, func(b *record.Batch) { b.Rejects[0].ID = "s" }},
		} {
			b := build(form)
			c.edit(b)
			got := sums(b)
			for i := range got {
				if (got[i] != base[i]) != (i == c.record) {
					t.Errorf("%v, %s changed: record %d's sum %x, was %x", form, c.name, i, got[i], base[i])
				}
			}
		}
		b := build(form)
		b.Rejects[0] = record.Rejectf(1, "r", "a reason worded otherwise")
		if got := sums(b); !slices.Equal(got, base) {
			t.Errorf("%v: a reject's reason changed the fingerprint", form)
		}
	}
}

// TestReaderFingerprintConcurrent calls Fingerprint from one goroutine
// while another reads, as a stream's learn stage does while the decode
// stage reads ahead (run with -race), and checks what it saw was a prefix
// of the whole.
func TestReaderFingerprintConcurrent(t *testing.T) {
	r := sources.NewReader(csvOf(digitsCSV, 1))
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			if _, err := r.Read(context.Background()); err != nil {
				return
			}
		}
	})
	var seen []sources.Fingerprint
	for range 100 {
		seen = append(seen, r.Fingerprint(8))
	}
	wg.Wait()
	whole := r.Fingerprint(8)
	for _, fp := range seen {
		if !slices.Equal(fp, whole[:len(fp)]) {
			t.Fatalf("Fingerprint mid-read %x, not a prefix of %x", fp, whole)
		}
	}
}

// BenchmarkReaderFingerprintMNIST reads a stream of 2,048 MNIST-sized
// records (784 features) in batches of 256: the first 1,024 are
// fingerprinted, the cost a stream of MNIST pays once.
func BenchmarkReaderFingerprintMNIST(b *testing.B) {
	const n, d = 2048, 784
	var bs []*record.Batch
	for lo := 0; lo < n; lo += 256 {
		bt := &record.Batch{Form: record.FormDense, Dense: mat.NewDense(256, d, nil)}
		for i := range 256 {
			bt.IDs, bt.Labels, bt.Labeled = append(bt.IDs, ""), append(bt.Labels, "1"), append(bt.Labeled, true)
			bt.Offsets = append(bt.Offsets, int64(lo+i))
			for j := range d {
				bt.Dense.Set(i, j, float64((lo+i+j)%256)/255)
			}
		}
		bs = append(bs, bt)
	}
	b.ReportAllocs()
	for b.Loop() {
		r := sources.NewReader(&batches{bs: bs})
		r.Skip = n // skips every batch: what remains is the fingerprint
		if _, err := r.Read(context.Background()); err != io.EOF {
			b.Fatal(err)
		}
	}
}

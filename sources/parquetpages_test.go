package sources

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// readFuzzSeed returns the input of a go test fuzz v1 corpus file holding
// one []byte.
func readFuzzSeed(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitN(strings.TrimSpace(string(b)), "\n", 2)
	if len(lines) != 2 || lines[0] != "go test fuzz v1" || !strings.HasPrefix(lines[1], "[]byte(") || !strings.HasSuffix(lines[1], ")") {
		t.Fatalf("%s: not a go test fuzz v1 file of one []byte", path)
	}
	s, err := strconv.Unquote(strings.TrimSuffix(strings.TrimPrefix(lines[1], "[]byte("), ")"))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return []byte(s)
}

// TestParquetPageClaimsMoreValues reads the fuzzed file on which arrow-go
// v15's columnChunkReader.readBatch looped forever: a data page claiming
// more values than its levels hold. The read must end with an error naming
// the row group, the column and the page. The watchdog only turns a hang
// into a failure; the read takes milliseconds.
func TestParquetPageClaimsMoreValues(t *testing.T) {
	data := readFuzzSeed(t, filepath.Join("testdata", "fuzz", "FuzzParquet", "readbatch-loop"))
	done := make(chan error, 1)
	go func() {
		src := NewParquet(bytes.NewReader(data))
		for src.Next() {
		}
		done <- src.Err()
	}()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("a page claiming more values than it holds was read without an error")
		}
		t.Log(err)
		for _, want := range []string{"row group 0", "column ", "page ", "claims"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q does not say %q", err, want)
			}
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the read did not end (readBatch loops on the page)")
	}
}

// TestRLECount counts the values of RLE/bit-packed hybrid runs as arrow-go
// v15's RleDecoder decodes them, stopping where it stops.
func TestRLECount(t *testing.T) {
	for _, c := range []struct {
		name  string
		data  []byte
		width int
		need  int
		want  int
	}{
		{"repeated run of 5", []byte{5 << 1, 1}, 1, 10, 5},
		{"two runs", []byte{5 << 1, 1, 3 << 1, 0}, 1, 10, 8},
		{"stops at need", []byte{5 << 1, 1, 3 << 1, 0}, 1, 4, 5},
		{"bit-packed group of 8", []byte{1<<1 | 1, 0xff}, 1, 10, 8},
		{"bit-packed group cut short", []byte{2<<1 | 1, 0xff}, 1, 10, 0},
		{"run of length 0 ends", []byte{0, 1, 5 << 1, 1}, 1, 10, 0},
		{"repeated value cut short", []byte{5 << 1, 1}, 9, 10, 0},
		{"width 0", []byte{7 << 1}, 0, 10, 7},
		{"empty", nil, 1, 1, 0},
		{"varint header", []byte{0x80, 0x01, 1}, 1, 100, 64},
	} {
		if got := rleCount(c.data, c.width, c.need); got != c.want {
			t.Errorf("%s: rleCount = %d, want %d", c.name, got, c.want)
		}
	}
}

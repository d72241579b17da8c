package sources

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/apache/arrow/go/v15/parquet"
	"github.com/apache/arrow/go/v15/parquet/file"
	"github.com/apache/arrow/go/v15/parquet/schema"
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

// TestCheckDataPage checks hand-made data pages against their headers'
// num_values: pages that hold their values pass, pages whose levels or
// (for a required column) values run out are refused, naming what ran out.
func TestCheckDataPage(t *testing.T) {
	col := func(n *schema.PrimitiveNode, def, rep int16) *schema.Column { return schema.NewColumn(n, def, rep) }
	required := col(schema.NewInt32Node("label", parquet.Repetitions.Required, -1), 0, 0)
	requiredText := col(schema.NewByteArrayNode("id", parquet.Repetitions.Required, -1), 0, 0)
	optional := col(schema.NewFloat32Node("label", parquet.Repetitions.Optional, -1), 1, 0)
	element := col(schema.NewFloat32Node("element", parquet.Repetitions.Optional, -1), 3, 1)
	enc := parquet.Encodings
	v1 := func(data []byte, n int32, e parquet.Encoding) file.Page {
		return file.NewDataPageV1(memory.NewBufferBytes(data), n, e, enc.RLE, enc.RLE, int32(len(data)))
	}
	v2 := func(data []byte, n int32, defLen, repLen int32) file.Page {
		return file.NewDataPageV2(memory.NewBufferBytes(data), n, 0, n, enc.Plain, defLen, repLen, int32(len(data)), false)
	}
	// optLevels: RLE definition levels with their 4-byte length: a run of
	// 3 ones (defined), then the values.
	optLevels := []byte{2, 0, 0, 0, 3 << 1, 1}
	for _, c := range []struct {
		name string
		page file.Page
		col  *schema.Column
		want string // in the error; "" for none
	}{
		{"v1 optional, 3 levels", v1(append(optLevels, make([]byte, 12)...), 3, enc.Plain), optional, ""},
		{"v1 optional, 4 claimed", v1(append(optLevels, make([]byte, 12)...), 4, enc.Plain), optional, "claims 4 values, its definition levels (2 bytes) hold 3"},
		{"v1 levels length beyond the page", v1([]byte{9, 0, 0, 0, 3 << 1, 1}, 3, enc.Plain), optional, "levels of 9 bytes"},
		{"v1 levels length cut short", v1([]byte{2, 0}, 3, enc.Plain), optional, "length prefix cut short"},
		{"v1 negative count", v1(nil, -1, enc.Plain), optional, "claims -1 values"},
		{"v2 list, 4 levels each", v2([]byte{4 << 1, 0, 4 << 1, 3}, 4, 2, 2), element, ""},
		{"v2 list, definition levels run out", v2([]byte{4 << 1, 0, 2 << 1, 3}, 4, 2, 2), element, "definition levels (2 bytes) hold 2"},
		{"v2 list, repetition levels run out", v2([]byte{1 << 1, 0, 4 << 1, 3}, 4, 2, 2), element, "repetition levels (2 bytes) hold 1"},
		{"v2 levels beyond the page", v2([]byte{4 << 1, 0}, 4, 2, 2), element, "levels of 2 + 2 bytes in a data page of 2 bytes"},
		{"required plain int32", v1(make([]byte, 8), 2, enc.Plain), required, ""},
		{"required plain int32 short", v1(make([]byte, 8), 3, enc.Plain), required, "claims 3 values of 32 bits"},
		{"required plain byte array", v1([]byte{1, 0, 0, 0, 'a'}, 1, enc.Plain), requiredText, ""},
		{"required plain byte array, 2 claimed", v1([]byte{1, 0, 0, 0, 'a'}, 2, enc.Plain), requiredText, "its PLAIN values hold 1"},
		{"required plain byte array beyond", v1([]byte{9, 0, 0, 0, 'a'}, 1, enc.Plain), requiredText, "9 bytes in the 1 bytes left"},
		{"required dictionary indices", v1([]byte{1, 2 << 1, 0}, 2, enc.RLEDict), required, ""},
		{"required dictionary indices run out", v1([]byte{1, 2 << 1, 0}, 3, enc.RLEDict), required, "dictionary indices (3 bytes) hold 2"},
		{"required dictionary of bit width 40", v1([]byte{40, 2 << 1, 0}, 2, enc.PlainDict), required, "bit width 40"},
		{"required delta", v1([]byte{0x80, 0x01, 4, 2, 0}, 2, enc.DeltaBinaryPacked), required, ""},
		{"required delta runs out", v1([]byte{0x80, 0x01, 4, 2, 0}, 3, enc.DeltaBinaryPacked), required, "DELTA_BINARY_PACKED header 2"},
		{"optional delta lengths", v1(append(append([]byte(nil), optLevels...), 0x80, 0x01, 4, 3, 0), 3, enc.DeltaLengthByteArray), optional, ""},
		{"optional delta lengths beyond num_values", v1(append(append([]byte(nil), optLevels...), 0x80, 0x01, 4, 4, 0), 3, enc.DeltaLengthByteArray), optional, "claims 3 values, its DELTA_LENGTH_BYTE_ARRAY values 4"},
		{"delta prefixes cut short", v1(append(append([]byte(nil), optLevels...), 0x80), 3, enc.DeltaByteArray), optional, "DELTA_BINARY_PACKED header cut short"},
		{"dictionary page", file.NewDictionaryPage(memory.NewBufferBytes(make([]byte, 8)), 2, enc.Plain), required, ""},
		{"dictionary page claims 2^30 values", file.NewDictionaryPage(memory.NewBufferBytes(make([]byte, 8)), 1<<30, enc.Plain), required, "dictionary page: page header claims 1073741824 values of 32 bits, its PLAIN values have 8 bytes"},
		{"byte array dictionary page", file.NewDictionaryPage(memory.NewBufferBytes([]byte{1, 0, 0, 0, 'a', 0, 0, 0, 0}), 2, enc.Plain), requiredText, ""},
		{"byte array dictionary page runs out", file.NewDictionaryPage(memory.NewBufferBytes([]byte{1, 0, 0, 0, 'a', 0, 0, 0, 0}), 3, enc.Plain), requiredText, "claims 3 values, its PLAIN values hold 2"},
		{"dictionary page of -1 values", file.NewDictionaryPage(memory.NewBufferBytes(nil), -1, enc.Plain), required, "claims -1 values"},
	} {
		err := checkDataPage(c.page, c.col)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: error %v, want one saying %q", c.name, err, c.want)
		}
	}
}

// TestPageStream: Peek never returns bytes past the chunk's end (arrow-go
// v15's buffered reader did, and its page reader parsed the same stale
// header forever), Discard and Read consume.
func TestPageStream(t *testing.T) {
	b := &pageStream{data: []byte("abcdef")}
	if v, err := b.Peek(4); string(v) != "abcd" || err != nil {
		t.Fatalf("Peek(4) = %q, %v", v, err)
	}
	if n, err := b.Discard(4); n != 4 || err != nil {
		t.Fatalf("Discard(4) = %d, %v", n, err)
	}
	if v, err := b.Peek(16 << 10); string(v) != "ef" || err != io.EOF {
		t.Fatalf("Peek past the end = %q, %v; want the 2 bytes left and io.EOF", v, err)
	}
	if n, err := b.Discard(3); n != 2 || err != io.EOF {
		t.Fatalf("Discard(3) of 2 bytes = %d, %v", n, err)
	}
	if v, _ := b.Peek(16 << 10); len(v) != 0 {
		t.Fatalf("Peek at the end = %q, want nothing", v)
	}
	if n, err := b.Read(make([]byte, 4)); n != 0 || err != io.EOF {
		t.Fatalf("Read at the end = %d, %v", n, err)
	}
}

// TestCheckPageSizes: a page header whose compressed_page_size exceeds the
// bytes left in the column chunk is refused before arrow-go grows a buffer
// to it; headers that fit pass, and so do ones it cannot parse.
func TestCheckPageSizes(t *testing.T) {
	// Compact protocol: 0x15 is field id+1, type i32; values zigzag.
	dict31 := []byte{0x15, 0x04, 0x15, 0x3e, 0x15, 0x3e, 0x4c, 0x15, 0x02, 0x00, 0x00} // DICTIONARY_PAGE, 31 bytes, dictionary_page_header{...}
	claim := []byte{0x15, 0x04, 0x15, 0x3e, 0x15, 0xfa, 0xfa, 0xfa, 0xfa, 0x3e, 0x4c, 0x15, 0x02, 0x00, 0x00}
	unknown := []byte{0x15, 0x7f, 0x15, 0x00, 0x15, 0x00, 0x00} // type -64, then a header
	for _, c := range []struct {
		name string
		data []byte
		bad  bool
	}{
		{"31 bytes with 31 left", append(dict31, make([]byte, 31)...), false},
		{"31 bytes with 25 left", append(dict31, make([]byte, 25)...), true}, // the check counts the header from its scalar fields (7 of its 11 bytes)
		{"a 2 GB claim", append(claim, make([]byte, 31)...), true},
		{"unknown type, then a 31 byte claim with none left", append(unknown, dict31...), true},
		{"unknown type, then a fitting page", append(append(unknown, dict31...), make([]byte, 31)...), false},
		{"a nested struct first", []byte{0x1c, 0x00, 0x15, 0x04}, false},
		{"empty", nil, false},
	} {
		if err := checkPageSizes(c.data); (err != nil) != c.bad {
			t.Errorf("%s: error %v, want one: %v", c.name, err, c.bad)
		}
	}
}

package sources

import (
	"bytes"
	"encoding/binary"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v15/arrow/memory"
)

// TestArrowFileEOS reads files with and without the end-of-stream marker
// between the stream and the footer: the IPC format makes it optional in
// files, arrow-go leaves it out and Arrow C++ (pyarrow) writes it.
func TestArrowFileEOS(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	r1 := denseRecord(t, mem, denseRows1)
	r2 := denseRecord(t, mem, denseRows2)
	data := writeIPC(t, denseSchema, true, r1, r2)
	r1.Release()
	r2.Release()

	footer := int(binary.LittleEndian.Uint32(data[len(data)-arrowFileTail:]))
	end := len(data) - arrowFileTail - footer // where the footer starts
	eos := []byte{0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0}
	if bytes.Equal(data[end-len(eos):end], eos) {
		t.Fatal("arrow-go now writes an end-of-stream marker; the test needs a file without one")
	}
	withEOS := append(append(append([]byte(nil), data[:end]...), eos...), data[end:]...)
	for name, d := range map[string][]byte{"without EOS": data, "with EOS": withEOS} {
		src := NewArrowFile(bytes.NewReader(d))
		src.Allocator = mem
		c := readAll(t, src)
		if err := src.Err(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		src.Close()
		checkDense(t, c, true)
	}
}

// TestArrowFileCorruptFooter checks inputs that arrow-go's own file reader
// trusts: they must fail with an error, not crash or allocate their claims.
func TestArrowFileCorruptFooter(t *testing.T) {
	mem := memory.NewGoAllocator()
	data := writeIPC(t, denseSchema, true, denseRecord(t, mem, denseRows1))
	setFooterLen := func(n uint32) []byte {
		d := bytes.Clone(data)
		binary.LittleEndian.PutUint32(d[len(d)-arrowFileTail:], n)
		return d
	}
	// Found by FuzzArrowFile: a record batch whose buffer claims 2⁴⁷ bytes,
	// which ipc.FileReader allocated (fatal "out of memory").
	crash, err := os.ReadFile("testdata/fuzz/FuzzArrowFile/d2fe2309f4ae0df6")
	if err != nil {
		t.Fatal(err)
	}
	var fuzzData []byte
	for _, line := range strings.Split(string(crash), "\n")[1:] {
		if line != "" {
			fuzzData = []byte(unquoteGoBytes(t, line))
		}
	}
	for name, d := range map[string][]byte{
		"footer longer than the file": setFooterLen(1 << 30),
		"negative footer length":      setFooterLen(0xfffffff0),
		"zero footer length":          setFooterLen(0),
		"no leading magic":            append([]byte("ARROWX"), data[6:]...),
		"too short":                   []byte("ARROW1\x00\x00ARROW1"),
		"fuzz: 2^47-byte buffer":      fuzzData,
	} {
		src := NewArrowFile(bytes.NewReader(d))
		for src.Next() {
		}
		if src.Err() == nil {
			t.Errorf("%s: read without error", name)
		}
		src.Close()
	}
}

// unquoteGoBytes decodes a "[]byte(\"...\")" line of a Go fuzz corpus file.
func unquoteGoBytes(t *testing.T, line string) string {
	t.Helper()
	s, ok := strings.CutPrefix(line, "[]byte(")
	if !ok || !strings.HasSuffix(s, ")") {
		t.Fatalf("unexpected corpus line %q", line)
	}
	v, err := strconv.Unquote(s[:len(s)-1])
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestLimitedAllocator(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	l := limitedAllocator{mem, 1 << 10}
	b := l.Allocate(1 << 10)
	b = l.Reallocate(100, b)
	l.Free(b)
	if err := catch(func() error { l.Allocate(1<<10 + 1); return nil }); err == nil {
		t.Error("Allocate above the limit did not fail")
	}
	b = l.Allocate(8)
	if err := catch(func() error { l.Reallocate(1<<20, b); return nil }); err == nil {
		t.Error("Reallocate above the limit did not fail")
	}
	l.Free(b)
}

// TestArrowNotValid checks the messages of inputs that are not what they
// claim: an Arrow IPC file whose schema makes arrow-go fail (a field name
// 2 GiB long) is "not a valid Arrow IPC file", and an Arrow IPC file read
// as a stream (standard input) says that a stream is needed.
func TestArrowNotValid(t *testing.T) {
	mem := memory.NewGoAllocator()
	r1 := denseRecord(t, mem, denseRows1)
	file := writeIPC(t, denseSchema, true, r1)
	r1.Release()
	name := bytes.Index(file, []byte{1, 0, 0, 0, 'x', 0}) // the length of the name "x"
	if name < 0 {
		t.Fatal("no field name x in the file")
	}
	bad := append([]byte(nil), file...)
	copy(bad[name:], []byte{0xff, 0xff, 0xff, 0x7f})
	_, err := NewArrowFile(bytes.NewReader(bad)).Form()
	if err == nil || !strings.HasPrefix(err.Error(), "sources: not a valid Arrow IPC file (") {
		t.Errorf("corrupt schema: %v, want \"not a valid Arrow IPC file\"", err)
	}
	_, err = (&Opener{Stdin: bytes.NewReader(file)}).Open("-")
	if err == nil || !strings.Contains(err.Error(), "not a valid Arrow IPC stream") || !strings.Contains(err.Error(), "must be Arrow IPC streams (.arrows)") {
		t.Errorf("a file on stdin: %v, want one saying a stream is needed", err)
	}
}

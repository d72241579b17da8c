package sources

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/apache/arrow/go/v15/parquet"
	"github.com/apache/arrow/go/v15/parquet/file"
	"github.com/apache/arrow/go/v15/parquet/schema"
)

// checkedPages is a file.PageReader that checks each data page before the
// column reader decodes it: the page must hold the num_values its header
// claims, as definition and repetition levels and, for a required column,
// as values. arrow-go v15's columnChunkReader.readBatch loops without end
// on a page whose levels (or a required column's values) run out before
// num_values: each turn decodes nothing and consumes nothing (found by
// FuzzParquet; the class of arrow C++ PARQUET-2109 and arrow-rs #1997).
// A dictionary page must hold its num_values as PLAIN values: arrow-go
// sizes the dictionary by the claim before decoding it. Before each page
// is read, its header's compressed size is checked against the bytes left
// in the chunk (checkPageSizes).
// The check decodes only the run headers of the levels, not the levels, so
// its cost is linear in the page's bytes and far below the column
// reader's.
//
// A refused page ends the column chunk: Next returns false and Err names
// the row group, the column, the page (counted from 0, a dictionary page
// included) and the problem. The caller must check the column reader's
// Err when it reports no more data (pqColumn.fill does).
type checkedPages struct {
	file.PageReader
	descr  *schema.Column
	stream *pageStream // the chunk's bytes not yet read, if known
	rg     int         // row group, for errors
	col    string      // column path, for errors
	page   int         // pages returned so far
	err    error
}

func (p *checkedPages) Next() bool {
	if p.err != nil {
		return false
	}
	if p.stream != nil {
		if err := checkPageSizes(p.stream.data); err != nil {
			p.err = fmt.Errorf("parquet row group %d, column %s, page %d: %w", p.rg, p.col, p.page, err)
			return false
		}
	}
	if !p.PageReader.Next() {
		return false
	}
	p.page++
	if err := checkDataPage(p.PageReader.Page(), p.descr); err != nil {
		p.err = fmt.Errorf("parquet row group %d, column %s, page %d: %w", p.rg, p.col, p.page-1, err)
		return false
	}
	return true
}

func (p *checkedPages) Err() error {
	if p.err != nil {
		return p.err
	}
	return p.PageReader.Err()
}

// checkDataPage checks that the data page pg of column d holds its
// num_values levels (and values, for a required column), and a dictionary
// page its num_values PLAIN values. Other pages pass.
func checkDataPage(pg file.Page, d *schema.Column) error {
	var n int
	var rep, def, vals []byte
	var repEnc, defEnc parquet.Encoding
	switch pg := pg.(type) {
	case *file.DataPageV1:
		n = int(pg.NumValues())
		if n < 0 {
			return fmt.Errorf("data page header claims %d values", n)
		}
		buf := pg.Data()
		repEnc, defEnc = pg.RepetitionLevelEncoding(), pg.DefinitionLevelEncoding()
		// Layout: repetition levels, definition levels, values; levels
		// in RLE with a 4-byte length, or (deprecated) BIT_PACKED.
		for _, l := range []struct {
			max int16
			enc parquet.Encoding
			out *[]byte
		}{{d.MaxRepetitionLevel(), repEnc, &rep}, {d.MaxDefinitionLevel(), defEnc, &def}} {
			if l.max == 0 {
				continue
			}
			size, err := v1LevelsSize(l.enc, l.max, n, buf)
			if err != nil {
				return err
			}
			skip := 0
			if l.enc == parquet.Encodings.RLE {
				skip = 4 // the length prefix
			}
			*l.out, buf = buf[skip:size], buf[size:]
		}
		vals = buf
	case *file.DataPageV2:
		n = int(pg.NumValues())
		if n < 0 {
			return fmt.Errorf("data page header claims %d values", n)
		}
		buf := pg.Data()
		rl, dl := int64(pg.RepetitionLevelByteLen()), int64(pg.DefinitionLevelByteLen())
		if rl < 0 || dl < 0 || rl+dl > int64(len(buf)) {
			return fmt.Errorf("levels of %d + %d bytes in a data page of %d bytes", rl, dl, len(buf))
		}
		// Levels in RLE without a length prefix. Repetition levels
		// may be written for a column without any (ARROW-17453).
		rep, def, vals = buf[:rl], buf[rl:rl+dl], buf[rl+dl:]
		repEnc, defEnc = parquet.Encodings.RLE, parquet.Encodings.RLE
	case *file.DictionaryPage:
		// arrow-go sizes the dictionary by the header's num_values
		// before it decodes a value (NewDictConverter): 41 GB for a
		// fuzzed page of a few bytes. The values are PLAIN.
		n := int(pg.NumValues())
		if n < 0 {
			return fmt.Errorf("dictionary page header claims %d values", n)
		}
		if err := checkPlainValues(d, pg.Data(), n); err != nil {
			return fmt.Errorf("dictionary page: %w", err)
		}
		return nil
	default:
		return nil
	}
	for _, l := range []struct {
		name string
		max  int16
		enc  parquet.Encoding
		data []byte
	}{{"repetition", d.MaxRepetitionLevel(), repEnc, rep}, {"definition", d.MaxDefinitionLevel(), defEnc, def}} {
		if l.max == 0 || l.enc != parquet.Encodings.RLE {
			continue // BIT_PACKED levels: arrow-go checks their size
		}
		if got := rleCount(l.data, levelBitWidth(l.max), n); got < n {
			return fmt.Errorf("data page header claims %d values, its %s levels (%d bytes) hold %d", n, l.name, len(l.data), got)
		}
	}
	if enc := parquet.Encoding(pg.Encoding()); enc == parquet.Encodings.DeltaLengthByteArray || enc == parquet.Encodings.DeltaByteArray {
		// arrow-go makes a slice of lengths (4 bytes each) of the count
		// in the values' DELTA_BINARY_PACKED header before it decodes
		// them; that count is at most the page's num_values, and the
		// slice at most maxIPCUncompressed bytes, the limit of any one
		// allocation (limitedAllocator).
		total, err := deltaTotal(vals)
		if err != nil {
			return fmt.Errorf("%s values: %w", enc, err)
		}
		if total > uint64(n) {
			return fmt.Errorf("data page header claims %d values, its %s values %d", n, enc, total)
		}
		if total > maxIPCUncompressed/4 {
			return fmt.Errorf("%s values: %d lengths exceed the limit of %d", enc, total, maxIPCUncompressed/4)
		}
	}
	if d.MaxDefinitionLevel() > 0 {
		// The column reader takes its progress from the levels; the
		// values are counted against them as they are read (pqColumn.fill).
		return nil
	}
	return checkRequiredValues(parquet.Encoding(pg.Encoding()), d, vals, n)
}

// v1LevelsSize returns the size in bytes of the levels of n values at the
// start of a V1 data page's buf.
func v1LevelsSize(enc parquet.Encoding, max int16, n int, buf []byte) (int, error) {
	switch enc {
	case parquet.Encodings.RLE:
		if len(buf) < 4 {
			return 0, fmt.Errorf("levels length prefix cut short: %d bytes left in the data page", len(buf))
		}
		size := int64(binary.LittleEndian.Uint32(buf))
		if size > int64(len(buf)-4) {
			return 0, fmt.Errorf("levels of %d bytes in the %d bytes left in the data page", size, len(buf)-4)
		}
		return 4 + int(size), nil
	case parquet.Encodings.BitPacked:
		size := (int64(n)*int64(levelBitWidth(max)) + 7) / 8
		if size > int64(len(buf)) {
			return 0, fmt.Errorf("bit-packed levels of %d values need %d bytes, the data page has %d left", n, size, len(buf))
		}
		return int(size), nil
	}
	return 0, fmt.Errorf("levels in encoding %s", enc)
}

// levelBitWidth is the bit width of levels up to max.
func levelBitWidth(max int16) int {
	w := 0
	for v := max; v > 0; v >>= 1 {
		w++
	}
	return w
}

// checkRequiredValues checks that vals, the values of a data page of the
// required column d, hold the page's n values, for the encodings whose
// arrow-go v15 decoders return no values and no error when they run out
// (dictionary indices, DELTA_BINARY_PACKED) and for PLAIN.
func checkRequiredValues(enc parquet.Encoding, d *schema.Column, vals []byte, n int) error {
	switch enc {
	case parquet.Encodings.Plain:
		return checkPlainValues(d, vals, n)
	case parquet.Encodings.PlainDict, parquet.Encodings.RLEDict:
		if n == 0 {
			return nil
		}
		if len(vals) == 0 {
			return fmt.Errorf("data page header claims %d values, its dictionary indices are empty", n)
		}
		if w := int(vals[0]); w > 32 {
			return fmt.Errorf("dictionary indices of bit width %d", w)
		} else if got := rleCount(vals[1:], w, n); got < n {
			return fmt.Errorf("data page header claims %d values, its dictionary indices (%d bytes) hold %d", n, len(vals), got)
		}
	case parquet.Encodings.DeltaBinaryPacked:
		total, err := deltaTotal(vals)
		if err != nil {
			return err
		}
		if total < uint64(n) {
			return fmt.Errorf("data page header claims %d values, its DELTA_BINARY_PACKED header %d", n, total)
		}
	}
	return nil
}

// rleCount returns how many values of bitWidth bits the RLE/bit-packed
// hybrid runs in data hold, stopping once it reaches need (so its time is
// linear in len(data) and bounded by need's runs). It stops where arrow-go
// v15's RleDecoder stops: at a run header that does not decode, a run of
// length 0 or beyond its limits, or a run cut short by the end of data (a
// writer pads a bit-packed run to whole groups of 8).
func rleCount(data []byte, bitWidth, need int) int {
	count := 0
	for count < need {
		h, k := binary.Uvarint(data)
		if k <= 0 {
			break
		}
		data = data[k:]
		runs := h >> 1
		if h&1 == 1 { // bit-packed: runs groups of 8 values
			if runs == 0 || runs > math.MaxInt32/8 {
				break
			}
			size := runs * uint64(bitWidth)
			if size > uint64(len(data)) {
				break
			}
			data = data[size:]
			count += int(runs) * 8
		} else { // one value repeated runs times
			if runs == 0 || runs > math.MaxInt32 {
				break
			}
			size := (bitWidth + 7) / 8
			if size > len(data) {
				break
			}
			data = data[size:]
			count += int(runs)
		}
	}
	return count
}

// checkPlainValues checks that vals holds n PLAIN values of column d.
func checkPlainValues(d *schema.Column, vals []byte, n int) error {
	if d.PhysicalType() == parquet.Types.ByteArray {
		rest := vals
		for i := range n {
			if len(rest) < 4 {
				return fmt.Errorf("page header claims %d values, its PLAIN values hold %d", n, i)
			}
			size := int64(binary.LittleEndian.Uint32(rest))
			if size > int64(len(rest)-4) {
				return fmt.Errorf("value %d of a page: %d bytes in the %d bytes left", i, size, len(rest)-4)
			}
			rest = rest[4+size:]
		}
		return nil
	}
	var bits int64
	switch d.PhysicalType() {
	case parquet.Types.Boolean:
		bits = 1
	case parquet.Types.Int32, parquet.Types.Float:
		bits = 32
	case parquet.Types.Int64, parquet.Types.Double:
		bits = 64
	case parquet.Types.Int96:
		bits = 96
	case parquet.Types.FixedLenByteArray:
		bits = 8 * int64(d.TypeLength())
	}
	if need := (int64(n)*bits + 7) / 8; need > int64(len(vals)) {
		return fmt.Errorf("page header claims %d values of %d bits, its PLAIN values have %d bytes", n, bits, len(vals))
	}
	return nil
}

// deltaTotal returns the total value count of the DELTA_BINARY_PACKED
// header at the start of vals: block size, miniblocks per block and total
// count, unsigned varints.
func deltaTotal(vals []byte) (uint64, error) {
	var total uint64
	for range 3 {
		v, k := binary.Uvarint(vals)
		if k <= 0 {
			return 0, fmt.Errorf("DELTA_BINARY_PACKED header cut short")
		}
		vals, total = vals[k:], v
	}
	return total, nil
}

// checkPageSizes checks the page header at the start of data, the bytes
// left in a column chunk, before arrow-go v15's page reader reads it: its
// compressed_page_size must fit in the bytes after the header (the reader
// grows a buffer to the claimed size before reading: 2 GB for a header of a
// few bytes, FuzzParquet). It reads the header's leading scalar fields in
// Thrift's compact protocol, as writers put them (type, sizes, crc, each
// field id 1-4); a header whose sizes come after a nested struct is left to
// arrow-go. Headers of page types arrow-go skips (not data or dictionary)
// are followed to the next header, as arrow-go does.
func checkPageSizes(data []byte) error {
	for off := 0; off < len(data); {
		typ, comp, n, full, ok := pageHeaderSizes(data[off:])
		if !ok {
			return nil
		}
		switch typ {
		case 0, 2, 3: // DATA_PAGE, DICTIONARY_PAGE, DATA_PAGE_V2
			// The header is at least n bytes long.
			if left := len(data) - off - n; comp > int64(left) {
				return fmt.Errorf("page header claims %d compressed bytes, the column chunk has at most %d left", comp, left)
			}
			return nil
		}
		if !full {
			return nil
		}
		off += n
	}
	return nil
}

// pageHeaderSizes parses the leading scalar fields of a compact-protocol
// PageHeader, returning its type (field 1), compressed_page_size (field 3,
// an i32 as Thrift reads it) and the bytes parsed; ok is false unless both
// fields were found. full says whether the whole header was parsed (it
// ended at its STOP before any nested field), so that n is its length.
func pageHeaderSizes(b []byte) (typ int32, comp int64, n int, full, ok bool) {
	pos, id := 0, int16(0)
	var haveTyp, haveComp bool
	for pos < len(b) {
		h := b[pos]
		t := h & 0x0f
		if t == 0 { // STOP
			return typ, comp, pos + 1, true, haveTyp && haveComp
		}
		pos++
		if d := int16(h >> 4); d != 0 {
			id += d
		} else {
			v, k := binary.Varint(b[pos:])
			if k <= 0 {
				break
			}
			pos, id = pos+k, int16(v)
		}
		switch t {
		case 1, 2: // bool
		case 3: // byte
			pos++
		case 4, 5, 6: // i16, i32, i64: zigzag varints
			u, k := binary.Uvarint(b[min(pos, len(b)):])
			if k <= 0 {
				return typ, comp, pos, false, haveTyp && haveComp
			}
			pos += k
			if t == 5 {
				v := int32(uint32(u)>>1) ^ -int32(uint32(u)&1)
				switch id {
				case 1:
					typ, haveTyp = v, true
				case 3:
					comp, haveComp = int64(v), true
				}
			}
		default: // a nested struct, container, binary or double
			return typ, comp, pos, false, haveTyp && haveComp
		}
	}
	return typ, comp, pos, false, haveTyp && haveComp
}

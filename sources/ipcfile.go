package sources

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// IPC message header types (Message.fbs, MessageHeader union) and the
// metadata version assumed when a footer does not give one (V5).
const (
	ipcHeaderSchema  = 1
	ipcVersionV5     = 4
	maxFooterSchema  = 64 << 20 // bytes of an IPC file footer read to find its schema
	ipcContinuation  = 0xFFFFFFFF
	fbMessageVersion = 0 // Message.version
	fbMessageType    = 1 // Message.header_type
	fbFooterVersion  = 0 // Footer.version
	fbFooterSchema   = 1 // Footer.schema
)

// withFooterSchema returns the IPC stream of an Arrow IPC file whose body is
// body and whose footer is footer, such that it begins with a schema
// message. The format says the body of a file is a complete IPC stream, but
// some writers (the JavaScript Arrow library) leave out the schema message
// and keep the schema in the footer only; for those, withFooterSchema puts a
// schema message made from the footer's Schema table in front of the body.
// A body that begins with its schema message is returned as it is.
//
// Only the bytes needed are read: the first message's metadata, and the
// footer when the schema is missing (at most maxFooterSchema bytes). Every
// offset is checked against the bytes read; the message made here is read
// by the same guarded reader as any other.
func withFooterSchema(body, footer *io.SectionReader) (io.Reader, int64, error) {
	typ, err := firstMessageType(body)
	if err != nil {
		return nil, 0, err
	}
	if typ == ipcHeaderSchema {
		return body, body.Size(), nil
	}
	if footer.Size() > maxFooterSchema {
		return nil, 0, &LimitError{Record: -1, What: "size of the Arrow IPC file footer", Value: footer.Size(), Limit: maxFooterSchema}
	}
	fb := make([]byte, footer.Size())
	if _, err := footer.ReadAt(fb, 0); err != nil {
		return nil, 0, fmt.Errorf("reading the Arrow IPC file footer: %w", err)
	}
	msg, err := footerSchemaMessage(fb)
	if err != nil {
		return nil, 0, fmt.Errorf("arrow IPC file without a schema message: its footer: %w", err)
	}
	body.Seek(0, io.SeekStart)
	return io.MultiReader(bytes.NewReader(msg), body), int64(len(msg)) + body.Size(), nil
}

// firstMessageType returns the header type of the first message of the IPC
// stream r, 0 if the stream is empty.
func firstMessageType(r *io.SectionReader) (byte, error) {
	var pre [8]byte
	n, err := r.ReadAt(pre[:], 0)
	if n < 4 {
		if n == 0 && (err == io.EOF || err == nil) {
			return 0, nil
		}
		return 0, fmt.Errorf("arrow IPC file body: %d bytes", n)
	}
	at, length := int64(4), binary.LittleEndian.Uint32(pre[:4])
	if length == ipcContinuation {
		if n < 8 {
			return 0, errors.New("arrow IPC file body: truncated message length")
		}
		at, length = 8, binary.LittleEndian.Uint32(pre[4:8])
	}
	if length == 0 {
		return 0, nil
	}
	if int64(length) > r.Size()-at {
		return 0, fmt.Errorf("arrow IPC file body: first message of %d bytes in %d", length, r.Size()-at)
	}
	meta := make([]byte, length)
	if _, err := r.ReadAt(meta, at); err != nil {
		return 0, fmt.Errorf("arrow IPC file body: %w", err)
	}
	t, err := fbRoot(meta)
	if err != nil {
		return 0, fmt.Errorf("arrow IPC file body: first message: %w", err)
	}
	p, err := t.field(fbMessageType, 1)
	if err != nil || p < 0 {
		return 0, err
	}
	return meta[p], nil
}

// footerSchemaMessage returns an IPC stream message (continuation marker,
// length, flatbuffer padded to 8 bytes) whose Message table has the
// footer's Schema table as its header. The footer's bytes are copied whole
// after a new Message table, so the Schema table and everything it points
// to keep their relative offsets; only the header offset is new.
func footerSchemaMessage(footer []byte) ([]byte, error) {
	t, err := fbRoot(footer)
	if err != nil {
		return nil, err
	}
	version := int16(ipcVersionV5)
	if p, err := t.field(fbFooterVersion, 2); err != nil {
		return nil, err
	} else if p >= 0 {
		version = int16(binary.LittleEndian.Uint16(footer[p:]))
	}
	p, err := t.field(fbFooterSchema, 4)
	if err != nil {
		return nil, err
	}
	if p < 0 {
		return nil, errors.New("no schema")
	}
	schema, err := fbOffset(footer, p)
	if err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	if _, err := fbTableAt(footer, schema); err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}

	// The new flatbuffer: root offset, the Message vtable, the Message
	// table, then the footer (8-aligned at fbPrefix).
	//   vtable (at 4): size 12, table size 24, fields version@4,
	//                  header_type@6, header@8, bodyLength@16
	//   table (at 16): vtable soffset, version, header_type, pad,
	//                  header uoffset, pad, bodyLength
	const vt, table, fbPrefix = 4, 16, 40
	buf := make([]byte, fbPrefix+len(footer))
	le := binary.LittleEndian
	le.PutUint32(buf[0:], table)
	for i, v := range []uint16{12, 24, 4, 6, 8, 16} {
		le.PutUint16(buf[vt+2*i:], v)
	}
	le.PutUint32(buf[table:], uint32(table-vt))
	le.PutUint16(buf[table+4:], uint16(version))
	buf[table+6] = ipcHeaderSchema
	le.PutUint32(buf[table+8:], uint32(fbPrefix+schema-(table+8)))
	le.PutUint64(buf[table+16:], 0)
	copy(buf[fbPrefix:], footer)

	padded := (len(buf) + 7) &^ 7
	msg := make([]byte, 8+padded)
	le.PutUint32(msg[0:], ipcContinuation)
	le.PutUint32(msg[4:], uint32(padded))
	copy(msg[8:], buf)
	return msg, nil
}

// fbTable is a flatbuffer table at pos in buf, with its vtable checked to
// lie within buf.
type fbTable struct {
	buf     []byte
	pos, vt int
	vtSize  int
}

// fbRoot returns the root table of the flatbuffer buf.
func fbRoot(buf []byte) (fbTable, error) {
	p, err := fbOffset(buf, 0)
	if err != nil {
		return fbTable{}, fmt.Errorf("root: %w", err)
	}
	return fbTableAt(buf, p)
}

// fbOffset returns the position that the uoffset at p points to.
func fbOffset(buf []byte, p int) (int, error) {
	if p < 0 || p+4 > len(buf) {
		return 0, fmt.Errorf("offset at %d outside %d bytes", p, len(buf))
	}
	q := int64(p) + int64(binary.LittleEndian.Uint32(buf[p:]))
	if q+4 > int64(len(buf)) {
		return 0, fmt.Errorf("offset to %d outside %d bytes", q, len(buf))
	}
	return int(q), nil
}

func fbTableAt(buf []byte, pos int) (fbTable, error) {
	if pos < 0 || pos+4 > len(buf) {
		return fbTable{}, fmt.Errorf("table at %d outside %d bytes", pos, len(buf))
	}
	vt := int64(pos) - int64(int32(binary.LittleEndian.Uint32(buf[pos:])))
	if vt < 0 || vt+4 > int64(len(buf)) {
		return fbTable{}, fmt.Errorf("vtable at %d outside %d bytes", vt, len(buf))
	}
	size := int(binary.LittleEndian.Uint16(buf[vt:]))
	if size < 4 || size%2 != 0 || vt+int64(size) > int64(len(buf)) {
		return fbTable{}, fmt.Errorf("vtable of %d bytes at %d in %d", size, vt, len(buf))
	}
	return fbTable{buf: buf, pos: pos, vt: int(vt), vtSize: size}, nil
}

// field returns the position of field i of t, of width bytes, or −1 if the
// table does not have it.
func (t fbTable) field(i, width int) (int, error) {
	slot := 4 + 2*i
	if slot+2 > t.vtSize {
		return -1, nil
	}
	off := int(binary.LittleEndian.Uint16(t.buf[t.vt+slot:]))
	if off == 0 {
		return -1, nil
	}
	p := t.pos + off
	if p+width > len(t.buf) {
		return 0, fmt.Errorf("field %d at %d outside %d bytes", i, p, len(t.buf))
	}
	return p, nil
}

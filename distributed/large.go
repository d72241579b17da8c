package distributed

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"
)

// A message larger than the server accepts (max_payload: 1 MiB by default
// for nats-server) travels through the object store, which splits it into
// chunks: the basis U (D×K×8 bytes) and a delta whose ΔB has many nonzero
// rows. The message or key-value entry itself then holds a reference: the
// object's name and the SHA-256 of its content. The name carries the
// checksum, so two writers of the same delta number or version (a former
// owner that has not noticed its loss) store two objects and neither
// overwrites the one the log refers to; the log's compare-and-set still
// decides which one counts.
//
// Reference: tagRef, name length (u32), name, SHA-256 (32 bytes).

// payloadMargin is kept free below max_payload for the headers of a
// publish (message id, expected sequence) and of a key-value update.
const payloadMargin = 4096

// offload returns raw if it fits in one message of the server, and else
// stores it in the object store as prefix-<sha256> and returns a
// reference to it.
func (w *Worker) offload(ctx context.Context, prefix string, raw []byte) ([]byte, error) {
	limit := w.nc.MaxPayload() - payloadMargin
	if int64(len(raw)) <= limit {
		return raw, nil
	}
	sum := sha256.Sum256(raw)
	name := prefix + "-" + hex.EncodeToString(sum[:16])
	chunk := uint32(min(int64(128<<10), max(limit/2, 1024)))
	meta := jetstream.ObjectMeta{Name: name, Opts: &jetstream.ObjectMetaOptions{ChunkSize: chunk}}
	if _, err := w.st.snaps.Put(ctx, meta, bytes.NewReader(raw)); err != nil {
		return nil, fmt.Errorf("distributed: storing %s (%d bytes, over the server's max_payload of %d): %w", name, len(raw), w.nc.MaxPayload(), err)
	}
	var e enc
	e.u8(tagRef)
	e.u32(uint32(len(name)))
	e.b = append(e.b, name...)
	e.b = append(e.b, sum[:]...)
	return e.b, nil
}

// resolve returns the content of a message: raw itself, or, if raw is a
// reference, the object it names, checked against its checksum (a
// mismatch wraps errCorrupt). An object no longer in the store (a basis
// that newer versions replaced) gives an error wrapping
// jetstream.ErrObjectNotFound.
func (s *store) resolve(ctx context.Context, raw []byte) ([]byte, error) {
	if len(raw) == 0 || raw[0] != tagRef {
		return raw, nil
	}
	d := dec{b: raw[1:]}
	name := string(d.take(d.count(1)))
	want := d.take(sha256.Size)
	if d.err != nil {
		return nil, corrupt("reference: %v", d.err)
	}
	got, err := s.snaps.GetBytes(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("distributed: object %s: %w", name, err)
	}
	if sum := sha256.Sum256(got); !bytes.Equal(sum[:], want) {
		return nil, corrupt("object %s: checksum differs from its reference", name)
	}
	return got, nil
}

// refName returns the object name raw refers to, or "" if raw is no
// reference.
func refName(raw []byte) string {
	if len(raw) == 0 || raw[0] != tagRef {
		return ""
	}
	d := dec{b: raw[1:]}
	name := string(d.take(d.count(1)))
	if d.err != nil {
		return ""
	}
	return name
}

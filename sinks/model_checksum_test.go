package sinks_test

import (
	"bytes"
	"encoding/binary"
	"strings"
	"testing"

	"github.com/nmfstream/nmfstream/sinks"
	"github.com/nmfstream/nmfstream/sources"
)

// TestModelChecksum flips every byte of a saved model in turn: each flip,
// in the schema message at the start (header), the record batch (body)
// or the footer and magic (trailer), is refused, never read as another
// model; a flip inside the body that Arrow decodes fine is caught by the
// checksum. A file without a checksum (as written before checksums) is
// refused with advice.
func TestModelChecksum(t *testing.T) {
	_, s := fittedSnapshot(t)
	var buf bytes.Buffer
	if err := sinks.WriteModel(&buf, s, nil); err != nil {
		t.Fatal(err)
	}
	good := buf.Bytes()
	if _, err := sources.ReadModel(bytes.NewReader(good), nil); err != nil {
		t.Fatalf("the model as written: %v", err)
	}
	schemaEnd := 16 + int(binary.LittleEndian.Uint32(good[12:]))
	footerStart := len(good) - 10 - int(binary.LittleEndian.Uint32(good[len(good)-10:]))
	class := func(i int) string {
		switch {
		case i < schemaEnd:
			return "header"
		case i < footerStart:
			return "body"
		}
		return "trailer"
	}
	bad := bytes.Clone(good)
	byChecksum := map[string]int{}
	for i := range good {
		bad[i] ^= 0x04
		_, err := sources.ReadModel(bytes.NewReader(bad), nil)
		bad[i] = good[i]
		if err == nil {
			t.Errorf("byte %d (%s) of %d flipped: the model read without error", i, class(i), len(good))
			continue
		}
		if strings.Contains(err.Error(), "checksum mismatch") {
			byChecksum[class(i)]++
		}
	}
	for _, c := range []string{"header", "body", "trailer"} {
		if byChecksum[c] == 0 {
			t.Errorf("no flip in the %s was caught by the checksum: it does not cover the %s", c, c)
		}
	}

	// No checksum key (its name changed in both copies of the schema).
	old := bytes.ReplaceAll(good, []byte(sinks.ModelMetaChecksum), []byte("nmfstream.xxxxxx"))
	_, err := sources.ReadModel(bytes.NewReader(old), nil)
	if err == nil || !strings.Contains(err.Error(), "no checksum") || !strings.Contains(err.Error(), "refit") {
		t.Errorf("a model without a checksum: %v; want a refusal advising a refit", err)
	}
}

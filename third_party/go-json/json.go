// Package json stands in for github.com/goccy/go-json in nmfstream's own
// builds (the replace directive of nmfstream's go.mod): it is the part of
// goccy/go-json's API that encoding/json also has, forwarded to
// encoding/json.
//
// arrow-go imports goccy/go-json for the JSON form of its arrays
// (arrow/internal/json), which nmfstream never uses; goccy's four encoder
// virtual machines took a fifth of a cold build of cmd/nmfstream (BENCHMARKS.md,
// "Build time"). arrow-go builds the same file against encoding/json under
// TinyGo (internal/json/json_tinygo.go), so this is an API arrow-go already
// supports. A module that imports nmfstream as a library does not see the
// replace directive and builds against goccy/go-json itself.
package json

import (
	"bytes"
	"encoding/json"
	"io"
)

type (
	Decoder               = json.Decoder
	Encoder               = json.Encoder
	Marshaler             = json.Marshaler
	Unmarshaler           = json.Unmarshaler
	Token                 = json.Token
	Delim                 = json.Delim
	Number                = json.Number
	RawMessage            = json.RawMessage
	InvalidUnmarshalError = json.InvalidUnmarshalError
	MarshalerError        = json.MarshalerError
	SyntaxError           = json.SyntaxError
	UnmarshalTypeError    = json.UnmarshalTypeError
	UnsupportedTypeError  = json.UnsupportedTypeError
	UnsupportedValueError = json.UnsupportedValueError
)

// Marshal is encoding/json.Marshal.
func Marshal(v any) ([]byte, error) { return json.Marshal(v) }

// MarshalIndent is encoding/json.MarshalIndent.
func MarshalIndent(v any, prefix, indent string) ([]byte, error) {
	return json.MarshalIndent(v, prefix, indent)
}

// Unmarshal is encoding/json.Unmarshal.
func Unmarshal(data []byte, v any) error { return json.Unmarshal(data, v) }

// NewDecoder is encoding/json.NewDecoder.
func NewDecoder(r io.Reader) *Decoder { return json.NewDecoder(r) }

// NewEncoder is encoding/json.NewEncoder.
func NewEncoder(w io.Writer) *Encoder { return json.NewEncoder(w) }

// Valid is encoding/json.Valid.
func Valid(data []byte) bool { return json.Valid(data) }

// Compact is encoding/json.Compact.
func Compact(dst *bytes.Buffer, src []byte) error { return json.Compact(dst, src) }

// Indent is encoding/json.Indent.
func Indent(dst *bytes.Buffer, src []byte, prefix, indent string) error {
	return json.Indent(dst, src, prefix, indent)
}

// HTMLEscape is encoding/json.HTMLEscape.
func HTMLEscape(dst *bytes.Buffer, src []byte) { json.HTMLEscape(dst, src) }

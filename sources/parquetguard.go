package sources

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"github.com/apache/arrow/go/v15/arrow"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/apache/arrow/go/v15/parquet/file"
	"github.com/apache/arrow/go/v15/parquet/schema"
)

// arrowSchemaKey is the Parquet key-value metadata key under which
// pqarrow stores the Arrow schema of the written table, as a base64
// encoded IPC schema message.
const arrowSchemaKey = "ARROW:schema"

// checkParquetSchema checks the schema of a Parquet file before it is read:
// the number of fields and the nesting depth of the Parquet schema, and the
// ARROW:schema metadata, decoded with the guarded IPC reader
// (guardedMessages: lengths within the data, at most maxIPCFields fields,
// nesting at most maxIPCDepth; arrow-go v15's own decoder asked for 5.6 GB
// on a corrupt one, found by FuzzParquet). The metadata must be at most
// maxArrowSchemaBytes long. It returns the stored Arrow schema, or nil if
// the file has none.
func checkParquetSchema(pf *file.Reader, mem memory.Allocator) (*arrow.Schema, error) {
	md := pf.MetaData()
	if md == nil || md.Schema == nil {
		return nil, fmt.Errorf("parquet file without a schema")
	}
	n := 0
	if err := checkParquetGroup(md.Schema.Root(), 0, &n); err != nil {
		return nil, err
	}
	v := md.KeyValueMetadata().FindValue(arrowSchemaKey)
	if v == nil {
		return nil, nil
	}
	if len(*v) > maxArrowSchemaBytes {
		return nil, &LimitError{Record: -1, What: "size of the " + arrowSchemaKey + " metadata", Value: int64(len(*v)), Limit: maxArrowSchemaBytes}
	}
	// Decode as pqarrow's getOriginSchema does: padded, else unpadded.
	var decoded []byte
	var err error
	if len(*v)%4 == 0 {
		decoded, err = base64.StdEncoding.DecodeString(*v)
	}
	if len(decoded) == 0 || err != nil {
		decoded, err = base64.RawStdEncoding.DecodeString(*v)
	}
	if err != nil {
		return nil, fmt.Errorf("%s metadata: %w", arrowSchemaKey, err)
	}
	rr, stored, err := newGuardedReader(bytes.NewReader(decoded), int64(len(decoded)), mem, DefaultMaxDecodedBytes)
	if err != nil {
		return nil, fmt.Errorf("%s metadata: %w", arrowSchemaKey, err)
	}
	rr.Release()
	return stored, nil
}

// checkParquetGroup counts the fields under g into n and checks the count
// and the depth against the IPC reader's limits.
func checkParquetGroup(g *schema.GroupNode, depth int, n *int) error {
	if depth > maxIPCDepth {
		return &LimitError{Record: -1, What: "nesting depth of the Parquet schema", Value: int64(depth), Limit: maxIPCDepth}
	}
	for i := 0; i < g.NumFields(); i++ {
		if *n++; *n > maxIPCFields {
			return &LimitError{Record: -1, What: "number of fields of the Parquet schema", Value: int64(*n), Limit: maxIPCFields}
		}
		if c, ok := g.Field(i).(*schema.GroupNode); ok {
			if err := checkParquetGroup(c, depth+1, n); err != nil {
				return err
			}
		}
	}
	return nil
}

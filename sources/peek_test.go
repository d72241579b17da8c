package sources

import (
	"compress/gzip"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestReadPredictions(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "p.jsonl")
	if err := os.WriteFile(good, []byte(`{"id":"a","pred":"7","score":0.9}
{"id":"b","pred":null,"score":null}
{"id":"c","pred":"ham"}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := ReadPredictions(good)
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]string{"a": "7", "b": "", "c": "ham"}; !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	bad := filepath.Join(dir, "bad.jsonl")
	if err := os.WriteFile(bad, []byte("{\"id\":\"a\",\"pred\":\"1\"}\n{\"pred\":\"2\"}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadPredictions(bad); err == nil || !strings.Contains(err.Error(), "line 2") || !strings.Contains(err.Error(), "without an id") {
		t.Errorf("a line without an id: error %v, want one naming line 2 and the missing id", err)
	}
	empty := filepath.Join(dir, "empty.jsonl")
	if err := os.WriteFile(empty, []byte("{\"id\":\"\",\"pred\":\"1\"}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadPredictions(empty); err == nil || !strings.Contains(err.Error(), "line 1: a prediction without an id") || strings.Contains(err.Error(), "not a prediction") {
		t.Errorf("a line with an empty id: error %v, want one naming the empty id", err)
	}
	notJSON := filepath.Join(dir, "notjson.jsonl")
	if err := os.WriteFile(notJSON, []byte("id,pred\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadPredictions(notJSON); err == nil || !strings.Contains(err.Error(), "line 1: not a prediction") {
		t.Errorf("a line that is not JSON: error %v", err)
	}
}

func TestCSVHead(t *testing.T) {
	dir := t.TempDir()
	plain := filepath.Join(dir, "h.csv")
	if err := os.WriteFile(plain, []byte("text,label\n\"a b\",x\n\"c d\",y\n\"e f\",z\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	header, rows, err := CSVHead(plain, 2)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(header, []string{"text", "label"}) || len(rows) != 2 || rows[1][0] != "c d" {
		t.Errorf("header %v rows %v", header, rows)
	}
	gz := filepath.Join(dir, "n.csv.gz")
	f, err := os.Create(gz)
	if err != nil {
		t.Fatal(err)
	}
	zw := gzip.NewWriter(f)
	zw.Write([]byte("1,2,3\n4,5\n"))
	zw.Close()
	f.Close()
	header, rows, err = CSVHead(gz, 5)
	if err != nil {
		t.Fatal(err)
	}
	if header != nil || len(rows) != 2 || !reflect.DeepEqual(rows[0], []string{"1", "2", "3"}) {
		t.Errorf("numeric first record: header %v rows %v", header, rows)
	}
}

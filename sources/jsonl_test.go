package sources

import (
	"errors"
	"fmt"
	"github.com/nmfstream/nmfstream/record"
	"strings"
	"testing"
)

// fuzzJSONLimits are small limits, so that the fuzzer reaches them.
var fuzzJSONLimits = JSONLimits{MaxDim: 16, MaxIDBytes: 8, MaxLabelBytes: 8, MaxTextBytes: 64, MaxLineBytes: 256}

// goTypeName matches what a JSON error would say of a Go type.
func leaksGoType(msg string) bool {
	for _, s := range []string{"Go value", "Go struct", "main.", "sources.json", "float64", "[]"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// TestJSONLinesErrors checks the reject reasons and body errors of the
// JSON-lines decoders: each names the problem in JSON terms (never a Go
// type), a body of no JSON at all is ErrNotJSON, and the good lines of a
// body with bad ones are kept.
func TestJSONLinesErrors(t *testing.T) {
	lim := JSONLimits{MaxDim: 4, MaxIDBytes: 5, MaxLabelBytes: 5, MaxTextBytes: 10}
	for _, c := range []struct{ line, want string }{
		{`[{"x":[1]}]`, "a record is a JSON object, got an array"},
		{`{"x":"abc"}`, `"x" must be an array of numbers, not a string`},
		{`{"x":[1,"a"]}`, `"x" must be an array of numbers`},
		{`{"x":[1,2,3,4,5]}`, "5 features, over the limit of 4"},
		{`{"x":[1],"id":"abcdef"}`, `"id" of 6 bytes, over the limit of 5`},
		{`{"x":[1],"id":"\u0041\u0041\u0041\u0041\u0041\u0041"}`, `"id" of 6 bytes, over the limit of 5`},
		{`{"x":[1],"id":"a","label":{"a":1}}`, `"label" must be a string or a number, not an object`},
		{`{"text":"0123456789a"}`, "text of 11 bytes, over the limit of 10"},
		{`{"text":7}`, `field "text" must be a string, not number`},
		{`{"x":[-1]}`, "must be non-negative and at most 1e+60"},
		{`{"x":[1,1e200]}`, "value 1e+200 at feature 1: features must be non-negative and at most 1e+60"},
		{`{"x":[]}`, "empty x"},
		{`{"id":"a"}`, "no features"},
		{`{"x":[1],"text":"a"}`, "both x and text"},
	} {
		bs, err := ReadJSONLines(strings.NewReader(`{"x":[1]}`+"\n"+c.line+"\n"), 10, lim)
		if err != nil || len(bs) != 1 || bs[0].Len() != 1 || len(bs[0].Rejects) != 1 {
			t.Fatalf("%s: %v, %v", c.line, bs, err)
		}
		msg := bs[0].Rejects[0].Reason.Error()
		if !strings.Contains(msg, c.want) || leaksGoType(msg) || bs[0].Rejects[0].Offset != 1 {
			t.Errorf("%s: reject %q at %d, want %q without Go types", c.line, msg, bs[0].Rejects[0].Offset, c.want)
		}
	}
	for _, body := range []string{"not json", "not json\n{also not", "{\"x\":[1"} {
		if _, err := ReadJSONLines(strings.NewReader(body), 10, lim); !errors.Is(err, ErrNotJSON) || !strings.Contains(err.Error(), "line 1") {
			t.Errorf("%q: %v, want ErrNotJSON naming line 1", body, err)
		}
		if _, _, err := ReadJSONLabels(strings.NewReader(body), lim); !errors.Is(err, ErrNotJSON) {
			t.Errorf("labels %q: %v, want ErrNotJSON", body, err)
		}
	}
	labels, rejects, err := ReadJSONLabels(strings.NewReader("{\"id\":\"a\",\"label\":1}\nnot json\n{\"id\":\"b\"}\n{\"id\":2,\"label\":\"x\"}\n"), lim)
	if err != nil || len(labels) != 2 || labels[1] != (LabelLine{3, "2", "x"}) || len(rejects) != 2 || rejects[1].Offset != 2 {
		t.Errorf("labels with bad lines: %v, %v, %v", labels, rejects, err)
	}
	if _, err := ReadJSONLines(strings.NewReader(`{"x":[1]}`+strings.Repeat(" ", 300)), 10, JSONLimits{MaxLineBytes: 100}); err == nil || !strings.Contains(err.Error(), "longer than 100 bytes") {
		t.Errorf("long line: %v", err)
	}
}

// TestJSONLinesFormFromFeatures checks that a request's feature form is
// set by its first line with features: a late label, a line without
// features or a bad line before the documents (first in the request, or
// first in a later batch) leaves them their form, and a text over the
// length limit is rejected itself without making the request dense.
func TestJSONLinesFormFromFeatures(t *testing.T) {
	lim := JSONLimits{MaxTextBytes: 10}
	doc := func(id string) string { return `{"id":"` + id + `","text":"buy pills"}` + "\n" }
	var late strings.Builder
	for i := range 4 {
		late.WriteString(doc(fmt.Sprint("a", i)))
	}
	late.WriteString(`{"id":"a0","label":"ham"}` + "\n")
	for i := range 3 {
		late.WriteString(doc(fmt.Sprint("b", i)))
	}
	for _, c := range []struct {
		name, body       string
		size             int
		docs, late, rejs int
	}{
		{"late label first", `{"id":"d3","label":"ham"}` + "\n" + doc("t1") + doc("t2"), 10, 2, 1, 0},
		{"bad line first", `{"id":"oops"}` + "\n" + doc("t3") + doc("t4"), 10, 2, 0, 1},
		{"long text first", `{"id":"l","text":"far too long a text"}` + "\n" + doc("t5"), 10, 1, 0, 1},
		{"late label opens a batch", late.String(), 4, 7, 1, 0},
		{"label-only batch before documents", `{"id":"d3","label":"ham"}` + "\n" + doc("t1") + doc("t2"), 1, 2, 1, 0},
	} {
		bs, err := ReadJSONLines(strings.NewReader(c.body), c.size, lim)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		var docs, lates, rejs int
		for _, b := range bs {
			if b.Form != record.FormText {
				t.Errorf("%s: a batch of form %v, want text", c.name, b.Form)
			}
			docs, lates, rejs = docs+len(b.Text), lates+len(b.LateLabels), rejs+len(b.Rejects)
			for _, r := range b.Rejects {
				if strings.Contains(r.Reason.Error(), "feature form") {
					t.Errorf("%s: %v", c.name, r.Reason)
				}
			}
		}
		if docs != c.docs || lates != c.late || rejs != c.rejs {
			t.Errorf("%s: %d documents, %d late labels, %d rejects; want %d, %d, %d", c.name, docs, lates, rejs, c.docs, c.late, c.rejs)
		}
	}
	// A dense record after documents is still refused, naming the form.
	bs, err := ReadJSONLines(strings.NewReader(`{"id":"x"}`+"\n"+doc("t1")+`{"x":[1]}`+"\n"), 10, lim)
	if err != nil || len(bs) != 1 || len(bs[0].Rejects) != 2 || !strings.Contains(bs[0].Rejects[1].Reason.Error(), "one feature form per request") {
		t.Errorf("dense after text: %v, %v", bs, err)
	}
}

// TestJSONLinesIDBytesDecoded checks that the id bound counts the decoded
// id: 100 escaped letters are 100 bytes, within 256, and a 257-byte id is
// reported as 257 bytes.
func TestJSONLinesIDBytesDecoded(t *testing.T) {
	esc := `{"x":[1],"id":"` + strings.Repeat(`\u0041`, 100) + `"}`
	long := `{"x":[1],"id":"` + strings.Repeat("a", 257) + `"}`
	bs, err := ReadJSONLines(strings.NewReader(esc+"\n"+long+"\n"), 10, JSONLimits{})
	if err != nil || len(bs) != 1 {
		t.Fatalf("%v, %v", bs, err)
	}
	if b := bs[0]; b.Len() != 1 || b.IDs[0] != strings.Repeat("A", 100) {
		t.Errorf("escaped 100-byte id: samples %v, rejects %v", b.IDs, b.Rejects)
	}
	if r := bs[0].Rejects; len(r) != 1 || !strings.Contains(r[0].Reason.Error(), `"id" of 257 bytes, over the limit of 256`) {
		t.Errorf("257-byte id: rejects %v", r)
	}
	labels, rejects, err := ReadJSONLabels(strings.NewReader(`{"label":"l","id":"`+strings.Repeat(`\u0041`, 100)+`"}`), JSONLimits{})
	if err != nil || len(labels) != 1 || len(rejects) != 0 {
		t.Errorf("labels with an escaped id: %v, %v, %v", labels, rejects, err)
	}
}

// FuzzJSONLines checks the JSON-lines record decoder (ReadJSONLines,
// serve's POST /v1/records): every record comes out once, as a sample, a late
// label or a reject, and dense batches are rectangular.
func FuzzJSONLines(f *testing.F) {
	f.Add(`{"x":[1,2,3],"id":"a","label":"1"}
{"x":[0,0,1]}
{"id":"a","label":2}
{"x":[1,2]}
not json
{"text":"a document"}
`, 2)
	f.Add(`{"text":"one"}
{"text":"two","id":7,"label":null}
`, 1)
	f.Fuzz(func(t *testing.T, body string, size int) {
		size = 1 + int(uint(size)%8)
		bs, err := ReadJSONLines(strings.NewReader(body), size, fuzzJSONLimits)
		if err != nil {
			if !errors.Is(err, ErrNotJSON) && !strings.Contains(err.Error(), "longer than") {
				t.Fatalf("body error %v", err)
			}
			return
		}
		var next int64
		for _, b := range bs {
			if b.Records() == 0 || b.Records() > size {
				t.Fatalf("batch of %d records, size %d", b.Records(), size)
			}
			if b.Dense != nil {
				if r, _ := b.Dense.Dims(); r != b.Len() {
					t.Fatalf("Dense has %d rows for %d samples", r, b.Len())
				}
			}
			if b.Form == record.FormText && len(b.Text) != b.Len() {
				t.Fatalf("%d documents for %d samples", len(b.Text), b.Len())
			}
			seen := map[int64]bool{}
			for _, o := range b.Offsets {
				seen[o] = true
			}
			for _, l := range b.LateLabels {
				seen[l.Offset] = true
			}
			for _, r := range b.Rejects {
				seen[r.Offset] = true
			}
			for _, r := range b.Rejects {
				if msg := r.Reason.Error(); leaksGoType(msg) {
					t.Fatalf("reject reason names a Go type: %s", msg)
				}
			}
			for range b.Records() {
				if !seen[next] {
					t.Fatalf("record %d missing: %s", next, fmt.Sprint(b.Offsets, b.LateLabels, b.Rejects))
				}
				next++
			}
		}
	})
}

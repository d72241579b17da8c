package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestOpenAPIRoutes keeps openapi.json true: it parses as JSON with the
// fields OpenAPI 3 requires, every route of serve's mux is an operation of
// the document and every operation is a route, and every local $ref
// resolves.
func TestOpenAPIRoutes(t *testing.T) {
	var doc map[string]any
	if err := json.Unmarshal(openAPI, &doc); err != nil {
		t.Fatalf("openapi.json is not JSON: %v", err)
	}
	if v, _ := doc["openapi"].(string); !strings.HasPrefix(v, "3.") {
		t.Errorf("openapi = %q, want 3.x", doc["openapi"])
	}
	info, _ := doc["info"].(map[string]any)
	if info == nil || info["title"] == nil || info["version"] == nil {
		t.Errorf("info %v lacks title or version", info)
	}
	paths, _ := doc["paths"].(map[string]any)
	if len(paths) == 0 {
		t.Fatal("no paths")
	}
	var documented []string
	for p, item := range paths {
		ops, _ := item.(map[string]any)
		for m, op := range ops {
			switch m {
			case "get", "put", "post", "delete", "options", "head", "patch", "trace":
			default:
				continue
			}
			documented = append(documented, strings.ToUpper(m)+" "+p)
			if resp, _ := op.(map[string]any)["responses"].(map[string]any); len(resp) == 0 {
				t.Errorf("%s %s has no responses", m, p)
			}
		}
	}
	var routed []string
	for _, r := range (&server{}).routes() {
		routed = append(routed, r.pattern)
	}
	slices.Sort(documented)
	slices.Sort(routed)
	for _, r := range routed {
		if !slices.Contains(documented, r) {
			t.Errorf("route %q is not in openapi.json", r)
		}
	}
	for _, d := range documented {
		if !slices.Contains(routed, d) {
			t.Errorf("openapi.json documents %q, which serve does not route", d)
		}
	}
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if ref, ok := v["$ref"].(string); ok {
				if !resolves(doc, ref) {
					t.Errorf("$ref %q does not resolve", ref)
				}
			}
			for _, w := range v {
				walk(w)
			}
		case []any:
			for _, w := range v {
				walk(w)
			}
		}
	}
	walk(doc)
}

// resolves reports whether the local reference ref ("#/a/b") names a
// value of doc.
func resolves(doc map[string]any, ref string) bool {
	if !strings.HasPrefix(ref, "#/") {
		return false
	}
	var cur any = doc
	for _, k := range strings.Split(ref[2:], "/") {
		m, ok := cur.(map[string]any)
		if !ok {
			return false
		}
		if cur, ok = m[k]; !ok {
			return false
		}
	}
	return true
}

// TestServeAPI checks GET /openapi.json, GET /v1/records/{id} and the JSON
// error bodies with their statuses.
func TestServeAPI(t *testing.T) {
	cfg := onlineConfig{Rank: 2, Neighbors: 2, Window: 100, Batch: 4, Seed: 1}
	s := &server{learner: cfg.learner(), cfg: cfg, maxBody: 4 << 10, recentMax: 6}
	url, stop := startServer(t, s)
	defer func() {
		if err := stop(); err != nil {
			t.Error(err)
		}
	}()
	client := &http.Client{Timeout: 30 * time.Second}
	do := func(method, path, ctype, body string) (int, http.Header, []byte) {
		t.Helper()
		req, err := http.NewRequest(method, url+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if ctype != "" {
			req.Header.Set("Content-Type", ctype)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, resp.Header, b
	}
	wantError := func(what string, status int, code string, gotStatus int, h http.Header, body []byte) {
		t.Helper()
		var e apiError
		if err := json.Unmarshal(body, &e); err != nil || gotStatus != status || e.Error.Code != code || e.Error.Message == "" ||
			!strings.HasPrefix(h.Get("Content-Type"), "application/json") {
			t.Errorf("%s: status %d, Content-Type %q, body %s; want %d and {\"error\": {\"code\": %q, \"message\": …}}",
				what, gotStatus, h.Get("Content-Type"), body, status, code)
		}
	}

	st, h, b := do("GET", "/openapi.json", "", "")
	if st != 200 || !bytes.Equal(b, openAPI) || h.Get("Content-Type") != "application/json" {
		t.Errorf("GET /openapi.json: status %d, Content-Type %q, %d bytes", st, h.Get("Content-Type"), len(b))
	}

	// Ten records with ids; the service remembers the last six.
	var body strings.Builder
	for i := range 10 {
		fmt.Fprintf(&body, "{\"id\":\"r%d\",\"x\":[%d,1,%d],\"label\":%d}\n", i, i%2, (i+1)%2, i%2)
	}
	st, _, b = do("POST", "/v1/records", mediaJSONL, body.String())
	var rr recordsResponse
	if err := json.Unmarshal(b, &rr); st != 200 || err != nil || len(rr.Predictions) != 10 {
		t.Fatalf("POST /v1/records: status %d, %v: %s", st, err, b)
	}
	for i, p := range rr.Predictions {
		st, _, b := do("GET", "/v1/records/"+p.ID, "", "")
		if i < 4 {
			wantError("GET a forgotten record", 404, "not_found", st, h, b)
			continue
		}
		var got predictionJSON
		if err := json.Unmarshal(b, &got); st != 200 || err != nil {
			t.Errorf("GET /v1/records/%s: status %d, %v: %s", p.ID, st, err, b)
			continue
		}
		want, _ := json.Marshal(p)
		if again, _ := json.Marshal(got); !bytes.Equal(again, want) {
			t.Errorf("GET /v1/records/%s = %s, the POST answered %s", p.ID, again, want)
		}
	}

	st, h, b = do("GET", "/v1/records/nobody", "", "")
	wantError("unknown id", 404, "not_found", st, h, b)
	// A line without a label is rejected; the body's good lines are kept.
	if st, _, b = do("POST", "/v1/labels", mediaJSONL, "{\"id\":\"r1\"}\n{\"id\":\"r2\",\"label\":0}\n"); st != 200 ||
		!strings.Contains(string(b), `"applied":1,"pending":0,"rejected":[{"offset":0,"id":"r1","reason":`) {
		t.Errorf("labels, one without a label: status %d: %s", st, b)
	}
	st, h, b = do("POST", "/v1/records", mediaJSONL, "not json")
	wantError("records that are not JSON", 400, "bad_request", st, h, b)
	st, h, b = do("POST", "/v1/labels", mediaJSONL, "{not json\n")
	wantError("labels that are not JSON", 400, "bad_request", st, h, b)
	st, h, b = do("POST", "/v1/records", mediaJSONL, strings.Repeat("{\"x\":[1,2,3]}\n", 1000))
	wantError("a body over --max-body", 413, "too_large", st, h, b)
	st, h, b = do("POST", "/v1/records", mediaArrow, "not arrow")
	wantError("a body that is not Arrow", 400, "bad_request", st, h, b)
	st, h, b = do("DELETE", "/v1/records", "", "")
	wantError("DELETE /v1/records", 405, "method_not_allowed", st, h, b)
	if !strings.Contains(h.Get("Allow"), "POST") {
		t.Errorf("405 without Allow: POST: %v", h)
	}
	st, h, b = do("GET", "/v2/nothing", "", "")
	wantError("an unknown path", 404, "not_found", st, h, b)
	if st, _, b = do("POST", "/v1/labels", mediaJSONL, "{\"id\":\"r1\",\"label\":1}\n"); st != 200 || !strings.Contains(string(b), "\"applied\":1") {
		t.Errorf("POST /v1/labels: status %d: %s", st, b)
	}
}

// errorMessage returns the message of a JSON error body, or the body
// itself if it is not one.
func errorMessage(body string) string {
	var e apiError
	if err := json.Unmarshal([]byte(body), &e); err != nil || e.Error.Message == "" {
		return body
	}
	return e.Error.Message
}

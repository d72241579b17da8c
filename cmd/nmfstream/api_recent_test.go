package main

import (
	"fmt"
	"testing"
)

// TestRecentRecordsBound adds 100,000 predictions whose ids cycle over 200
// names (records that left a small window and came back) to a store of
// --recent 1,000: every id keeps its latest prediction, list gives each
// once, and the store's arrival order stays within 2·max + 1,024 keys.
// Before, the stale keys of the ids that came back were never dropped
// while the store held fewer than --recent ids: 100,000 keys here, and
// serve's memory grew without bound.
func TestRecentRecordsBound(t *testing.T) {
	var rr recentRecords
	const max, ids, n = 1000, 200, 100000
	for i := range n {
		rr.addJSON(max, predictionJSON{ID: fmt.Sprint("r", i%ids), Offset: int64(i)})
	}
	if len(rr.order) > 2*max+1024 {
		t.Errorf("%d keys in the arrival order for %d ids, want at most %d", len(rr.order), len(rr.byID), 2*max+1024)
	}
	list := rr.list()
	if len(rr.byID) != ids || len(list) != ids {
		t.Fatalf("%d ids, %d listed; want %d", len(rr.byID), len(list), ids)
	}
	for j, p := range list {
		if want := int64(n - ids + j); p.Offset != want || p.ID != fmt.Sprint("r", want%ids) {
			t.Fatalf("listed %d: %+v, want offset %d (the latest of its id, oldest first)", j, p, want)
		}
	}
	// More ids than max: the oldest are forgotten, the newest max kept.
	for i := range 5000 {
		rr.addJSON(max, predictionJSON{ID: fmt.Sprint("s", i), Offset: int64(n + i)})
	}
	if got := rr.list(); len(got) != max || got[0].ID != "s4000" || got[max-1].ID != "s4999" {
		t.Errorf("after 5,000 new ids: %d listed, first %+v; want the newest %d", len(got), got[0], max)
	}
}

package pipeline

import "sync/atomic"

// StageStats is a snapshot of one step's counters.
//
// For the source, In counts records read (good or rejected) and Out the
// items passed on. For a stage, In counts items received, Out items passed
// on (batches, for a Batch stage; possibly several per item for FlatMap;
// In − Out − Rejected items dropped by a Filter). For a sink, In counts items
// offered and Out items written without error.
type StageStats struct {
	Name     string
	In       int64
	Out      int64
	Rejected int64
}

// counter holds one step's live counters. Each field is updated atomically,
// so it can be read while the pipeline runs; a snapshot of several fields is
// not taken at one instant.
type counter struct {
	name     string
	in       atomic.Int64
	out      atomic.Int64
	rejected atomic.Int64
}

func (c *counter) snapshot() StageStats {
	return StageStats{Name: c.name, In: c.in.Load(), Out: c.out.Load(), Rejected: c.rejected.Load()}
}

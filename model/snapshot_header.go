package model

import (
	"fmt"

	"github.com/nmfstream/nmfstream/model/graph"
)

// The format name and metadata keys of saved model files: sinks.WriteModel
// writes them and sources.ReadModel checks them.
const (
	SnapshotFormat      = "nmfstream-model"
	SnapshotMetaFormat  = "nmfstream.format"
	SnapshotMetaVersion = "nmfstream.version"
	SnapshotMetaHeader  = "nmfstream.header"
)

// SnapshotHeader holds the scalar fields of a Snapshot, in the form a saved
// model stores them (a JSON object in its metadata).
type SnapshotHeader struct {
	Method      string            `json:"method"`
	Params      map[string]string `json:"params,omitempty"`
	K           int               `json:"neighbors"`
	Metric      int               `json:"metric"`
	Scheme      int               `json:"weighting"`
	HeatT       float64           `json:"heat_t"`
	Sym         int               `json:"symmetrize"`
	Alpha       float64           `json:"alpha"`
	Projection  string            `json:"projection"`
	Linear      bool              `json:"linear"`
	Classes     []string          `json:"classes"`
	IntLabels   bool              `json:"int_labels"`
	Form        string            `json:"form"`
	ImageWidth  int               `json:"image_width,omitempty"`
	ImageHeight int               `json:"image_height,omitempty"`
}

// Header returns the scalar fields of s.
func (s *Snapshot) Header() SnapshotHeader {
	h := SnapshotHeader{
		Method:      s.Method,
		Params:      s.Params,
		K:           s.Graph.K,
		Metric:      int(s.Graph.Metric),
		Scheme:      int(s.Weighting.Scheme),
		HeatT:       s.Weighting.HeatT,
		Sym:         int(s.Weighting.Sym),
		Alpha:       s.Alpha,
		Projection:  s.Projection.String(),
		Linear:      s.Linear,
		Classes:     s.Classes,
		IntLabels:   s.IntLabels,
		Form:        s.Form,
		ImageWidth:  s.ImageWidth,
		ImageHeight: s.ImageHeight,
	}
	if h.Classes == nil {
		h.Classes = []string{}
	}
	return h
}

// SetHeader sets the scalar fields of s from h. It returns an error for an
// unknown projection name.
func (s *Snapshot) SetHeader(h SnapshotHeader) error {
	proj, err := ParseProjection(h.Projection)
	if err != nil {
		return fmt.Errorf("model: snapshot header: %w", err)
	}
	s.Method, s.Params = h.Method, h.Params
	s.Graph = graph.KNN{K: h.K, Metric: graph.Metric(h.Metric)}
	s.Weighting = graph.Weighting{Scheme: graph.Scheme(h.Scheme), HeatT: h.HeatT, Sym: graph.Symmetrize(h.Sym)}
	s.Alpha, s.Projection, s.Linear = h.Alpha, proj, h.Linear
	s.Classes, s.IntLabels, s.Form = h.Classes, h.IntLabels, h.Form
	s.ImageWidth, s.ImageHeight = h.ImageWidth, h.ImageHeight
	return nil
}

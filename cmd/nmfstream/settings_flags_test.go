package main

import (
	"errors"
	"strings"
	"testing"

	"github.com/nmfstream/nmfstream/stages"
)

// TestSettingFlagsWordEveryRefusal builds the learner of every
// combination of --predictor, --codes and the --spread-* flags and checks
// that each refusal of stages.Learner.Check reaches the command line worded
// by settingFlags, naming the flag, not in the learner's field names: a
// check added to the library without its flag fails here.
func TestSettingFlagsWordEveryRefusal(t *testing.T) {
	predictors := []stages.Predictor{stages.PredictGraph, stages.PredictSpread, stages.PredictNearest, stages.PredictWalk, stages.PredictPropagate}
	codes := []stages.CodeUse{stages.CodesAuto, stages.CodesOff, stages.CodesOnly}
	refused := 0
	for _, p := range predictors {
		for _, cu := range codes {
			for set := 0; set < 8; set++ {
				c := onlineConfig{Rank: 4, Neighbors: 3, Window: 100, Batch: 10, Seed: 1, Predictor: int(p), Codes: int(cu)}
				if set&1 != 0 {
					c.SpreadPower = 5
				}
				if set&2 != 0 {
					c.SpreadCodes = 4
				}
				if set&4 != 0 {
					c.SpreadMetric = 1
				}
				for _, e := range joined(c.learner().Check()) {
					var se *stages.SettingError
					if errors.Is(e, stages.ErrCodesOff) {
						continue
					}
					if !errors.As(e, &se) {
						t.Errorf("predictor %d codes %d set %b: %v is not a SettingError", p, cu, set, e)
						continue
					}
					refused++
					if _, ok := settingFlags[[2]string{se.Field, se.With}]; !ok {
						t.Errorf("predictor %d codes %d set %b: %v has no wording in settingFlags", p, cu, set, e)
					}
				}
				err := checkCodeUse(c)
				if err != nil && (strings.Contains(err.Error(), "SpreadPower") || strings.Contains(err.Error(), "SpreadCodes") || strings.Contains(err.Error(), "SpreadMetric")) {
					t.Errorf("predictor %d codes %d set %b: %v names a field, not a flag", p, cu, set, err)
				}
				if c.learner().Check() != nil && err == nil {
					t.Errorf("predictor %d codes %d set %b: the learner refuses (%v), the command accepts", p, cu, set, c.learner().Check())
				}
			}
		}
	}
	if refused == 0 {
		t.Fatal("no combination was refused: the test checks nothing")
	}
}

package stages

import "github.com/nmfstream/nmfstream/model/classify"

// The code-space expert of PredictGraph's mixture on documents (mix): the
// class shares of a new sample's nearest labeled codes, weighed by the
// hedge like the other experts. It is the one expert that reads the
// method's codes alone, so the codes reach the mixture's answer through it
// as well as through the spreading's edge weights (Learner.SpreadCodes).
// What it adds and costs, and how its vote was chosen: BENCHMARKS.md, "The
// codes as an expert of the mixture".

// codeVotePseudo is the number of pseudo-votes spread evenly over the
// classes that smooth the expert's shares (an m-estimate with a uniform
// prior): k votes for one class of C give it (k + m/C)/(k + m), not 1, so
// that the expert, whose shares are far sharper than the spreading's
// probabilities, does not overrule the others on its own in the hedge's
// linear mixture.
const codeVotePseudo = 2

// codeExpert reports whether the mixture (mix, which runs on documents
// only) reads the code-space expert: with the codes read (not CodesOff),
// unless NoCodeExpert, once the model has codes.
func (l *Learner) codeExpert() bool {
	return !l.NoCodeExpert && l.Codes != CodesOff && l.Model.Started()
}

// codeVotes returns the code-space expert's class shares of the new nodes
// ids (len(ids)×C for the C classes known, each row summing to one; a row
// of a sample whose code has no finite neighbour is uniform), or nil
// without codes or labeled samples. The k voters of a sample are its k
// nearest labeled live window samples by the cosine of their classifying
// codes (classCodes), k the graph's (Model.Graph.K, else
// defaultCodeNeighbors) or every labeled sample if fewer. It reads the
// codes of ids, so it waits for the batch's step (model.Online.Codes). It
// costs O(len(ids)·L·K) for L labeled samples in the window and codes of K
// columns, plus a copy of their codes.
func (l *Learner) codeVotes(ids []int) []float64 {
	if !l.codeExpert() {
		return nil
	}
	k := l.Model.Graph.K
	if k <= 0 {
		k = defaultCodeNeighbors
	}
	nn, y := l.labeledVoters(k, classify.Cosine)
	if nn == nil {
		return nil
	}
	k = nn.K
	idx, _ := nn.NeighborsTo(nil, nil, l.codesOf(ids))
	nc := len(l.classes)
	prior := codeVotePseudo / float64(nc)
	out := make([]float64, len(ids)*nc)
	for p := range ids {
		row := out[p*nc : (p+1)*nc]
		votes := 0
		for _, j := range idx[p*k : (p+1)*k] {
			if j >= 0 {
				row[y[j]]++
				votes++
			}
		}
		for c := range row {
			row[c] = (row[c] + prior) / (float64(votes) + codeVotePseudo)
		}
	}
	return out
}

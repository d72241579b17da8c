package model

// AutoMethod is the name of the method that Auto returns, for a command
// line's "--method auto".
const AutoMethod = "ssknmf"

// Auto returns the method that "--method auto" runs, at its default
// hyperparameters and rank K: SSKNMF, the semi-supervised method that
// measured best under docs/DESIGN.md §7's protocol on validation splits (the
// figures and how to reproduce them are in BENCHMARKS.md, "Defaults and
// how they were chosen"). Change it only with a measurement recorded there.
func Auto(rank int) Method {
	return &SSKNMF{Common: Common{Rank: rank}}
}

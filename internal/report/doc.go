// Package report writes a user's report on a model fitted to their own
// data: what was fitted, how well it classifies the held-out records
// (accuracy, balanced accuracy, macro-F1, per-class recall and precision,
// the confusion matrix), how the fit converged, and what the basis looks
// like, as report.md, report.json and PNG figures in one directory.
//
// The report only renders: the measurements are made by the caller (the
// "nmfstream report" command, which fits and evaluates as "nmfstream
// eval" does) and handed over in a Report. It starts no process and reads
// no file. The papers' experiments and the comparisons with other
// libraries are not here: they are the bench/paper command's.
//
// # Figures
//
// Every figure has a title, labelled axes and a grid (package
// internal/figure): the objective per update, relative to the first
// (objective.png, when the method reports one); the held-out recall of
// each class (classes.png); the confusion matrix shaded by the share of
// each true class (confusion.png, up to 30 classes); and, for features
// that are square images, the columns of the basis U drawn as images
// (basis.png). For documents, report.md lists the top terms of each
// factor (Report.Topics).
//
// # Ownership
//
// Write adds the figures it drew to the Report and keeps no reference to
// its arguments.
package report

// Package methods is the one table of nmfstream's factorization methods:
// for each name that "--method" takes (nmf, gnmf, dgnmf, ssknmf, ssnmf,
// n2s2l, nge, kernel, multik, dpca, and auto), a one-line summary, what the
// method does with labels, whether it can learn online, which options it
// reads and their defaults, and a constructor from Options. The command
// line (fit, eval, project, classify, demo, stream, serve), the report and
// library users build methods from it, so that a name means the same
// method with the same defaults everywhere.
//
// # Design
//
// The table is a function of nothing: List returns a fresh slice built from
// literals on every call, and Lookup and New search it. There is no mutable
// global, no init-time registration and no way to add a method at run time
// (docs/STYLE.md, "Configuration": no registries); adding a method is one entry in list.
//
// The table cannot live in package model: the kernel methods (Flexible,
// MultiK) are in model/kernel, which imports model, so model cannot
// construct them without an import cycle. Package methods sits above both
// (it imports model and model/kernel, and nothing in model imports it).
// The rule that picks "auto" stays in model (model.AutoMethod, model.Auto),
// next to its measurements; Lookup("auto") resolves it to that entry.
//
// # Concurrency
//
// Every function is safe for concurrent use; the methods they return are
// not (see each method's documentation).
package methods

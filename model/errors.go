package model

import "errors"

// ErrNotFitted is the panic value of accessors called before a successful Fit.
var ErrNotFitted = errors.New("model: not fitted")

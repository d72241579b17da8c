// Package datasets embeds a small real data set to try nmfstream on
// without downloading anything: scikit-learn's 8×8 handwritten digits
// (1,797 samples, 64 pixel values in [0, 16], 10 classes; BSD-3,
// originally the UCI optdigits test set).
//
// The demo, the examples and the tests use it.
package datasets

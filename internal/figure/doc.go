// Package figure draws the PNG figures of nmfstream's reports: line plots
// (Line) and bar charts (Bars) with labelled axes, a grid and a legend
// beside the plot, and grids of image tiles (Tiles, Basis) for basis
// images and samples.
//
// Every function writes one PNG file at the path it is given, on a white
// background, and returns the error of drawing or writing it. Nothing is
// kept between calls. A series without a name gets no legend entry, and
// points that cannot be drawn (NaN, ±Inf, non-positive values on a log
// axis) are left out.
//
// The package draws with golang.org/x/image's anti-aliasing rasterizer
// and the Go Regular font rather than a plotting library, which would be
// most of the compilation a new user waits for before the first report
// (BENCHMARKS.md, "Build time").
package figure

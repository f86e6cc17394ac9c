// Package show writes the load test's figures for people: latencies,
// memory, ratios and shares in units that suit them, and rows of cells as
// aligned columns or as a Markdown table. The reports of run, compare,
// size and the soak share it, so that one figure reads the same in each.
//
// Every function is pure but Aligned, which writes to its io.Writer.
package show

// Package report says what the bench measured: the medians of the runs
// and their ratios, lmigo's targets checked on them (memory, against the
// floor, below saturation, the emulator's rejections), the notes that
// say how the figures were taken, and all of it for people and programs:
// the terminal's table or a run's report, JSON, Markdown and PNG charts.
//
//	rep := report.New("compare", cfg, settings, scs, rts, res)
//	report.PrintTable(os.Stdout, rep)
//	err := report.Write(rep, "loadtest/out", "compare", os.Stdout)
//
// # Contract
//
// New only computes: from the runs of a bench.Result to the Report, whose
// JSON is the file written. Print functions write to their io.Writer;
// Write creates the directory, writes NAME.json, NAME.md and the charts,
// lists them by their absolute path, and with "" writes nothing. A run
// with problems is left out of the medians; a target without the figures
// it needs is not met. RunVerdict is one line: what a run shows, and what
// it does not.
package report

package sizing

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/lmigo/lmigo/loadtest/show"
)

// sizeText is the report of size, for the terminal and Markdown alike.
type sizeText struct {
	head   []string
	tables [][][]string // the steps, then the costs per events file
	tail   []string
}

// sizeLines are the report's lines.
func sizeLines(p *Profile) sizeText {
	sized := fmt.Sprintf("Sized %s with %s, target %s, on %d CPUs, for %d vCPUs, in %s.", p.Bootstrap, p.Events, p.Target, p.MachineCPUs, p.VCPUs, time.Duration(p.Elapsed))
	t := sizeText{tables: [][][]string{stepTable(p)}}
	if c := costTable(p.EventCosts); c != nil {
		t.tables = append(t.tables, c)
	}
	if len(p.Steps) > 0 {
		t.tail = append(t.tail, spreadLine(p.Steps[0]))
	}
	if p.rec.N == 0 {
		why := p.NoRecommendation
		if why == "" {
			why = "no recommendation"
		}
		t.head = []string{sized, strings.ToUpper(why[:1]) + why[1:] + "."}
		t.tail = append(append(t.tail, p.Notes...), outputLine(p)...)
		return t
	}
	held := "not checked here"
	switch {
	case p.Confirmed:
		held = heldAfter(p.Checks)
	case p.Unconfirmed != "":
		held = "NOT confirmed: see the next sentence"
	}
	t.head = []string{
		sized,
		fmt.Sprintf("PerExecutionEnvironmentMaxConcurrency %d, ConcurrencyPerVCpu %s, ExecutionEnvironmentMemoryGiBPerVCpu %d (limited by %s; %s).",
			p.PerExecutionEnvironmentMaxConcurrency, strconv.FormatFloat(p.ConcurrencyPerVCpu, 'f', -1, 64), p.ExecutionEnvironmentMemoryGiBPerVCpu, p.LimitedBy, held),
	}
	if p.Unconfirmed != "" {
		t.head = append(t.head, p.Unconfirmed)
	}
	t.head = append(t.head, p.Sentences[0], p.Sentences[1])
	t.tail = append(t.tail, p.RestsOn)
	tail := t.tail
	var bounds []string
	for _, ratio := range memoryRatios {
		bounds = append(bounds, fmt.Sprintf("N=%d at %d GiB per vCPU", p.MemoryBoundN[strconv.Itoa(ratio)], ratio))
	}
	tail = append(tail, fmt.Sprintf("Memory holds, with %.0f%% to spare, %s (for %d vCPUs).", 100*memoryRoom, strings.Join(bounds, ", "), p.VCPUs))
	tail = append(tail, p.Notes...)
	tail = append(tail, outputLine(p)...)
	for _, c := range p.Checks {
		tail = append(tail, checkLine(c, p.ScaleAt))
	}
	if len(p.Checks) == 0 {
		tail = append(tail, fmt.Sprintf("No check at the recommended N: it runs when -vcpus is this machine's (%d CPUs; sized for %d vCPUs), -check is not false, its memory fits here and the time allows.", p.MachineCPUs, p.VCPUs))
	}
	tail = append(tail, "SAM parameters (deploy/template.yaml; CodeBucket and CodeKey name your zip in S3): "+p.SAM)
	t.tail = tail
	return t
}

// outputLine sums up the function's output, when there is a summary.
func outputLine(p *Profile) []string {
	if p.Output == nil {
		return nil
	}
	return []string{"The function's output, over every step: " + p.Output.Words() + "."}
}

// stepTable is the table of the sweep's steps.
func stepTable(p *Profile) [][]string {
	table := [][]string{{"N", "", "inv/s", "p50", "p99", "CPU/inv", "driver CPU/inv", "peak RSS", "others' CPUs"}}
	for _, s := range p.Steps {
		mark := ""
		if s.N == p.KneeN {
			mark = "knee"
		} else if !s.Linear {
			mark = "past"
		}
		table = append(table, []string{strconv.Itoa(s.N), mark, show.Count(s.Throughput), show.Millis(s.P50MS), show.Millis(s.P99MS), show.Millis(s.CPUMS), show.Millis(s.DriverCPUMS), show.MiB(s.PeakRSSMiB), show.One(s.OtherCPUs)})
	}
	return table
}

func Print(w io.Writer, p *Profile) {
	t := sizeLines(p)
	fmt.Fprintln(w)
	for _, l := range t.head {
		fmt.Fprintln(w, l)
	}
	for _, table := range t.tables {
		fmt.Fprintln(w)
		show.Aligned(w, table)
	}
	fmt.Fprintln(w)
	for _, l := range t.tail {
		fmt.Fprintln(w, "- "+l)
	}
}

func Markdown(p *Profile) []byte {
	var b bytes.Buffer
	t := sizeLines(p)
	b.WriteString("# lmigo load test: size\n\n")
	for _, l := range t.head {
		b.WriteString(l + "\n\n")
	}
	for _, table := range t.tables {
		show.MarkdownTable(&b, table)
	}
	for _, l := range t.tail {
		b.WriteString("- " + l + "\n")
	}
	if p.SAM != "" {
		fmt.Fprintf(&b, "\n```\nsam deploy --guided --template-file deploy/template.yaml --parameter-overrides %s\n```\n", p.SAM)
	}
	return b.Bytes()
}

// heldAfter says which check held, and which did not before it: the
// last of checks is the one that held.
func heldAfter(checks []Check) string {
	ordinal := []string{"first", "second", "third"}
	last := len(checks) - 1
	if last < 1 || last >= len(ordinal) {
		return fmt.Sprintf("it held its check here at N=%d", checks[last].N)
	}
	s := fmt.Sprintf("it held its %s check here at N=%d, after ", ordinal[last], checks[last].N)
	for i, c := range checks[:last] {
		if i > 0 {
			s += " and "
		}
		s += fmt.Sprintf("the %s, at N=%d,", ordinal[i], c.N)
	}
	return s + " did not hold"
}

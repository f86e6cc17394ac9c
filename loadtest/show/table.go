package show

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// alignedLeft is how many columns Aligned and MarkdownTable put to the
// left: a row's names; the others, numbers, go to the right.
const alignedLeft = 2

// Aligned writes rows as columns, aligned (alignedLeft).
func Aligned(w io.Writer, rows [][]string) {
	var width []int
	for _, row := range rows {
		for i, c := range row {
			if i >= len(width) {
				width = append(width, 0)
			}
			width[i] = max(width[i], utf8.RuneCountInString(c))
		}
	}
	for _, row := range rows {
		var b strings.Builder
		for i, c := range row {
			pad := strings.Repeat(" ", width[i]-utf8.RuneCountInString(c))
			if i > 0 {
				b.WriteString("  ")
			}
			if i < alignedLeft {
				b.WriteString(c + pad)
			} else {
				b.WriteString(pad + c)
			}
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
}

// MarkdownTable writes rows as a Markdown table, the first row its head,
// the first two columns to the left, the others to the right, and a
// blank line.
func MarkdownTable(b *bytes.Buffer, rows [][]string) {
	for i, row := range rows {
		b.WriteString("| " + strings.Join(row, " | ") + " |\n")
		if i == 0 {
			b.WriteString("|---|---|" + strings.Repeat("---:|", len(row)-2) + "\n")
		}
	}
	b.WriteString("\n")
}

package show

import (
	"bytes"
	"strings"
	"testing"
)

func TestAligned(t *testing.T) {
	var b strings.Builder
	Aligned(&b, [][]string{{"scenario", "runtime", "p99"}, {"tiny N=1", "lmigo", "7.00ms"}, {"", "aws-lambda-go", "90µs"}})
	want := "scenario  runtime           p99\n" +
		"tiny N=1  lmigo          7.00ms\n" +
		"          aws-lambda-go    90µs\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}

func TestMarkdownTable(t *testing.T) {
	var b bytes.Buffer
	MarkdownTable(&b, [][]string{{"scenario", "runtime", "p99", "CPU"}, {"tiny N=1", "lmigo", "7.00ms", "12µs"}})
	want := "| scenario | runtime | p99 | CPU |\n|---|---|---:|---:|\n| tiny N=1 | lmigo | 7.00ms | 12µs |\n\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}

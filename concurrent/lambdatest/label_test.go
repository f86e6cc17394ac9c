package lambdatest_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/lmigo/lmigo/concurrent/lambdatest"
)

// TestLabels: each event is named on one line, compact, by where it parts
// from the others, cut on a rune's boundary.
func TestLabels(t *testing.T) {
	long := strings.Repeat(`"k":"v",`, 10)
	tests := []struct {
		name   string
		events []string
		want   []string
	}{
		{"short, shown whole", []string{"{\n  \"id\": 1\n}", `{"id":2}`}, []string{`({"id":1})`, `({"id":2})`}},
		{"parting early: the head", []string{`{"id":1,` + long + `"z":1}`, `{"id":2,` + long + `"z":1}`},
			[]string{`({"id":1,"k":"v","k":"v","k":"v","k":"v","k":"v","k":"v","k":...)`, `({"id":2,"k":"v","k":"v","k":"v","k":"v","k":"v","k":"v","k":...)`}},
		{"parting late: a window from the member", []string{`{` + long + `"id":1,"z":1}`, `{` + long + `"id":2,"z":1}`},
			[]string{`(..."id":1,"z":1})`, `(..."id":2,"z":1})`}},
		{"parting twice: both places", []string{
			`{` + long + `"id":1,` + long + `"n":"a"}`, `{` + long + `"id":1,` + long + `"n":"b"}`, `{` + long + `"id":2,` + long + `"n":"a"}`},
			[]string{`(..."id":1,"k":"v","k":"v","k":"v","k":"v"," ... "n":"a"})`, `(..."id":1,"k":"v","k":"v","k":"v","k":"v"," ... "n":"b"})`, `(..."id":2,"k":"v","k":"v","k":"v","k":"v","...)`}},
		{"the same event twice: the head", []string{`{` + long + `}`, `{` + long + `}`},
			[]string{`({"k":"v","k":"v","k":"v","k":"v","k":"v","k":"v","k":"v","k"...)`, `({"k":"v","k":"v","k":"v","k":"v","k":"v","k":"v","k":"v","k"...)`}},
		{"not JSON: white space made one space", []string{"order\n\t1 of a batch of orders sent by a client that wrote them out by hand"},
			[]string{`(order 1 of a batch of orders sent by a client that wrote the...)`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			evs := make([][]byte, len(tt.events))
			for i, e := range tt.events {
				evs[i] = []byte(e)
			}
			got := lambdatest.Labels(evs)
			for i := range got {
				if got[i] != tt.want[i] {
					t.Errorf("event %d named\n  %s\nwant\n  %s", i, got[i], tt.want[i])
				}
			}
		})
	}
	t.Run("cut on a rune's boundary", func(t *testing.T) {
		e := []byte(`"` + strings.Repeat("é", 40) + `"`)
		for _, l := range lambdatest.Labels([][]byte{e, e[:len(e)-3]}) {
			if !utf8.ValidString(l) {
				t.Errorf("named %q, not UTF-8", l)
			}
		}
	})
}

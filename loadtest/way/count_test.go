package main

import (
	"reflect"
	"strings"
	"testing"
)

// walk builds one goroutine's events from steps: "+F" calls F, "-" returns
// from the running function. Names are lmigo's, without the module path.
func walk(g string, steps ...string) []event {
	var st []string
	var evs []event
	for _, s := range steps {
		if fn, ok := strings.CutPrefix(s, "+"); ok {
			evs = append(evs, event{g: g, call: true, fn: mod + fn, caller: top(st)})
			st = append(st, mod+fn)
			continue
		}
		fn := top(st)
		st = st[:len(st)-1]
		evs = append(evs, event{g: g, fn: fn, caller: top(st)})
	}
	return evs
}

// fns is the way's steps back in walk's notation.
func fns(way []event) string {
	var s []string
	for _, e := range way {
		if e.call {
			s = append(s, "+"+short(e.fn))
		} else {
			s = append(s, "-")
		}
	}
	return strings.Join(s, " ")
}

func TestRound(t *testing.T) {
	tests := []struct {
		name, tidy string
		rounds     int
		want       string
		err        bool
	}{
		{name: "slot tidy", tidy: "concurrent.(*slot).tidy", rounds: 6, want: "+concurrent.(*slot).tidy - +rapi.Next -"},
		{name: "runtime tidy, old trees", tidy: "concurrent.(*Runtime).tidy", rounds: 6, want: "+concurrent.(*Runtime).tidy - +rapi.Next -"},
		{name: "too few rounds", tidy: "concurrent.(*slot).tidy", rounds: 5, err: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			events := walk("1", "+concurrent.New", "-")
			events = append(events, walk("9", "+concurrent.runSlot")...)
			for range tt.rounds {
				events = append(events, walk("9", "+"+tt.tidy, "-", "+rapi.Next", "-")...)
				// Another goroutine between the slot's events is left out.
				events = append(events, walk("3", "+rapi.other", "-")...)
			}
			way, err := round(events, 4)
			if tt.err {
				if err == nil {
					t.Fatalf("round: no error, way %s", fns(way))
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := fns(way); got != tt.want {
				t.Errorf("round = %s, want %s", got, tt.want)
			}
		})
	}
}

func TestFold(t *testing.T) {
	tests := []struct {
		name string
		way  []string
		want string
	}{
		{
			name: "repeats from one caller read once",
			way:  []string{"+a.F", "+a.G", "+b.H", "-", "-", "+a.G", "+b.H", "-", "-", "+a.K", "-", "+a.G", "-", "-"},
			want: "+a.F +a.G +b.H - - +a.K - +a.G - -",
		},
		{
			name: "a return between breaks the row",
			way:  []string{"+a.F", "+a.G", "-", "-", "+a.G", "-"},
			want: "+a.F +a.G - - +a.G -",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := fns(fold(walk("1", tt.way...))); got != tt.want {
				t.Errorf("fold = %s, want %s", got, tt.want)
			}
		})
	}
}

// files of the hand-made ways; concurrent.B has none.
var handFiles = map[string]string{
	mod + "concurrent.A": "concurrent/c.go",
	mod + "concurrent.C": "concurrent/c.go",
	mod + "rapi.X":       "rapi/r.go",
	mod + "rapi.Y":       "rapi/s.go",
	mod + "rapi.Z":       "rapi/r.go",
	mod + "internal/x.X": "internal/x.go",
}

func TestTallyAll(t *testing.T) {
	// The first call switches from no file: A has no caller here. Then
	// every change of file is a switch and all but the way into s.go and
	// x.go are returns; rapi.X calling concurrent.C is a call back up.
	way := walk("1", "+concurrent.A", "+rapi.X", "+rapi.Y", "-", "+concurrent.C", "-", "-", "+rapi.Z", "+internal/x.X", "-", "-", "-")
	got := tallyAll(way, handFiles)
	want := tally{
		calls:    6,
		switches: 11,
		returns:  7,
		intoRapi: 4,
		upward:   []string{"rapi.X -> concurrent.C"},
		files:    []string{"concurrent/c.go", "rapi/r.go", "rapi/s.go", "internal/x.go"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("tallyAll:\n got %+v\nwant %+v", got, want)
	}
}

func TestTallyFirst(t *testing.T) {
	// Each function once, a defer wrapper never: A X Y C Z x.X B.
	way := walk("1", "+concurrent.A", "+rapi.X", "+rapi.Y", "-", "+concurrent.A.deferwrap1", "-",
		"+concurrent.C", "-", "-", "+rapi.X", "-", "+rapi.Z", "+internal/x.X", "-", "-", "+concurrent.B", "-", "-")
	got := tallyFirst(way, handFiles)
	want := tally{
		calls:    7,
		switches: 6,
		returns:  2,
		intoRapi: 1,
		lines: []string{
			"    concurrent/c.go concurrent.A",
			"->  rapi/r.go rapi.X",
			"->  rapi/s.go rapi.Y",
			"<<  concurrent/c.go concurrent.C",
			"<<  rapi/r.go rapi.Z",
			"->  internal/x.go internal/x.X",
			"->  ?concurrent.B concurrent.B",
		},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("tallyFirst:\n got %+v\nwant %+v", got, want)
	}
}

package main

import (
	"reflect"
	"strings"
	"testing"
)

func TestFuncName(t *testing.T) {
	tests := []struct {
		line, want string
	}{
		{"p.F(1, 2)", "p.F"},
		{"p.init()", "p.init"},
		{`p.(*T).M(("*p.T")(0xc0))`, "p.(*T).M"},
		{"p.(*T).m.func1()", "p.(*T).m.func1"},
		{"p.(*W[go.shape.func() error]).Invoke(x)", "p.(*W[go.shape.func() error]).Invoke"},
		{"p.F[go.shape.func(a, b) error](x)", "p.F[go.shape.func(a, b) error]"},
		{"p.F => (nil)", "p.F"},
		{"p.F[go.shape.func(a, b) error] => (nil,false)", "p.F[go.shape.func(a, b) error]"},
		{"p.(*T).M => ()", "p.(*T).M"},
	}
	for _, tt := range tests {
		if got := funcName(tt.line); got != tt.want {
			t.Errorf("funcName(%q) = %q, want %q", tt.line, got, tt.want)
		}
	}
}

func TestBase(t *testing.T) {
	tests := []struct {
		name, want string
	}{
		{"p.F", "p.F"},
		{"p.F[go.shape.func(a, []uint8) error]", "p.F"},
		{"p.(*W[*q.slot]).Invoke", "p.(*W).Invoke"},
	}
	for _, tt := range tests {
		if got := base(tt.name); got != tt.want {
			t.Errorf("base(%q) = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestParseTrace(t *testing.T) {
	trace := `> goroutine(1): p.main()
2026-12-06T08:05:52Z	INFO	runtime starting	{"slots": 1}
> goroutine(7): p.(*S).run(("*p.S")(0xc0))
> goroutine(1): p.F[go.shape.func(a, b) error](x)
>> goroutine(1): p.F[go.shape.func(a, b) error] => (nil,false)
> goroutine(7): q.Read(1)
> goroutine(7): q.fill()
>> goroutine(7): q.Read => (3)
>> goroutine(7): p.(*S).run => ()
`
	got, err := parseTrace(strings.NewReader(trace))
	if err != nil {
		t.Fatal(err)
	}
	want := []event{
		{g: "1", call: true, fn: "p.main"},
		{g: "7", call: true, fn: "p.(*S).run"},
		{g: "1", call: true, fn: "p.F", caller: "p.main"},
		{g: "1", fn: "p.F", caller: "p.main"},
		{g: "7", call: true, fn: "q.Read", caller: "p.(*S).run"},
		{g: "7", call: true, fn: "q.fill", caller: "q.Read"},
		// fill's return was not traced: Read's unwinds past it.
		{g: "7", fn: "q.Read", caller: "p.(*S).run"},
		{g: "7", fn: "p.(*S).run"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("parseTrace:\n got %+v\nwant %+v", got, want)
	}
}

func TestSymbolsFiles(t *testing.T) {
	nm := `  9f9220 T github.com/lmigo/lmigo/pool.(*Buffers).Get
  a31320 T github.com/lmigo/lmigo/pool.(*Workers[*github.com/lmigo/lmigo/concurrent.slot]).Invoke
  a31400 T github.com/lmigo/lmigo/pool.(*Workers[go.shape.func() error]).Invoke
  a40a40 T main.roundMark
  4a0000 T fmt.Println
  c00000 D github.com/lmigo/lmigo/pool.size
`
	names, addrs := symbols(nm)
	wantNames := []string{mod + "pool.(*Buffers).Get", mod + "pool.(*Workers).Invoke", "main.roundMark"}
	if !reflect.DeepEqual(names, wantNames) || !reflect.DeepEqual(addrs, []string{"9f9220", "a31400", "a40a40"}) {
		t.Fatalf("symbols = %q %q, want %q and one address each", names, addrs, wantNames)
	}
	a2l := mod + `pool.(*Buffers).Get
/tmp/w/tree/pool/buffers.go:40
` + mod + `pool.(*Workers).Invoke
/tmp/w/tree/pool/workers.go:88
main.roundMark
/elsewhere/main.go:30
`
	got, err := files(names, a2l, "/tmp/w/tree")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		mod + "pool.(*Buffers).Get":    "pool/buffers.go",
		mod + "pool.(*Workers).Invoke": "pool/workers.go",
		"main.roundMark":               "main.go",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("files = %v, want %v", got, want)
	}
	if _, err := files(names, "x\ny\n", "/tmp/w/tree"); err == nil {
		t.Error("files: no error for too few lines")
	}
}

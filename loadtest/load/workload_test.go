package load

import (
	"testing"
	"time"
)

func TestWorkloads(t *testing.T) {
	for _, tt := range []struct {
		in      string
		items   int
		panics  bool
		waves   int // items of a wave
		floor   bool
		wantErr bool
	}{
		{in: "tiny", items: 1, floor: true},
		{in: "size:1KiB", items: 1, floor: true},
		{in: "size:6MiB", items: 1, floor: true},
		{in: "size:300", items: 1, floor: true},
		{in: "wait:20ms", items: 1, floor: true},
		{in: "wait:1s", items: 1, floor: true},
		{in: "mix", items: 8},
		{in: "mix-panic", items: 9, panics: true},
		{in: "grow", waves: 6},
		{in: "stack:32KiB", waves: 1},
		{in: "stack:16KiB", waves: 1},
		{in: "stack:48KiB", wantErr: true},
		{in: "stack:8KiB", wantErr: true},
		{in: "wait:0ms", wantErr: true},
		{in: "wait:1500us", wantErr: true},
		{in: "wait:soon", wantErr: true},
		{in: "size:7MiB", wantErr: true},
		{in: "size:1", wantErr: true},
		{in: "size:lots", wantErr: true},
		{in: "huge", wantErr: true},
		{in: "event:sqs", items: 1},
		{in: "event:github", items: 1},
		{in: "event:kinesis", wantErr: true},
	} {
		w, err := ParseWorkload(tt.in)
		if (err != nil) != tt.wantErr {
			t.Errorf("parseWorkload(%q) err = %v", tt.in, err)
			continue
		}
		waves := 0
		if w.Waved() {
			waves = len(w.Waves(2))
		}
		if err == nil && (len(w.Items) != tt.items || w.Panics != tt.panics || waves != tt.waves || w.Floor != tt.floor) {
			t.Errorf("parseWorkload(%q) = %d items, panics %v, %d a wave, floor %v", tt.in, len(w.Items), w.Panics, waves, w.Floor)
		}
	}
	it := sizeItem(1 << 20)
	if it.Name != "1MiB" || !it.Check(Outcome{Body: make([]byte, 1<<20)}) || it.Check(Outcome{Body: make([]byte, 10)}) {
		t.Errorf("sizeItem(1MiB) name %q or check wrong", it.Name)
	}
	if !tinyItem().Check(Outcome{Body: []byte(`{"ok":true,"requestId":"x"}`)}) || tinyItem().Check(Outcome{FunctionError: "Error"}) {
		t.Error("tiny check wrong")
	}
	ev, _ := ParseWorkload("event:s3")
	if c := ev.Items[0].Check; !c(Outcome{Body: []byte(`{"objects":1}`)}) || c(Outcome{Body: []byte(`{"obj`)}) ||
		c(Outcome{FunctionError: "Error", Body: []byte(`{}`)}) {
		t.Error("event check wrong")
	}
	for _, tt := range []struct{ got, want string }{
		{string(sizePayload(65536, 8)), `{"size":65536,"gather":8}`},
		{string(waitItem(20 * time.Millisecond).Payload), `{"sleep_ms":20}`},
		{string(stackItem(32<<10, 0).Payload), `{"stack_kib":32}`},
		{string(stackItem(32<<10, 1600).Payload), `{"stack_kib":32,"gather":1600}`},
	} {
		if tt.got != tt.want {
			t.Errorf("payload %s, want %s", tt.got, tt.want)
		}
	}
}

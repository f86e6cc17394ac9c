package metrics

import (
	"context"

	"github.com/lmigo/lmigo/concurrent/internal/emf"
)

// Unit is a CloudWatch metric unit.
type Unit string

// CloudWatch's units, all of them.
const (
	Seconds            Unit = "Seconds"
	Microseconds       Unit = "Microseconds"
	Milliseconds       Unit = "Milliseconds"
	Bytes              Unit = "Bytes"
	Kilobytes          Unit = "Kilobytes"
	Megabytes          Unit = "Megabytes"
	Gigabytes          Unit = "Gigabytes"
	Terabytes          Unit = "Terabytes"
	Bits               Unit = "Bits"
	Kilobits           Unit = "Kilobits"
	Megabits           Unit = "Megabits"
	Gigabits           Unit = "Gigabits"
	Terabits           Unit = "Terabits"
	Percent            Unit = "Percent"
	Count              Unit = "Count"
	BytesPerSecond     Unit = "Bytes/Second"
	KilobytesPerSecond Unit = "Kilobytes/Second"
	MegabytesPerSecond Unit = "Megabytes/Second"
	GigabytesPerSecond Unit = "Gigabytes/Second"
	TerabytesPerSecond Unit = "Terabytes/Second"
	BitsPerSecond      Unit = "Bits/Second"
	KilobitsPerSecond  Unit = "Kilobits/Second"
	MegabitsPerSecond  Unit = "Megabits/Second"
	GigabitsPerSecond  Unit = "Gigabits/Second"
	TerabitsPerSecond  Unit = "Terabits/Second"
	CountPerSecond     Unit = "Count/Second"
	None               Unit = "None"
)

func set(ctx context.Context) (*emf.Set, error) {
	if s, ok := ctx.Value(emf.Key{}).(*emf.Set); ok {
		return s, nil
	}
	return nil, ErrNoInvocation
}

// Add records value for the metric name in unit, at standard (60 s)
// resolution, in the invocation ctx belongs to. A name added again in the
// same invocation adds a value to it (an array in the document), in the
// same unit and resolution.
func Add(ctx context.Context, name string, unit Unit, value float64) error {
	s, err := set(ctx)
	if err != nil {
		return err
	}
	return s.Add(name, string(unit), false, value)
}

// AddHighResolution records value as Add does, at high resolution:
// CloudWatch stores it by the second (StorageResolution 1).
func AddHighResolution(ctx context.Context, name string, unit Unit, value float64) error {
	s, err := set(ctx)
	if err != nil {
		return err
	}
	return s.Add(name, string(unit), true, value)
}

// AddDimension adds the dimension key with value to every metric of the
// invocation ctx belongs to; a key added again takes the new value. Keys
// are 1..250 and values 1..1024 printable ASCII characters, as CloudWatch
// takes them; a set holds at most 30, the service dimension included.
func AddDimension(ctx context.Context, key, value string) error {
	s, err := set(ctx)
	if err != nil {
		return err
	}
	return s.AddDimension(key, value)
}

// AddMetadata adds key, with value encoded as JSON (encoding/json), to
// every document of the invocation ctx belongs to: searchable in the logs
// (CloudWatch Logs Insights), not a dimension. A key added again takes the
// new value.
func AddMetadata(ctx context.Context, key string, value any) error {
	s, err := set(ctx)
	if err != nil {
		return err
	}
	return s.AddMetadata(key, value)
}

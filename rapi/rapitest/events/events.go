// Package events holds realistic Lambda events and typed handlers for
// them, the workloads on which the JSON codecs of typed handlers are
// measured (docs/codecs.md): an API Gateway HTTP API (v2) request,
// an SQS batch of 10 messages, an S3 notification and a GitHub push
// webhook of tens of KB.
//
// The handlers use aws-lambda-go's events types (a custom struct for the
// webhook), do a little real work and return a typed result. They depend on
// nothing of lmigo, so that lmigo and aws-lambda-go serve the same code.
// The payloads are in testdata: the API Gateway and S3 events written by
// hand, the SQS batch and the webhook generated (gen.go, deterministic).
package events

import (
	"embed"
	"fmt"
	"os"
	"sort"
)

//go:embed testdata/*.json
var testdata embed.FS

// Event is one workload: its payload and the handler that serves it.
type Event struct {
	Name    string // "apigw", "sqs", "s3", "github"
	Payload []byte
	// Handler is a func(context.Context, TIn) (TOut, error).
	Handler any
}

var files = map[string]string{
	"apigw":  "testdata/apigw-v2.json",
	"sqs":    "testdata/sqs-10.json",
	"s3":     "testdata/s3.json",
	"github": "testdata/github-push.json",
}

var handlers = map[string]any{
	"apigw":  HTTPAPI,
	"sqs":    SQS,
	"s3":     S3,
	"github": GitHubPush,
}

// Names lists the events, sorted.
func Names() []string {
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// handler returns the handler of the named event.
func handler(name string) (any, error) {
	h, ok := handlers[name]
	if !ok {
		return nil, fmt.Errorf("events: unknown event %q (want one of %v)", name, Names())
	}
	return h, nil
}

// EnvVar names the event a bootstrap serves (the load test sets it).
const EnvVar = "LOADTEST_EVENT"

// HandlerFromEnv returns the handler of the event named by $LOADTEST_EVENT,
// for the bootstraps' main, which need no payload: when there is none it
// reports why on stderr and exits with status 1.
func HandlerFromEnv() any {
	h, err := handler(os.Getenv(EnvVar))
	if err != nil {
		fmt.Fprintln(os.Stderr, EnvVar+":", err)
		os.Exit(1)
	}
	return h
}

// Get returns the event of the given name.
func Get(name string) (Event, error) {
	h, err := handler(name)
	if err != nil {
		return Event{}, err
	}
	b, err := testdata.ReadFile(files[name])
	if err != nil {
		return Event{}, err
	}
	return Event{Name: name, Payload: b, Handler: h}, nil
}

// All returns every event, in the order of Names.
func All() []Event {
	var all []Event
	for _, n := range Names() {
		e, err := Get(n)
		if err != nil {
			panic(err) // embedded: cannot happen in a built binary
		}
		all = append(all, e)
	}
	return all
}

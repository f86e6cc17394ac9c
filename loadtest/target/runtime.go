package target

import (
	"strings"

	"github.com/lmigo/lmigo/loadtest/load"
)

// Runtimes the load test knows by name.
const (
	Lmigo       = "lmigo"         // the typed handler, cmd/bootstrap
	LmigoRaw    = "lmigo-raw"     // the raw handler, loadtest/rawbootstrap
	AWSLambdaGo = "aws-lambda-go" // the reference, loadtest/refbootstrap
	Floor       = "floor"         // not a runtime: the least work, loadtest/floorbootstrap
	// A lambda.Handler of the user's own (demo.Invoker), under each.
	LmigoHandler       = "lmigo-handler"         // loadtest/handlerbootstrap
	AWSLambdaGoHandler = "aws-lambda-go-handler" // loadtest/refhandlerbootstrap
	// The user's own function (run -bootstrap without -runtime, size).
	Function = "function"
)

// Echoes reports whether the runtime named so Echoes each invocation's
// Lambda-Runtime-Invocation-Id on its answers: lmigo's runtimes and the
// floor do, aws-lambda-go does not.
func Echoes(runtime string) bool { return strings.HasPrefix(runtime, Lmigo) || runtime == Floor }

// Runtime is one runtime under test.
type Runtime struct {
	Name     string `json:"name"`
	Binary   string `json:"binary,omitempty"`   // fake, rie
	Function string `json:"function,omitempty"` // lambda
	// SurvivesPanic is false for aws-lambda-go, which exits after a panic;
	// workloads that panic are refused for it.
	SurvivesPanic bool `json:"survivesPanic"`
}

// Serves says whether rt answers workload w: the floor Serves tiny,
// size:S and wait:D only, and exits on anything else.
func (rt Runtime) Serves(w load.Workload) bool { return rt.Name != Floor || w.Floor }

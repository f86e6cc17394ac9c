package concurrent

import (
	"context"
	"log/slog"
	"sync"

	"github.com/aws/aws-lambda-go/lambdacontext"
	"go.uber.org/zap"
)

// traceIDKey is the string key aws-lambda-go stores the trace ID under;
// tracing libraries written for it read the same key.
const traceIDKey = "x-amzn-trace-id"

type invocationKeyType struct{}

var invocationKey invocationKeyType

// invocationContext carries one invocation's data. One value answers
// several keys so that a context costs one allocation instead of a chain.
type invocationContext struct {
	context.Context
	requestID string
	traceID   string
	tenantID  string

	// base is the runtime's logger; logger adds this invocation's IDs to
	// it, built on first use so that an invocation that logs nothing pays
	// nothing. slogger is the same for log/slog.
	base       *zap.Logger
	loggerOnce sync.Once
	logger     *zap.Logger
	slogOnce   sync.Once
	slogger    *slog.Logger
}

func (c *invocationContext) Value(key any) any {
	switch key {
	case invocationKey:
		return c
	case traceIDKey:
		return c.traceID
	}
	return c.Context.Value(key)
}

func newInvocationContext(parent context.Context, lc *lambdacontext.LambdaContext, traceID string, base *zap.Logger) *invocationContext {
	return &invocationContext{
		Context:   lambdacontext.NewContext(parent, lc),
		requestID: lc.AwsRequestID,
		traceID:   traceID,
		tenantID:  lc.TenantID,
		base:      base,
	}
}

func fromContext(ctx context.Context) *invocationContext {
	c, _ := ctx.Value(invocationKey).(*invocationContext)
	return c
}

// RequestID returns the request ID of the invocation ctx belongs to, or ""
// outside an invocation.
func RequestID(ctx context.Context) string {
	if c := fromContext(ctx); c != nil {
		return c.requestID
	}
	return ""
}

// TraceID returns the X-Ray trace header of the invocation ctx belongs to
// (the Lambda-Runtime-Trace-Id value, "Root=1-...;Parent=...;Sampled=1"),
// or "". Pass it on yourself, as the X-Amzn-Trace-Id header of outgoing
// requests: on Lambda Managed Instances _X_AMZN_TRACE_ID is not set, since
// one process serves many invocations at once. It is also stored under the
// context key "x-amzn-trace-id", where tracing libraries written for
// aws-lambda-go look for it.
func TraceID(ctx context.Context) string {
	if c := fromContext(ctx); c != nil {
		return c.traceID
	}
	return ""
}

// TenantID returns the tenant ID of the invocation ctx belongs to, or "".
func TenantID(ctx context.Context) string {
	if c := fromContext(ctx); c != nil {
		return c.tenantID
	}
	return ""
}

// Logger returns a zap logger whose lines carry the IDs of the invocation
// ctx belongs to: requestId, traceId (the Root of its X-Ray trace header)
// and tenantId, where present. It is built on the first call of each
// invocation and cached: later calls cost a context lookup. Outside an
// invocation it returns the process logger, whose lines carry no IDs.
//
// The logger writes Lambda's format (JSON or TEXT, as
// AWS_LAMBDA_LOG_FORMAT says) to stderr at AWS_LAMBDA_LOG_LEVEL, each line
// in one write; see [LevelTrace] for TRACE. Its Fatal ends the process, and
// with it every invocation in flight: prefer Error.
func Logger(ctx context.Context) *zap.Logger {
	if c := fromContext(ctx); c != nil {
		return c.zapLogger()
	}
	return defaultLogger()
}

func (c *invocationContext) zapLogger() *zap.Logger {
	c.loggerOnce.Do(func() {
		c.logger = c.base.With(appendInvocationFields(make([]zap.Field, 0, 3), c.requestID, c.traceID, c.tenantID)...)
	})
	return c.logger
}

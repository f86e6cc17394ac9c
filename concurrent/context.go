package concurrent

import (
	"context"
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

	base       *zap.Logger
	loggerOnce sync.Once
	logger     *zap.Logger
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
// (the Lambda-Runtime-Trace-Id value), or "". Pass it on to SDK clients
// yourself: on Lambda Managed Instances _X_AMZN_TRACE_ID is not set.
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

// Logger returns a logger whose lines carry the requestId (and tenantId,
// where present) of the invocation ctx belongs to. Outside an invocation it
// returns a no-op logger. The per-invocation logger is built on first use.
func Logger(ctx context.Context) *zap.Logger {
	c := fromContext(ctx)
	if c == nil {
		return zap.NewNop()
	}
	c.loggerOnce.Do(func() { c.logger = c.base.With(invocationFields(c.requestID, c.tenantID)...) })
	return c.logger
}

func invocationFields(requestID, tenantID string) []zap.Field {
	if tenantID == "" {
		return []zap.Field{zap.String("requestId", requestID)}
	}
	return []zap.Field{zap.String("requestId", requestID), zap.String("tenantId", tenantID)}
}

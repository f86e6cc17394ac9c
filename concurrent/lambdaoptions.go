package concurrent

import (
	"context"
	"fmt"
	"reflect"
	"unsafe"

	"github.com/aws/aws-lambda-go/lambda"
)

// StartWithOptions is [Start] with aws-lambda-go's options, the drop-in
// for lambda.StartWithOptions: each lambda.Option sets what the option of
// the same name sets here (lambda.WithEnableSIGTERM: [WithSIGTERM]), in
// order. An option this runtime cannot read (nil, or from an
// aws-lambda-go version whose options changed) fails init.
func StartWithOptions(handler any, options ...lambda.Option) {
	Start(handler, WithLambdaOptions(options...))
}

// WithLambdaOptions is aws-lambda-go's options as one Option, honoured as
// [StartWithOptions] honours them, so that a main and its test pass the
// same values:
//
//	var options = []lambda.Option{lambda.WithDisallowUnknownFields(true)}
//	concurrent.StartWithOptions(handler, options...) // main
//	lambdatest.Start(t, handler, lambdatest.WithRuntime(concurrent.WithLambdaOptions(options...))) // its test
//
// An option this runtime cannot read makes New fail with ErrConfig.
func WithLambdaOptions(opts ...lambda.Option) Option {
	opt, err := lambdaOptions(opts)
	if err != nil {
		// An Option cannot fail: New reports what it kept.
		return func(o *options) { o.errs = append(o.errs, err) }
	}
	return opt
}

// StartHandlerFunc is [StartWithOptions] for a handler whose signature the
// compiler checks: the drop-in for lambda.StartHandlerFunc.
func StartHandlerFunc[TIn, TOut any, H lambda.HandlerFunc[TIn, TOut]](handler H, options ...lambda.Option) {
	StartWithOptions(handler, options...)
}

// lambdaOptions reads what los set, applied in order, and returns the
// Option that sets the same.
//
// A lambda.Option is a func(*handlerOptions) over an unexported type.
// Here reflect makes a value of that type, with the defaults
// lambda.NewHandlerWithOptions gives it. Each option is applied to it, and
// the fields it set are read back (TestLambdaOptionShape pins them).
// Nothing of aws-lambda-go runs but the options: NewHandlerWithOptions
// would register its own SIGTERM extension and signal handler.
func lambdaOptions(los []lambda.Option) (Option, error) {
	st := reflect.TypeFor[lambda.Option]().In(0).Elem()
	if err := checkLambdaOptionShape(st); err != nil {
		return nil, err
	}
	p := reflect.New(st)
	field := func(name string) reflect.Value {
		f := p.Elem().FieldByName(name)
		// Unexported: reached through its address, as the shape check allows.
		return reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem()
	}
	field("baseContext").Set(reflect.ValueOf(context.Background()))
	field("contextValues").Set(reflect.ValueOf(map[any]any{}))
	arg := []reflect.Value{p}
	for i, lo := range los {
		if lo == nil {
			return nil, fmt.Errorf("%w: lambda.Option %d is nil", ErrConfig, i)
		}
		reflect.ValueOf(lo).Call(arg)
	}
	// Fields an option of v1.55.1 never sets, and those it does not have:
	// set, they would mean an option that this runtime does not know.
	for f := range st.Fields() {
		if _, known := lambdaOptionFields[f.Name]; (!known || f.Name == "handlerFunc" || f.Name == "jsonOutBufferPool") &&
			!p.Elem().FieldByIndex(f.Index).IsZero() {
			return nil, fmt.Errorf("%w: a lambda.Option sets %s, which this runtime does not read", ErrConfig, f.Name)
		}
	}

	ctx, _ := field("baseContext").Interface().(context.Context)
	values := field("contextValues").Interface().(map[any]any)
	h := handlerConfig{
		useNumber:             field("jsonRequestUseNumber").Bool(),
		disallowUnknownFields: field("jsonRequestDisallowUnknownFields").Bool(),
		escapeHTML:            field("jsonResponseEscapeHTML").Bool(),
		indentPrefix:          field("jsonResponseIndentPrefix").String(),
		indent:                field("jsonResponseIndentValue").String(),
	}
	sigterm := field("enableSIGTERM").Bool()
	hooks := field("sigtermCallbacks").Interface().([]func())
	return func(o *options) {
		o.baseCtx = ctx
		for k, v := range values {
			o.values = append(o.values, ctxValue{k, v})
		}
		o.handler.useNumber, o.handler.disallowUnknownFields = h.useNumber, h.disallowUnknownFields
		o.handler.escapeHTML, o.handler.indentPrefix, o.handler.indent = h.escapeHTML, h.indentPrefix, h.indent
		if sigterm {
			WithSIGTERM(hooks...)(o)
		}
	}, nil
}

// lambdaOptionFields are the fields of aws-lambda-go v1.55.1's
// handlerOptions that lambdaOptions reads or checks, with their types.
var lambdaOptionFields = map[string]string{
	"handlerFunc":                      "lambda.handlerFunc",
	"baseContext":                      "context.Context",
	"contextValues":                    "map[interface {}]interface {}",
	"jsonRequestUseNumber":             "bool",
	"jsonRequestDisallowUnknownFields": "bool",
	"jsonResponseEscapeHTML":           "bool",
	"jsonResponseIndentPrefix":         "string",
	"jsonResponseIndentValue":          "string",
	"enableSIGTERM":                    "bool",
	"sigtermCallbacks":                 "[]func()",
	"jsonOutBufferPool":                "*sync.Pool",
}

// checkLambdaOptionShape reports whether st, what lambda.Option applies
// to, has every field lambdaOptions reads, with its type.
func checkLambdaOptionShape(st reflect.Type) error {
	if st.Kind() != reflect.Struct || st.PkgPath() != awsLambdaPkg || st.Name() != "handlerOptions" {
		return fmt.Errorf("%w: lambda.Option applies to %v, not the handlerOptions this runtime reads", ErrConfig, st)
	}
	for name, typ := range lambdaOptionFields {
		f, ok := st.FieldByName(name)
		if !ok || f.Type.String() != typ || len(f.Index) != 1 {
			return fmt.Errorf("%w: lambda.Option's handlerOptions has no field %s %s: an aws-lambda-go version this runtime cannot read",
				ErrConfig, name, typ)
		}
	}
	return nil
}

package concurrent_test

import (
	"context"
	"fmt"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/lmigo/lmigo/concurrent"
)

// A function started with aws-lambda-go's options moves with them as they
// are: only the Start call changes.
func ExampleStartWithOptions() {
	handle := func(ctx context.Context, o order) (receipt, error) {
		return receipt{OrderID: o.ID}, nil
	}
	if os.Getenv("AWS_LAMBDA_RUNTIME_API") != "" {
		// lambda.StartWithOptions(handle, ...)
		concurrent.StartWithOptions(handle,
			lambda.WithSetIndent("", "  "),
			lambda.WithEnableSIGTERM(func() { fmt.Println("flushing") }),
		) // never returns
	}
}

// The compiler checks the handler's signature, as for
// lambda.StartHandlerFunc.
func ExampleStartHandlerFunc() {
	handle := func(ctx context.Context, o order) (receipt, error) {
		return receipt{OrderID: o.ID}, nil
	}
	if os.Getenv("AWS_LAMBDA_RUNTIME_API") != "" {
		concurrent.StartHandlerFunc(handle, lambda.WithUseNumber(true)) // never returns
	}
}

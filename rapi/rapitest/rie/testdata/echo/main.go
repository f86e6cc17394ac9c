// Command echo is a test-only Lambda function built on aws-lambda-go. It
// answers each invocation with its payload, except:
//
//   - {"sleep_ms":n}      sleeps n milliseconds first (at most 10 s);
//   - {"fail":"msg"}      returns an error with message msg (a function error);
//   - {"env":["A","B"]}   answers {"A":"value",...} for the variables set;
//   - {"exit":n}          exits the process with status n.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
)

type control struct {
	SleepMS int      `json:"sleep_ms"`
	Fail    string   `json:"fail"`
	Env     []string `json:"env"`
	Exit    *int     `json:"exit"`
}

func handle(ctx context.Context, payload json.RawMessage) (json.RawMessage, error) {
	var c control
	_ = json.Unmarshal(payload, &c) // a payload that is not an object is echoed as is
	if c.SleepMS > 0 {
		d := min(time.Duration(c.SleepMS)*time.Millisecond, 10*time.Second)
		select {
		case <-time.After(d):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	switch {
	case c.Exit != nil:
		os.Exit(*c.Exit)
	case c.Fail != "":
		return nil, errors.New(c.Fail)
	case c.Env != nil:
		vars := make(map[string]string, len(c.Env))
		for _, k := range c.Env {
			if v, ok := os.LookupEnv(k); ok {
				vars[k] = v
			}
		}
		return json.Marshal(vars)
	}
	return payload, nil
}

func main() {
	lambda.Start(handle)
}

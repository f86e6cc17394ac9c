// Package rie runs the AWS Lambda Runtime Interface Emulator
// (aws-lambda-rie, version EmulatorModule) in its Lambda Managed Instances
// mode as a test peer for a bootstrap binary, and invokes it over loopback.
//
//	e := rie.StartT(t, rie.Options{Bootstrap: rie.BuildT(t, "./testdata/echo"), MaxConcurrency: 4})
//	r, err := e.Invoke(ctx, []byte(`{"a":1}`))
//	// r.OK(), r.FunctionError, r.Throttled, r.Body
//
// # Contract
//
// Start blocks until the runtime's init has finished (or failed, or ctx
// or Options.StartTimeout ended); on error nothing is left running. Invoke
// blocks until the emulator answers or ctx ends; it is safe for concurrent
// use and reports function errors and throttles in Result, not as errors.
// Stop blocks until the emulator and every process of its namespace are
// gone; it is idempotent. Logs returns a copy the caller owns. Writers in
// Options must stay usable until Stop returns. StartT and BuildT wrap
// Start and Build for tests; StartT skips when the machine cannot run the
// emulator and stops it in Cleanup. Neither has a time limit of its own:
// both run until shortly before the test's deadline (go test -timeout), so
// a loaded machine or a cold build cache makes a test slow, not failed.
//
// # How it runs
//
// The emulator runs the first of /var/runtime/bootstrap, /var/task/bootstrap
// and /opt/bootstrap, as uid 993 / gid 990, so it must run as root and the
// binary must sit at one of those paths. To leave the machine's /var alone
// and let tests run side by side, Start runs, as root,
//
//	unshare --mount --propagation private --pid --fork --kill-child --mount-proc \
//	    /bin/sh -c SCRIPT lmigo-rie WRAPPER aws-lambda-rie \
//	    --runtime-interface-emulator-address 127.0.0.1:P1 --runtime-api-address 127.0.0.1:P2
//
// with the bootstrap open on fd 3. SCRIPT mounts a tmpfs
// over /var (so an existing /var/runtime/bootstrap of the host cannot
// shadow ours), recreates /var/task, /var/runtime, /var/tmp and the
// /var/run and /var/lock links, copies the bootstrap to
// /var/task/bootstrap with mode 0755, writes WRAPPER (Options.Exec, for
// a bootstrap of another architecture run through qemu-user; usually
// empty) to /var/runtime/bootstrap, hides /opt/extensions, and execs the
// emulator, which becomes PID 1 of the new PID namespace. Everything is
// torn down by the kernel: when PID 1 exits every process of the namespace
// is killed, and the mounts vanish with the namespace. unshare runs in its
// own process group with a parent-death signal, and --kill-child kills the
// emulator when unshare dies, so even a test binary that is killed leaves
// nothing behind. (The parent-death signal follows the OS thread that
// started unshare; Go ends threads only when a goroutine that locked one
// exits, which tests do not do around Start.)
//
// The network namespace is shared: both addresses are free ports on
// 127.0.0.1 picked by Start (it retries with new ones if a port was taken
// meanwhile), and the host can reach the Runtime API too (RuntimeAPI).
//
// # Environment
//
// The emulator gets a clean environment: PATH, AWS_LAMBDA_MAX_CONCURRENCY
// (its presence turns LMI mode on), AWS_LAMBDA_FUNCTION_TIMEOUT when
// Options.Timeout is set, then Options.Env. The host's environment is not
// inherited. The emulator hands its own environment to the runtime after
// these rules:
//
//   - names starting with "_" are dropped (but _HANDLER, or
//     AWS_LAMBDA_FUNCTION_HANDLER, becomes the runtime's _HANDLER);
//   - AWS_LAMBDA_RUNTIME_API, AWS_LAMBDA_INITIALIZATION_TYPE
//     (lambda-managed-instances), LAMBDA_TASK_ROOT (/var/task),
//     LAMBDA_RUNTIME_DIR, AWS_LAMBDA_METADATA_API/_TOKEN and the
//     credentials are set by the emulator and cannot be overridden;
//   - AWS_LAMBDA_MAX_CONCURRENCY, AWS_LAMBDA_FUNCTION_MEMORY_SIZE (default
//     3008), AWS_LAMBDA_FUNCTION_NAME (test_function),
//     AWS_LAMBDA_FUNCTION_VERSION ($LATEST), AWS_REGION (us-east-1),
//     AWS_LAMBDA_LOG_GROUP_NAME and AWS_LAMBDA_LOG_STREAM_NAME are read by
//     the emulator and re-emitted; the two integers pass through Atoi, so
//     a non-integer becomes the default (1 for N, 3008 for memory) and the
//     runtime never sees the raw text;
//   - AWS_LAMBDA_LOG_FORMAT defaults to "json"; AWS_LAMBDA_LOG_LEVEL, LANG,
//     PATH, TZ, LD_LIBRARY_PATH, AWS_ACCOUNT_ID may be overridden;
//   - every other name (LMIGO_*, AWS_LAMBDA_FUNCTION_TIMEOUT, ...) passes
//     through unchanged.
//
// # Quirks of the emulator (version EmulatorModule)
//
//   - LMI mode is on when AWS_LAMBDA_MAX_CONCURRENCY is set at all; without
//     it the binary runs the classic emulator.
//   - The bootstrap named on the command line is ignored for the runtime it
//     starts: a zip-type function always searches the three paths, with
//     /var/task as working directory. Of the trailing arguments only the
//     last of two or more is used, as _HANDLER. With none, the emulator
//     exits at once ("could not find runtime entrypoint") unless one of
//     ./bootstrap and the three paths exists.
//   - --help is not a help flag: unknown flags are ignored and the server
//     starts. The invoke listener defaults to 0.0.0.0:8080, the Runtime API
//     to 127.0.0.1:9001; Start always passes both.
//   - Init runs as soon as the emulator starts, not on the first invoke.
//     The invoke port listens before init is done; an invoke arriving
//     meanwhile waits for init. When init fails (the runtime exits before
//     its first /next) the emulator exits with status 1 ("INIT failed");
//     Start then returns ErrInit, with the emulator's output up to its
//     exit (the runtime's lines about the failure included). Start detects the end of init with an
//     invoke whose X-Amz-Client-Context is not base64: the emulator waits
//     for init, then refuses it with 400 "ErrMalformedRequest" without
//     involving the runtime (it logs one WARN line about it).
//   - AWS_LAMBDA_FUNCTION_TIMEOUT is whole seconds (default 300) and is
//     the init timeout as well.
//   - Invoke endpoint: POST /2015-03-31/functions/function/invocations.
//     Request headers it reads: X-Amzn-RequestId (becomes the request ID;
//     a duplicate of one in flight gets 400 Client.DuplicatedInvokeId),
//     X-Amzn-Trace-Id, X-Amz-Client-Context (must be base64),
//     X-Amz-Cognito-Identity (JSON), Content-Type, Invoke-Response-Mode.
//     The request payload limit it advertises is 6 MiB + 100 B.
//   - Success: 200 with the runtime's body, its Content-Type, and
//     Lambda-Runtime-Function-Response-Mode: buffered.
//   - A streamed response (Lambda-Runtime-Function-Response-Mode:
//     streaming, chunked; any other mode is refused with 400 and the invoke
//     fails with Runtime.InvalidResponseModeHeader) is read whole, up to
//     6 MiB + 100 B, before the invoke is answered, with the mode echoed;
//     the 2 MiB/s rate after a 6 MiB burst is configured but not applied.
//     Error trailers (Lambda-Runtime-Function-Error-Type, -Body in base64;
//     the trailer section must fit in 4 KiB) turn it into a function error
//     as below, with the decoded body and without the bytes streamed before
//     it; the runtime's post gets 202.
//   - Errors are reported in an Error-Type header, never in
//     X-Amz-Function-Error. A function error is status 200, Content-Type
//     text/plain, with the runtime's error document as body; the type is
//     the runtime's Lambda-Runtime-Function-Error-Type only when it matches
//     ^(Runtime|Function)\.[A-Z][a-zA-Z]+$, else Runtime.Unknown (what
//     aws-lambda-go's "errorString" becomes).
//   - A throttle is status 400, Error-Type Runtime.Unavailable,
//     Content-Type application/json, body {"errorType":"Runtime.Unavailable"}.
//     It happens whenever no /next is pending when the invoke arrives; the
//     emulator never queues invokes.
//   - The emulator does not cap pending /next polls at N (its pool holds
//     10 000); holding more than N is a runtime bug it will not report.
//   - A timeout is status 200, Error-Type Sandbox.Timedout, body
//     {"errorType":"Sandbox.Timedout","errorMessage":"Task timed out after
//     1.00 seconds"}; if the runtime then posts late and exits on the 410
//     (aws-lambda-go does), the emulator shuts down.
//   - When the runtime exits, the invoke in flight gets 200 with
//     Error-Type Runtime.ExitError and the emulator exits (status 1); Done
//     is closed and Stop returns ErrExited.
//   - SIGTERM (and SIGINT) shut it down: in-flight invokes are aborted and,
//     with no extension registered, the runtime's process group gets
//     SIGKILL at once (no SIGTERM reaches the runtime); it exits 0 within a
//     few milliseconds. A SIGKILL to the emulator alone would leave the
//     runtime, which runs in its own process group, behind; here the PID
//     namespace prevents that.
//   - The emulator writes its own log lines (text slog), START/END/REPORT
//     lines and the runtime's stdout and stderr all to its stdout. Logs
//     keeps the last 4 MiB.
//   - It reads /opt/extensions for external extensions; Start hides the
//     host's copy.
package rie

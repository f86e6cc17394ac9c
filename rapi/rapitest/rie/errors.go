package rie

import "errors"

// Sentinel errors. Errors returned by this package wrap one of them.
var (
	// ErrUnsupported means the emulator cannot run on this machine: the
	// process is not root, or unshare(1) is missing or not permitted to
	// create the mount and PID namespaces. Tests turn it into a skip.
	ErrUnsupported = errors.New("rie: emulator unsupported here (needs root and unshare)")

	// ErrNotFound means the aws-lambda-rie binary was not found on PATH,
	// in GOBIN or in $(go env GOPATH)/bin.
	ErrNotFound = errors.New("rie: aws-lambda-rie not found; install it with: go install " + EmulatorModule)

	// ErrOptions marks Options that cannot work (no bootstrap, an emulator
	// under /var, a bootstrap that is not a regular file, an Exec command
	// that is not found).
	ErrOptions = errors.New("rie: invalid options")

	// ErrNotReady means the emulator exited or the deadline passed before
	// its invoke endpoint answered.
	ErrNotReady = errors.New("rie: emulator did not become ready")

	// ErrInit means the emulator came up but the runtime's init failed;
	// the error text carries the emulator's answer.
	ErrInit = errors.New("rie: runtime init failed")

	// ErrExited means the emulator process exited before Stop asked it to,
	// usually because the runtime exited.
	ErrExited = errors.New("rie: emulator exited by itself")

	// ErrKilled means the emulator did not exit within the grace period
	// after SIGTERM and its process group was killed.
	ErrKilled = errors.New("rie: emulator ignored SIGTERM and was killed")

	// ErrLeftover means a process of the emulator's namespace was still
	// alive after the emulator exited. Stop kills it before returning.
	ErrLeftover = errors.New("rie: process left running after stop")

	// ErrStopped is returned by Invoke after Stop.
	ErrStopped = errors.New("rie: emulator stopped")

	// errPortTaken: another process took a port between our pick and the
	// emulator's bind; Start retries with new ports.
	errPortTaken = errors.New("rie: port taken")

	// errMalformedStat: /proc/PID/stat did not parse.
	errMalformedStat = errors.New("rie: malformed /proc/PID/stat")
)

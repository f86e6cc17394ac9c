// Package measure observes a running process from outside, the way the load
// test measures a bootstrap without touching its code: CPU time and memory
// from /proc (Linux only), memory sampled over time, the number of garbage
// collections counted from the GODEBUG=gctrace=1 lines the process writes
// to stderr, the Go scheduler's share of its CPU from perf, and the
// machine around it.
//
// # Contract
//
// ParseStat, ParseProcStat and ParseStatus are pure functions over the
// text of /proc/PID/stat and /proc/PID/status; ReadCPU and ReadStatus
// read those files. GroupMembers lists a process group's live processes;
// ReadGroupCPU and ReadGroupStatus read a set of processes together. A
// Sampler reads memory in its own goroutine from NewSampler until Stop,
// which returns every sample taken and waits for the goroutine to end. A
// GCCounter is an io.Writer safe for concurrent use: hand it to
// exec.Cmd.Stderr and read Count at any time. StartPerf attaches perf
// record to a process and returns once it records; Disable ends what is
// recorded, Finish stops perf, reads the share and removes its files.
// MachineBusy, MemAvailableMiB and MemTotalMB read /proc/stat and
// /proc/meminfo.
package measure

package measure

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"
)

// ErrFormat marks /proc text that does not parse.
var ErrFormat = errors.New("measure: unexpected /proc format")

// clockTicks is USER_HZ, the unit of utime and stime in /proc/PID/stat. It
// is 100 on every Linux architecture Go supports (sysconf(_SC_CLK_TCK) is
// fixed at 100 by the kernel ABI).
const clockTicks = 100

// CPU is the processor time a process has used, all its threads together,
// those that have ended included.
type CPU struct {
	User, System time.Duration
}

// Total is User + System.
func (c CPU) Total() time.Duration { return c.User + c.System }

// ParseStat reads utime and stime from the text of /proc/PID/stat. The
// command name, field 2, is in parentheses and may hold spaces and
// parentheses itself, so fields are counted from its last ')'.
func ParseStat(b []byte) (CPU, error) {
	st, err := ParseProcStat(b)
	return st.CPU, err
}

// ProcStat is what the load test reads of /proc/PID/stat.
type ProcStat struct {
	State byte // R, S, D, Z, ...: Z is a process that has ended
	PGID  int  // its process group
	CPU   CPU  // its own
	// Children is the CPU of the children it has waited for: a shell's
	// commands that have ended.
	Children CPU
}

// ParseProcStat parses the text of /proc/PID/stat, as ParseStat does.
func ParseProcStat(b []byte) (ProcStat, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return ProcStat{}, fmt.Errorf("%w: stat without ')'", ErrFormat)
	}
	f := bytes.Fields(b[i+1:])
	// f[0] is field 3 (state), f[2] field 5 (pgrp); utime, stime,
	// cutime and cstime are fields 14 to 17.
	if len(f) < 15 || len(f[0]) != 1 {
		return ProcStat{}, fmt.Errorf("%w: stat has %d fields after the command", ErrFormat, len(f))
	}
	pgid, err := strconv.Atoi(string(f[2]))
	if err != nil {
		return ProcStat{}, fmt.Errorf("%w: pgrp %q", ErrFormat, f[2])
	}
	var t [4]time.Duration
	for k := range t {
		v, err := strconv.ParseUint(string(f[11+k]), 10, 64)
		if err != nil {
			return ProcStat{}, fmt.Errorf("%w: CPU time %q", ErrFormat, f[11+k])
		}
		t[k] = time.Duration(v) * (time.Second / clockTicks)
	}
	return ProcStat{State: f[0][0], PGID: pgid, CPU: CPU{User: t[0], System: t[1]}, Children: CPU{User: t[2], System: t[3]}}, nil
}

// ReadCPU reads the CPU time of process pid.
func ReadCPU(pid int) (CPU, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return CPU{}, err
	}
	return ParseStat(b)
}

// Status is what the load test reads from /proc/PID/status.
type Status struct {
	RSS  int64  // VmRSS in bytes: resident now
	Peak int64  // VmHWM in bytes: the highest RSS since exec
	CPUs string // Cpus_allowed_list, e.g. "0" when pinned to CPU 0
}

// ParseStatus reads VmRSS, VmHWM and Cpus_allowed_list from the text of
// /proc/PID/status. A process without memory (a zombie) has neither Vm
// line; that is an error.
func ParseStatus(b []byte) (Status, error) {
	var st Status
	var seen int
	for line := range bytes.Lines(b) {
		k, v, ok := bytes.Cut(line, []byte{':'})
		if !ok {
			continue
		}
		v = bytes.TrimSpace(v)
		switch string(k) {
		case "VmRSS", "VmHWM":
			n, err := parseKB(v)
			if err != nil {
				return Status{}, err
			}
			if string(k) == "VmRSS" {
				st.RSS = n
			} else {
				st.Peak = n
			}
			seen++
		case "Cpus_allowed_list":
			st.CPUs = string(v)
		}
	}
	if seen < 2 {
		return Status{}, fmt.Errorf("%w: status without VmRSS and VmHWM", ErrFormat)
	}
	return st, nil
}

// parseKB parses "1234 kB" into bytes.
func parseKB(v []byte) (int64, error) {
	num, unit, _ := bytes.Cut(v, []byte{' '})
	n, err := strconv.ParseInt(string(num), 10, 64)
	if err != nil || (len(unit) > 0 && string(bytes.TrimSpace(unit)) != "kB") {
		return 0, fmt.Errorf("%w: memory value %q", ErrFormat, v)
	}
	return n << 10, nil
}

// ReadStatus reads the memory and affinity of process pid.
func ReadStatus(pid int) (Status, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return Status{}, err
	}
	return ParseStatus(b)
}

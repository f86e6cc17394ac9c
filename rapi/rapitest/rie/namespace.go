package rie

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// setupExit is the exit status of setupScript when it could not prepare
// the private /var, so Start can tell that apart from an emulator failure.
const setupExit = 97

// setupScript runs as PID 1 of a fresh mount and PID namespace, as
// `sh -c setupScript lmigo-rie WRAPPER EMULATOR ARGS...` with the bootstrap
// open on fd 3. It
//
//   - hides the host's /var behind a tmpfs, so that no /var/runtime/bootstrap
//     of the host shadows ours and nothing is written to the real /var;
//   - lays out what the emulator and a runtime look at;
//   - copies the bootstrap from fd 3 (so its source may be anywhere, even
//     under the /var it just hid);
//   - when WRAPPER is not empty, writes it to /var/runtime/bootstrap,
//     which the emulator runs in preference to /var/task/bootstrap
//     (Options.Exec);
//   - hides the host's /opt/extensions, whose extensions the emulator
//     would otherwise start;
//   - replaces itself with the emulator, which so becomes PID 1: when it
//     exits the kernel kills every process left in the namespace, and the
//     tmpfs mounts go away with the namespace.
//
// The commands are chained with && because `set -e` does not apply inside
// a list that ends in ||.
var setupScript = `wrapper=$1 && shift &&
mount -t tmpfs -o mode=0755,size=512m lmigo-rie /var &&
mkdir -m 0755 /var/task /var/runtime &&
mkdir -m 1777 /var/tmp &&
ln -s /run /var/run &&
ln -s /run/lock /var/lock &&
cat <&3 >/var/task/bootstrap &&
chmod 0755 /var/task/bootstrap &&
{ [ -z "$wrapper" ] || { printf '%s' "$wrapper" >/var/runtime/bootstrap && chmod 0755 /var/runtime/bootstrap; }; } &&
{ [ ! -d /opt/extensions ] || mount -t tmpfs -o mode=0755,size=1m lmigo-rie-ext /opt/extensions; } &&
cd /var/task || { echo "lmigo-rie: cannot set up the private /var" >&2; exit ` + strconv.Itoa(setupExit) + `; }
exec 3<&-
exec "$@"
`

// Process is one process of the emulator's PID namespace, as the host
// sees it.
type Process struct {
	PID   int      // host PID
	Start uint64   // start time in clock ticks since boot; tells PID reuse apart
	UID   int      // real uid (993 for the runtime)
	Args  []string // command line
}

// alive reports whether the same process (PID and start time) still runs.
func (p Process) alive() bool {
	st, err := readStat(p.PID)
	return err == nil && st.start == p.Start && st.state != 'Z'
}

type procStat struct {
	ppid  int
	state byte
	start uint64
}

// readStat reads /proc/PID/stat.
func readStat(pid int) (procStat, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procStat{}, err
	}
	return parseStat(b)
}

// parseStat parses the text of /proc/PID/stat. The command name may hold
// spaces and parentheses, so fields are counted from the last ')'.
func parseStat(b []byte) (procStat, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return procStat{}, errMalformedStat
	}
	f := strings.Fields(string(b[i+1:]))
	// After the name: state(3) ppid(4) ... starttime(22).
	// The state is one letter (R, S, D, Z, T, I, ...); anything else is not a stat line.
	if len(f) < 20 || len(f[0]) != 1 || !isLetter(f[0][0]) {
		return procStat{}, errMalformedStat
	}
	ppid, err := strconv.Atoi(f[1])
	if err != nil {
		return procStat{}, errMalformedStat
	}
	start, err := strconv.ParseUint(f[19], 10, 64)
	if err != nil {
		return procStat{}, errMalformedStat
	}
	return procStat{ppid: ppid, state: f[0][0], start: start}, nil
}

func isLetter(c byte) bool { return 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' }

func pids() []int {
	ents, _ := os.ReadDir("/proc")
	out := make([]int, 0, len(ents))
	for _, e := range ents {
		if pid, err := strconv.Atoi(e.Name()); err == nil {
			out = append(out, pid)
		}
	}
	return out
}

// childOf returns the first process whose parent is ppid.
func childOf(ppid int) (int, bool) {
	for _, pid := range pids() {
		if st, err := readStat(pid); err == nil && st.ppid == ppid {
			return pid, true
		}
	}
	return 0, false
}

// nsProcesses lists the processes whose PID namespace link reads ns.
func nsProcesses(ns string) []Process {
	var out []Process
	for _, pid := range pids() {
		base := "/proc/" + strconv.Itoa(pid)
		if l, err := os.Readlink(base + "/ns/pid"); err != nil || l != ns {
			continue
		}
		st, err := readStat(pid)
		if err != nil || st.state == 'Z' {
			continue
		}
		p := Process{PID: pid, Start: st.start, UID: -1}
		if fi, err := os.Stat(base); err == nil {
			p.UID = statUID(fi)
		}
		if cl, err := os.ReadFile(base + "/cmdline"); err == nil {
			p.Args = strings.Split(strings.TrimRight(string(cl), "\x00"), "\x00")
		}
		out = append(out, p)
	}
	return out
}

// underVar reports whether path lies in /var, which the private tmpfs
// hides from the emulator.
func underVar(path string) (bool, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return false, err
	}
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		abs = r
	}
	return abs == "/var" || strings.HasPrefix(abs, "/var/"), nil
}

func describe(ps []Process) string {
	var b strings.Builder
	for i, p := range ps {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%d %q", p.PID, strings.Join(p.Args, " "))
	}
	return b.String()
}

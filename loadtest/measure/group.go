package measure

import (
	"errors"
	"os"
	"strconv"
	"time"
)

// A function may be a wrapper script whose child does the work. The load
// test then measures the wrapper's whole process group: the processes it
// started itself, never those it did not.

// ErrNoProcess says that none of the processes asked for could be read.
var ErrNoProcess = errors.New("measure: no process to read")

// GroupMembers lists the live processes of process group pgid, by a scan
// of /proc. Processes that have ended (zombies) are not members.
func GroupMembers(pgid int) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if st, err := readProcStat(pid); err == nil && st.PGID == pgid && st.State != 'Z' {
			out = append(out, pid)
		}
	}
	return out
}

// ReadGroupCPU is the CPU time of the processes pids together, each with
// the children it has waited for: a wrapper's ended commands count too.
func ReadGroupCPU(pids []int) (time.Duration, error) {
	var total time.Duration
	read := 0
	for _, pid := range pids {
		st, err := readProcStat(pid)
		if err != nil {
			continue
		}
		total += st.CPU.Total() + st.Children.Total()
		read++
	}
	if read == 0 {
		return 0, ErrNoProcess
	}
	return total, nil
}

// ReadGroupStatus sums the memory of the processes pids: RSS now, and
// the sum of each one's peak, which bounds the group's peak from above.
// CPUs is the first one's.
func ReadGroupStatus(pids []int) (Status, error) {
	var sum Status
	read := 0
	for _, pid := range pids {
		st, err := ReadStatus(pid)
		if err != nil {
			continue
		}
		if read == 0 {
			sum.CPUs = st.CPUs
		}
		sum.RSS += st.RSS
		sum.Peak += st.Peak
		read++
	}
	if read == 0 {
		return Status{}, ErrNoProcess
	}
	return sum, nil
}

func readProcStat(pid int) (ProcStat, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return ProcStat{}, err
	}
	return ParseProcStat(b)
}

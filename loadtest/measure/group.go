package measure

import (
	"os"
	"strconv"
)

// A function may be a wrapper script whose child does the work: the load
// test ends the wrapper's whole process group.

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

func readProcStat(pid int) (ProcStat, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return ProcStat{}, err
	}
	return ParseProcStat(b)
}

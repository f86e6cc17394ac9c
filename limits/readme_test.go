package limits

import (
	"os"
	"strings"
	"testing"
)

// TestREADMEListsEveryVariable keeps the README's configuration table in
// step with Vars.
func TestREADMEListsEveryVariable(t *testing.T) {
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	for _, v := range Vars() {
		if !strings.Contains(readme, "`"+v.Name+"`") {
			t.Errorf("README.md does not document %s", v.Name)
		}
	}
}

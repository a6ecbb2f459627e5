package labs_test

import (
	"os"
	"regexp"
	"strings"
	"testing"

	lab "github.com/rmlab/lab"
	"github.com/rmlab/lab/steps"
)

var allowedRe = regexp.MustCompile(`allowed: (.*)$`)

// TestTheReadmeDocumentsEveryStepKindAndEveryAttribute asks each step kind
// which attributes it takes (the list its load-time check names) and wants
// labs/README.md to name the kind in its table and each attribute in that
// kind's row: the docs an instructor writes from stay complete.
func TestTheReadmeDocumentsEveryStepKindAndEveryAttribute(t *testing.T) {
	doc, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]string{}
	for _, line := range strings.Split(string(doc), "\n") {
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		cell := strings.SplitN(line, "|", 3)[1]
		for _, k := range regexp.MustCompile("`([a-z-]+)`").FindAllStringSubmatch(cell, -1) {
			rows[k[1]] = line
		}
	}
	for _, kind := range steps.KindNames() {
		row, ok := rows[kind]
		if !ok {
			t.Errorf("labs/README.md has no row for step kind %s", kind)
			continue
		}
		k, _ := steps.Lookup(kind)
		err := k.Check(&lab.Step{Kind: kind, File: "x.md", Line: 1, Attrs: map[string]string{"zz-not-an-attribute": "1"}})
		if err == nil {
			t.Errorf("step kind %s accepts an unknown attribute without a word: a typo in one would pass silently", kind)
			continue
		}
		m := allowedRe.FindStringSubmatch(err.Error())
		if m == nil {
			t.Logf("%s: its check names no attribute list (%v)", kind, err)
			continue
		}
		for _, a := range strings.Split(m[1], ", ") {
			if a == "when" || a == "label" || a == "" {
				continue // every step's, documented once above the table
			}
			if !strings.Contains(row, "`"+a) && !strings.Contains(row, a+"=") {
				t.Errorf("labs/README.md's %s row does not name its attribute %s:\n%s", kind, a, row)
			}
		}
	}
}

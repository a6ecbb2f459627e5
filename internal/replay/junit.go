package replay

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"

	"github.com/rmlab/lab/internal/plain"
)

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Skipped  int         `xml:"skipped,attr"`
	Time     string      `xml:"time,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitFailure `xml:"failure,omitempty"`
	Skipped   *junitSkipped `xml:"skipped,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitSkipped struct {
	Message string `xml:"message,attr,omitempty"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Text    string `xml:",chardata"`
}

// WriteJUnit writes one test suite per lesson and one test case per step.
// What the servers and programs answered passes plain.Lines: XML keeps C1
// controls and bidi overrides, and CI logs print the file.
func (r Report) WriteJUnit(w io.Writer) error {
	s := junitSuites{Name: "lab replay", Tests: 0}
	var total int64
	for _, l := range r.Lessons {
		su := junitSuite{Name: fmt.Sprintf("%02d %s", l.Number, l.ID), Time: secs(l.DurationMS)}
		total += l.DurationMS
		if l.ExplainOnly || (len(l.Steps) == 0 && l.Passed) {
			su.Cases = append(su.Cases, junitCase{Name: "explain-only", Classname: l.ID, Time: "0", Skipped: &junitSkipped{Message: "explain-only: nothing runs against a service"}})
		}
		for i, st := range l.Steps {
			name := fmt.Sprintf("step %02d %s (line %d)", i+1, st.Kind, st.Line)
			if st.Option != "" {
				name += " [" + plain.Lines(st.Option) + "]"
			}
			c := junitCase{Name: name, Classname: l.ID, Time: secs(st.DurationMS),
				SystemOut: plain.Lines(strings.Join(append(append([]string(nil), st.Sent...), st.Observed), "\n"))}
			if !st.Passed {
				c.Failure = &junitFailure{Message: plain.Lines(st.Why), Text: plain.Lines(st.Observed)}
				su.Failures++
			} else if st.Skipped {
				c.Skipped = &junitSkipped{Message: plain.Lines(st.Why)}
				su.Skipped++
			}
			su.Cases = append(su.Cases, c)
		}
		// A lesson that failed with no failed step (it could not start, or
		// was interrupted between steps) fails as a whole: CI must see it.
		// One that skipped checks (or did not run for a missing need) is
		// skipped as a whole, so a dashboard never counts it a pass.
		if l.Skipped {
			su.Cases = append(su.Cases, junitCase{Name: "lesson", Classname: l.ID, Time: "0",
				Skipped: &junitSkipped{Message: plain.Lines(l.Why)}})
			su.Skipped++
		} else if !l.Passed && su.Failures == 0 {
			su.Cases = append(su.Cases, junitCase{Name: "lesson", Classname: l.ID, Time: "0",
				Failure: &junitFailure{Message: plain.Lines(l.Why), Text: plain.Lines(l.Why)}})
			su.Failures++
		}
		su.Tests = len(su.Cases)
		s.Tests += su.Tests
		s.Failures += su.Failures
		s.Suites = append(s.Suites, su)
	}
	s.Time = secs(total)
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(s); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

func secs(ms int64) string { return fmt.Sprintf("%.3f", float64(ms)/1000) }

package steps_test

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"

	"github.com/rmlab/lab/steps"
)

// programDirs is where each worker program's code lives.
var programDirs = map[string]string{"consumer": "consumer", "relay": "relay", "producer": "producer",
	"batch-consumer": "batch", "executor": "executor", "provider": "provider", "redrive": "redrive", "binlog-relay": "binlogrelay"}

var reachRe = regexp.MustCompile(`(?:[Rr]each|reachEach)\(ctx, "([a-z-]+)"`)
var pointConstRe = regexp.MustCompile(`Point[A-Za-z]+\s*=\s*"([a-z-]+)"`)

// TestEveryPausePointAProgramReachesIsDeclared reads each program's code for
// the points it announces and wants each in its declared Points: the loader
// checks lessons against those lists, so a point missing there would be
// refused although the program reaches it.
func TestEveryPausePointAProgramReachesIsDeclared(t *testing.T) {
	for prog, dir := range programDirs {
		declared, ok := steps.Programs[prog]
		if !ok {
			t.Errorf("program %s is not in steps.Programs", prog)
			continue
		}
		files, _ := filepath.Glob(filepath.Join("..", "internal", "programs", dir, "*.go"))
		found := 0
		for _, f := range files {
			if filepath.Ext(f) != ".go" || len(f) > 8 && f[len(f)-8:] == "_test.go" {
				continue
			}
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			for _, re := range []*regexp.Regexp{reachRe, pointConstRe} {
				for _, m := range re.FindAllStringSubmatch(string(src), -1) {
					found++
					if !slices.Contains(declared, m[1]) {
						t.Errorf("%s reaches point %q (%s) but does not declare it in its Points", prog, m[1], f)
					}
				}
			}
		}
		if found == 0 {
			t.Errorf("found no pause point in %s's code", prog)
		}
	}
	if len(steps.Programs) != len(programDirs) {
		t.Errorf("steps.Programs has %d programs, the test knows %d", len(steps.Programs), len(programDirs))
	}
}

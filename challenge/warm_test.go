package challenge_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rmlab/lab/challenge"
)

// A program that does not build says so with the compiler's first lines,
// and output past 8 KiB (here ten errors quoting 2 000-character names)
// is cut saying so, not held and printed whole.
func TestAProgramThatDoesNotBuildSaysTheCompilersFirstLinesCutSayingSo(t *testing.T) {
	dir := t.TempDir()
	var src strings.Builder
	src.WriteString("package main\n\nfunc main() {\n")
	for i := range 10 {
		fmt.Fprintf(&src, "\t_ = undefined%d%s\n", i, strings.Repeat("x", 2000))
	}
	src.WriteString("}\n")
	for name, body := range map[string]string{"go.mod": "module broken\n\ngo 1.22\n", "main.go": src.String()} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	err := challenge.Warm(ctx, []string{"go", "-C", dir, "run", "."}, nil)
	if err == nil {
		t.Fatal("a program that does not build built")
	}
	msg := err.Error()
	if !strings.Contains(msg, "your program does not build") || !strings.Contains(msg, "undefined0") {
		t.Errorf("the error does not say what failed first:\n%.300s", msg)
	}
	if len(msg) > 9<<10 || !strings.HasSuffix(msg, "…") {
		t.Errorf("the compiler's %d bytes were not cut, or cut without saying so", len(msg))
	}
}

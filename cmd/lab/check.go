package main

import (
	"fmt"
	"github.com/rmlab/lab/internal/catalog"
	"io"

	"github.com/rmlab/lab/labs"
)

func runCheck(args []string, stdout, stderr io.Writer) int {
	fs, g := command("check", "usage: lab check [FILE|DIR ...]\n\nevery problem in lesson files (default: the built-in lessons), no server needed\n", stderr)
	if code, ok := parse(fs, g, args, stderr); !ok {
		return code
	}
	return cmdCheck(fs.Args(), g.lang, stdout, stderr)
}

// cmdCheck is `lab check [FILE|DIR ...]`: every problem in the lessons, as
// the screen and replay would meet them at load time, with no server. Both
// languages are checked whatever --lang says; --lang zh says each problem
// and the verdict in Chinese (the names and attributes it quotes stay as
// labs/README.md writes them).
func cmdCheck(paths []string, lang string, stdout, stderr io.Writer) int {
	r := labs.Check(paths...)
	out := catalog.Writer(lang, stdout)
	for _, p := range r.Problems {
		fmt.Fprintln(out, p)
	}
	for _, s := range r.Skipped {
		fmt.Fprintf(out, "%s: skipped: no ```lesson block, so not a lesson (notes and READMEs may sit beside lessons)\n", s)
	}
	what, problems, clean := "the built-in lessons", "lab check: %d problem(s) in %s; %d lesson(s) load cleanly\n", "lab check: %d lesson(s) in %s, no problem\n"
	if lang == "zh" {
		what, problems, clean = "内置课程", "lab check：%[2]s中有 %[1]d 个问题；%[3]d 课可以正常加载\n", "lab check：%[2]s中的 %[1]d 课，没有问题\n"
	}
	if len(paths) > 0 {
		what = fmt.Sprint(paths)
	}
	if len(r.Problems) > 0 {
		fmt.Fprintf(stderr, problems, len(r.Problems), what, r.Lessons)
		return 1
	}
	fmt.Fprintf(stderr, clean, r.Lessons, what)
	return 0
}

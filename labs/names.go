package labs

import (
	"os"
	"path/filepath"
	"slices"
	"sort"

	lab "github.com/rmlab/lab"
	"github.com/rmlab/lab/internal/cleaner"
	"github.com/rmlab/lab/internal/progress"
	"github.com/rmlab/lab/steps"
)

// BrokerNames are the queues and exchanges (article names) the lessons'
// reset steps clear and declare steps create, for the cleaner: every
// built-in lesson in both languages, and an instructor's own in every folder
// the lab was ever given, not only lessonsDir ("" for none): an
// instructor's lessons replayed in lanes last week left queues whose names
// only those files know. (With the management API, the broker's own marks
// add whatever else the lab created.) A remembered folder that is gone is
// forgotten and listed in Gone. Only lessonsDir may report a load error:
// one remembered from before may have changed since.
func BrokerNames(lessonsDir string) cleaner.Names {
	dirs, _ := progress.LessonsFolders()
	explicit := ""
	if lessonsDir != "" {
		if abs, err := filepath.Abs(lessonsDir); err == nil {
			explicit = abs
			if !slices.Contains(dirs, abs) {
				dirs = append(dirs, abs)
			}
		}
	}
	var names cleaner.Names
	dirs = slices.DeleteFunc(dirs, func(d string) bool {
		_, err := os.Stat(d)
		if err != nil {
			names.Gone = append(names.Gone, d)
		}
		return err != nil
	})
	if len(names.Gone) > 0 {
		_ = progress.ForgetLessons(names.Gone)
	}
	all := builtinLessons()
	for _, lang := range Langs {
		for _, dir := range dirs {
			mine, err := LoadDir(dir, lang)
			if err != nil && names.Err == nil && dir == explicit {
				names.Err = err
			}
			all = append(all, mine...)
		}
	}
	names.Queues, names.Exchanges = declared(all)
	return names
}

// builtinLessons are the built-in lessons in every language.
func builtinLessons() []*lab.Lesson {
	var all []*lab.Lesson
	for _, lang := range Langs {
		ls, _ := Builtin(lang) // the built-in lessons always load (a test says so)
		all = append(all, ls...)
	}
	return all
}

// declared are the queues and exchanges ls declare or reset, sorted.
func declared(ls []*lab.Lesson) (queues, exchanges []string) {
	qs, xs := map[string]bool{}, map[string]bool{}
	for _, l := range ls {
		for _, s := range l.Steps() {
			switch s.Kind {
			case "declare":
				q, x := steps.Declared(s)
				for _, n := range q {
					qs[n] = true
				}
				for _, n := range x {
					xs[n] = true
				}
			case "reset":
				for _, q := range steps.SplitList(s.Attrs["queues"]) {
					qs[q] = true
				}
				for _, x := range steps.SplitList(s.Attrs["exchanges"]) {
					xs[x] = true
				}
			}
		}
	}
	return sorted(qs), sorted(xs)
}

func sorted(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

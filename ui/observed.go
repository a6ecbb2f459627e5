package ui

import "github.com/rmlab/lab/steps"

// localObserved is line in the screen's language where it is one of the
// lab's own (steps.InLanguage).
func localObserved(lang, line string) string { return steps.InLanguage(lang, line) }

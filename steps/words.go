package steps

import "github.com/rmlab/lab/internal/catalog"

// InLanguage is line in lang's words where it is one of the lab's own lines
// (a step's output or its why, internal/catalog); any other line (rows,
// messages, a program's output, a server's error) comes back as it is. The
// run itself speaks English (replay's reports and the tests read it): the
// screen and replay's progress lines in Chinese say these in Chinese.
func InLanguage(lang, line string) string { return catalog.In(lang, line) }

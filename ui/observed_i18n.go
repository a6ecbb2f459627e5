package ui

import "regexp"

// observedPhrase rewrites one line a step wrote in English (the run speaks
// English: replay's transcripts and the tests read it) into the screen's
// language. Only the lab's own lines match: rows, messages and program
// output pass unchanged.
type observedPhrase struct {
	re   *regexp.Regexp
	repl string
}

var observedPhrases = map[string][]observedPhrase{
	"zh": {
		{regexp.MustCompile(`^recreated (\S+) from sql/(\S+)$`), "已按 sql/$2 重建 $1"},
		{regexp.MustCompile(`^\[(\w+)\] waited (\S+) in all$`), "[$1] 共等待 $2"},
		{regexp.MustCompile(`^\[(\w+)\] (.*) \(waited (\S+)\)$`), "[$1] $2（等待 $3）"},
		{regexp.MustCompile(`^waited (\S+)$`), "等待了 $1"},
		{regexp.MustCompile(`^… still waiting after (\S+) \(blocked inside the server\)$`), "… 已等待 $1 仍未完成（在服务器内阻塞）"},
	},
}

// localObserved is line in lang's words where it is one of the lab's own.
func localObserved(lang, line string) string {
	for _, p := range observedPhrases[lang] {
		if p.re.MatchString(line) {
			return p.re.ReplaceAllString(line, p.repl)
		}
	}
	return line
}

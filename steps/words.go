package steps

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
		// A step's failure under load: what it waited for and what it saw.
		{regexp.MustCompile(`^waited (\S+) for (\S+) to exit: it is (\S+), last point (\S+)(.*)$`), "等待 $2 退出 $1 仍未等到：它的状态是 $3，最后到达的点是 $4$5"},
		{regexp.MustCompile(`^waited (\S+) for (\S+) to reach (\S+): it is (\S+), last point (\S+)(.*)$`), "等待 $2 到达 $3 $1 仍未等到：它的状态是 $4，最后到达的点是 $5$6"},
		{regexp.MustCompile(`^(\S+) (ready|consumers) is (\d+), still not (\d+) after (\S+)$`), "$1 的 $2 为 $3，$5 后仍不是 $4"},
	},
}

// InLanguage is line in lang's words where it is one of the lab's own lines
// (a step's output or its why); any other line comes back as it is. The run
// itself speaks English (replay's reports and the tests read it): the
// screen and replay's progress lines in Chinese say these in Chinese.
func InLanguage(lang, line string) string {
	for _, p := range observedPhrases[lang] {
		if p.re.MatchString(line) {
			return p.re.ReplaceAllString(line, p.repl)
		}
	}
	return line
}

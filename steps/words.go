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
		// The screen's panes turn … into ... and ← into <- before these
		// (asciiSafe): each takes either.
		{regexp.MustCompile(`^(…|\.\.\.) still waiting after (\S+) \(blocked inside the server\)$`), "$1 已等待 $2 仍未完成（在服务器内阻塞）"},
		{regexp.MustCompile(`^statement still waiting after (\S+) \(a lock held by another session\?\)$`), "语句等待 $1 后仍未完成（是否有其他会话持有锁？）"},
		{regexp.MustCompile(`^session (\S+) still waiting after (\S+)$`), "会话 $1 等待 $2 后仍未完成"},
		{regexp.MustCompile(`^(✓|ok) (.+)$`), "$1 通过：$2"},
		{regexp.MustCompile(`^(←|<-) basic\.ack for publish seq (\d+) after (\S+): the broker took responsibility for the message$`), "$1 basic.ack（发布序号 $2，$3 后）：broker 已为这条消息负责"},
		{regexp.MustCompile(`^(←|<-) no confirm: channel (\S+) closed first \((.*)\); the library reports ack=false, which means unknown, not lost$`), "$1 没有确认：通道 $2 先关闭了（$3）；客户端库报告 ack=false，意思是结果未知，不是丢失"},
		{regexp.MustCompile(`^(←|<-) basic\.return (.*): no queue took the message$`), "$1 basic.return $2：没有队列接收这条消息"},
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

package ui

// roomText is every word the instructor's room screen shows, in each
// language (the screen's own texts are in text_i18n.go).
type roomText struct {
	Header      string // " room %s: %d participants: %d online, %d failing, %d stuck, %d done, %d offline "
	HeaderShort string // the same, for a narrow screen
	CannotRead  string // "cannot read the room: %v"
	Cols        [7]string
	States      map[string]string // online, failing, stuck, done, offline
	Off         string            // "off %s"
	Done        string
	Challenges  string // before a participant's challenge verdicts
	Filters     [4]string
	Showing     string // "showing %s"
	Nobody      string
	NobodyIs    string // "nobody is %s (f: next filter)"
	Rows        string // "rows %d-%d of %d (%s): up/down, pgup/pgdown"
	Polls       string
	PollLine    string // "  %s / %s:  %s  (answered %d of %d in this lesson)"
	TheArticle  string // "  the article: %s"
	ShowAnswer  string
	Keys        string // the footer when narrow
	KeysWide    string // "…(%s)…" with the grammar
	Typing      string // "   %s; enter sends, esc cancels"
	Sent        string // "sent: %s (every server of the room carries it out within a second)"
	NotSent     string // "not sent: %v"
	Watching    string // " watching %s (read-only, live) "
	Drawn       string // "%d×%d, drawn %s ago "
	WaitingFor  string // "waiting for %s's screen (…)"
	BackToRoom  string
	ProjHeader  string // " room %s "
	Working     string // "   %d working, %d done"
	Steps       string // "  steps 0-%d  %s"
	NobodyOn    string
	MoreLessons string // lessons (and the people on them) the projector had no lines for
	Poll        string // "poll: %s / %s"
	Answered    string // "  answered %d of %d in this lesson"
	ArticleMark string
	ProjKeys    string
	PresentEnd  string
}

var roomTexts = map[string]roomText{
	"en": {
		Header:      " room %s: %d participants: %d online, %d failing, %d stuck, %d done, %d offline ",
		HeaderShort: " %s: %d in all, %d on, %d failing, %d stuck, %d done, %d off ",
		CannotRead:  "cannot read the room: %v",
		Cols:        [7]string{"participant", "state", "lesson", "step", "on step", "fail", "why | verdicts"},
		States:      map[string]string{"online": "online", "failing": "failing", "stuck": "stuck", "done": "done", "offline": "offline"},
		Off:         "off %s", Done: "done", Challenges: "challenges:",
		Filters:  [4]string{"everyone", "needs help (failing or stuck)", "offline", "done"},
		Showing:  "showing %s",
		Nobody:   "nobody yet: participants run ssh -p PORT NAME@HOST",
		NobodyIs: "nobody is %s (f: next filter)",
		Rows:     "rows %d-%d of %d (%s): up/down, pgup/pgdown",
		Polls:    "polls", PollLine: "  %s / %s:  %s  (answered %d of %d in this lesson)",
		TheArticle: "  the article: %s", ShowAnswer: "  (a: show the article's answer)",
		Keys:     ": command  f filter  a answers  p projector  up/down  q quit",
		KeysWide: ": command (%s)  f filter  a answers  p projector  up/down  q quit",
		Typing:   "   %s; enter sends, esc cancels",
		Sent:     "sent: %s (every server of the room carries it out within a second)", NotSent: "not sent: %v",
		Watching: " watching %s (read-only, live) ", Drawn: "%d×%d, drawn %s ago ",
		WaitingFor: "waiting for %s's screen (their server publishes it within a second if they are online)",
		BackToRoom: "esc: back to the room",
		ProjHeader: " room %s ", Working: "   %d working, %d done", Steps: "  steps 0-%d  %s", NobodyOn: "nobody online yet",
		MoreLessons: "  +%d more lessons, %d people on them (a taller window shows them)",
		Poll:        "poll: %s / %s", Answered: "  answered %d of %d in this lesson", ArticleMark: "  ← the article",
		ProjKeys:   "p: back to the room  a: show the article's answer",
		PresentEnd: "presentation ended: every participant is back where they were",
	},
	"zh": {
		Header:      " 教室 %s：%d 名学员：在线 %d，失败 %d，卡住 %d，完成 %d，离线 %d ",
		HeaderShort: " %s：共 %d，在线 %d，失败 %d，卡住 %d，完成 %d，离线 %d ",
		CannotRead:  "读不到教室：%v",
		Cols:        [7]string{"学员", "状态", "课程", "步骤", "本步用时", "失败", "原因 | 结论"},
		States:      map[string]string{"online": "在线", "failing": "失败", "stuck": "卡住", "done": "完成", "offline": "离线"},
		Off:         "离线 %s", Done: "完成", Challenges: "挑战：",
		Filters:  [4]string{"全部", "需要帮助（失败或卡住）", "离线", "完成"},
		Showing:  "显示：%s",
		Nobody:   "还没有人：学员运行 ssh -p PORT NAME@HOST",
		NobodyIs: "没有%s的学员（f：下一个筛选）",
		Rows:     "第 %d-%d 行，共 %d（%s）：up/down, pgup/pgdown",
		Polls:    "投票", PollLine: "  %s / %s：%s（本课 %[5]d 人中 %[4]d 人已回答）",
		TheArticle: "  文章的答案：%s", ShowAnswer: "（a：显示文章的答案）",
		Keys:     ": 命令  f 筛选  a 答案  p 投影  up/down  q 退出",
		KeysWide: ": 命令（%s）  f 筛选  a 答案  p 投影  up/down  q 退出",
		Typing:   "   %s；enter 发送，esc 取消",
		Sent:     "已发送：%s（教室的每台服务器在一秒内执行）", NotSent: "未发送：%v",
		Watching: " 正在查看 %s（只读，实时） ", Drawn: "%d×%d，%s 前绘制 ",
		WaitingFor: "等待 %s 的屏幕（学员在线时，其服务器一秒内发布）",
		BackToRoom: "esc：回到教室",
		ProjHeader: " 教室 %s ", Working: "   进行中 %d，完成 %d", Steps: "  步骤 0-%d  %s", NobodyOn: "还没有人在线",
		MoreLessons: "  另有 %d 课，%d 人在学（窗口更高时显示）",
		Poll:        "投票：%s / %s", Answered: "  本课 %[2]d 人中 %[1]d 人已回答", ArticleMark: "  ← 文章的答案",
		ProjKeys:   "p：回到教室  a：显示文章的答案",
		PresentEnd: "演示结束：每位学员回到各自的位置",
	},
}

// tx is the room screen's words in its language.
func (v *RoomView) tx() roomText {
	if t, ok := roomTexts[v.Lang]; ok {
		return t
	}
	return roomTexts["en"]
}

package ui

import (
	lab "github.com/rmlab/lab"
	"github.com/rmlab/lab/internal/broker"
	"github.com/rmlab/lab/internal/worker"
)

// text is every word the screen itself shows, as opposed to the lessons'
// own text: titles, key hints, the help overlay, states, empty-panel notes
// and status messages. There is one table per language and `l` switches it
// together with the lessons.
//
// Rules every table keeps (text_i18n_test.go checks them): the same format
// verbs in the same order in every language, the same keys in every map,
// nothing empty, and no East-Asian-ambiguous glyph (… → — “ ” ·): a CJK
// terminal draws those two cells wide and pushes a pane's border out of
// line. Widths are always measured (displayWidth), never assumed.
type text struct {
	// The header, the footer, the window.
	AppName     string
	LangLabel   string // "  lang: "
	LessonN     string // "  lesson %d: "
	ChallengeN  string // "  challenge %d: "
	HelpQuit    string
	HintsList   []string // footer hints in the lesson list, most useful first
	HintsLesson []string // footer hints in a lesson
	MoreKeys    string   // ends the footer when some hints did not fit

	// The help overlay.
	HelpTitle  string
	HelpMarks  string
	HelpTables string
	HelpClose  string
	Keys       map[string]string // key help by the binding's help key ("up", "q/ctrl+c")

	// The lesson list.
	ListTitle string
	NoLessons string
	ListStep  string // " (step %d/%d)"
	ListRead  string // " (read)"
	Parts     map[lab.Part]string

	// The lesson pane.
	NoLessonOpen   string
	PaneStep       string // "  step %d/%d"
	PaneDone       string // "  done"
	MoreBelow      string // "%d more lines below (down, pgdn)"
	Needs          string // "This lesson needs %s, ..."
	StateNext      string
	StateRunning   string
	ResultOK       string
	ResultSkipped  string
	ResultFailed   string
	Returned       string
	FailedWhy      string // "  FAILED: %s"
	OpenHint       string
	ExplainOnly    string
	StartHint      string
	RunningStep    string // "%s running step %d/%d (%s) %s"
	Usually        string // " (last time here: %s)"
	SleepLeft      string // ": %s of %s left"
	CatchingUp     string // "catching up: ... %d ..."
	Choose         string // "choose %s" (a choice with no prompt)
	ChoiceKeys     string
	PredictKeys    string
	Complete       string
	CompleteHint   string
	NotPassed      string // a challenge whose run failed
	NotPassedHint  string
	RunStep        string // "enter: run step %d/%d (%s)"
	ResumeOffer    string // "you had run %d of %d steps"
	ResumeHint     string // "enter: resume … · r: start over"
	FinishedBefore string // a reopened lesson that was done
	FinishedHint   string // "enter: the next lesson   r: start over"
	Resuming       string // status: "re-running the first %d steps …"
	LastFailed     string
	SessionWaiting string // "session %s waiting"
	LockWaitLimit  string // " of at most %s (innodb_lock_wait_timeout)"
	BlockedNote    string
	Predicted      string // "you predicted %s"
	ArticleAnswer  string // "the article's answer: %s"
	PredictMatch   string
	PredictDiffer  string

	// The panels.
	Panels  [panelCount]string
	TabNext string

	NoTables    string
	Reading     string
	RowsCount   string            // " (%d rows)"
	RowsRange   string            // " (rows %d-%d of %d)"
	RowsGone    string            // "- %d row(s) changed ..."
	TableErrors map[string]string // a panel's own English error → this language

	NoQueues          string
	QueueGlance       string // "%s %d ready %s unacked"
	GlanceMore        string // " (+%d more: tab)"
	QueuesUnavailable string
	NotDeclared       string
	QueueDown         string            // the queue's node is down
	QueueCols         [5]string         // queue, ready, unacked, consumers, source
	BrokerErr         string            // "broker: %s"
	QueueSources      map[string]string // broker.Source* → this language

	ChaosTitle string
	ChaosIdle  string

	ProgramFor      string // the prompt: "your program for" NAME
	HintProgram     string // the footer's hint in a challenge
	ProgramEmpty    string
	ProgramSet      string            // %s: the challenge
	ProgramsNotHere string            // %s: the challenge
	ChaosHead       string            // "pipeline %s, seed %d: %s"
	ChaosPhases     map[string]string // setup, schedule, drain, check, done
	ChaosLegend     string
	ChaosNoChart    string // "per-second chart: %d more lines of height needed"
	ChaosTotals     string // committed, published, applied, absorbed so far
	ChaosEarlier    string // "(+%d earlier faults: the chaos step's output lists all)"
	ChaosResult     string // pipeline, committed, lost, twice, absorbed

	NoWorkers   string
	WorkerCols  [4]string // name, kind, pid, state
	PausedAt    string    // "paused at %s"
	KilledAt    string    // "killed at %s"
	ExitedN     string    // "exited %d"
	States      map[worker.State]string
	SQLSessions string
	NoSessions  string
	Waiting     string
	Idle        string

	NoLedger      string
	LedgerUnsafe  string
	LedgerSafe    string
	LedgerVerdict string
	NotRunYet     string
	Earlier       string            // "(+%d earlier) %s"
	Fields        map[string]string // ledger rows by their English field name
	Verdicts      map[string]string // lab.Ledger.Verdict() → this language

	// Status messages in the footer.
	ProgressUnreadable string // "...: %s"
	ProgressNotSaved   string // "...: %s"
	Actions            map[string]string
	ActionFailed       string // "%s %s: %v" (action, worker, error)
	ActionDone         string // "%s: %s done" (worker, action)
	ConfirmResetAll    string
	ResetAllCancelled  string
	ProgressReset      string // "progress of %s reset"
	LessonReset        string
	AllReset           string
	NoLessonsIn        string // "no lessons in %s"
	NoTranslation      string // "lesson %s has no %s file: …"
	FromInstructor     string // "instructor: %s"
	Dismiss            string // " (x: dismiss)"
	PickFirst          string // a predict with no option picked yet
	WorkersShown       string // "workers %d-%d of %d (tab here, up/down)"
	NotOnPath          string // "not on this path (%s)"
	TimeLeft           string // "%s left" (the instructor's timer)
	TimeUp             string // "time is up"
	SentToLesson       string // "the instructor opened lesson %d for you"
	LessonsLeftOut     string // "%d lesson file(s) left out: %s"
	NoWorkerTo         string // "no worker to %s ..."
	AlreadyState       string // "%s is already %s"
	NotPaused          string // "%s is %s, not paused: ..."
	Acting             string // "%s %s..." (action, worker)
	StepIsRunning      string
	NothingToRun       string
	LessonComplete     string
	ChallengeNotPassed string
	StepFailed         string // "step %d failed: %s"
	ShortOn            string // w: this run's long waits are short
	ShortOff           string // w again: the article's waits
	ShortLater         string // w once the run has begun
}

var textEN = text{
	AppName:     "reliable-messaging lab",
	LangLabel:   "  lang: ",
	LessonN:     "  lesson %d: ",
	ChallengeN:  "  challenge %d: ",
	HelpQuit:    "? help  q quit ",
	HintsList:   []string{"up/down select", "enter open", "r reset lesson", "R reset all", "l en/zh", "? help", "q quit"},
	HintsLesson: []string{"enter run next", "up/down scroll/select", "tab panels", "k kill", "c continue", "r reset", "l en/zh", "esc list", "pgup/pgdn"},
	MoreKeys:    "? more",

	HelpTitle:  "Keys",
	HelpMarks:  " Marks: [x] done  [~] in progress  [ ] not started  > open",
	HelpTables: " Tables: + marks a row the last step changed.",
	HelpClose:  " Any key closes this help.",
	Keys: map[string]string{
		"up":         "select: lesson, option, worker; else scroll",
		"down":       "select: lesson, option, worker; else scroll",
		"enter":      "open the lesson / run the next step / take the option",
		"esc":        "back to the lesson list (closes help)",
		"tab":        "next panel (tables, queues, workers, ledger)",
		"shift+tab":  "previous panel",
		"pgup":       "scroll the lesson up a page",
		"pgdn/space": "scroll the lesson down a page",
		"home":       "lesson top",
		"end":        "lesson bottom",
		"k":          "kill the selected worker now (SIGKILL)",
		"c":          "let the selected paused worker go on",
		"r":          "reset this lesson (new run, runs its reset step)",
		"R":          "reset all progress (asks first)",
		"w":          "short waits for this run, as in replay (before step 1)",
		"l":          "switch language en/zh, same place",
		"?":          "this help",
		"q/ctrl+c":   "quit (kills every worker)",
		"y":          "confirm a reset of everything",
		"x":          "dismiss the instructor's message",
		"p":          "a challenge: set the command that runs your program",
	},

	ListTitle: "Lessons",
	NoLessons: "no lessons",
	ListStep:  " (step %d/%d)",
	ListRead:  " (read)",
	Parts: map[lab.Part]string{
		lab.PartIdempotency: "Idempotent consumers",
		lab.PartBroker:      "The broker: confirms and acks",
		lab.PartOutbox:      "The transactional outbox",
		lab.PartChallenges:  "Challenges: you write the code",
	},

	NoLessonOpen:   "no lesson open",
	PaneStep:       "  step %d/%d",
	PaneDone:       "  done",
	MoreBelow:      "%d more lines below (down, pgdn)",
	Needs:          "This lesson needs %s, which the servers do not offer (see `lab doctor`).",
	StateNext:      "next",
	StateRunning:   "running",
	ResultOK:       "ok",
	ResultSkipped:  "skipped",
	ResultFailed:   "FAILED",
	Returned:       "  -- returned --",
	FailedWhy:      "  FAILED: %s",
	OpenHint:       "enter opens the lesson under the cursor",
	ExplainOnly:    "explain-only lesson: nothing runs; pgdn to read on, esc for the list",
	StartHint:      "enter starts the lesson",
	RunningStep:    "%s running step %d/%d (%s) %s",
	Usually:        " (last time here: %s)",
	SleepLeft:      ": %s of %s left",
	CatchingUp:     "catching up: re-running steps up to %d to resume where you left off",
	Choose:         "choose %s",
	ChoiceKeys:     "  (up/down, enter)",
	PredictKeys:    "  (up/down, enter: predict, then watch)",
	Complete:       "Lesson complete.",
	CompleteHint:   " r runs it again; esc for the list",
	NotPassed:      "Not passed yet.",
	NotPassedHint:  " the verdict above says why; p sets another program, r runs it again; esc for the list",
	RunStep:        "enter: run step %d/%d (%s)",
	ResumeOffer:    "You had run %d of %d steps of this lesson.",
	ResumeHint:     "enter: resume (re-runs them first, with replay's short waits)   r: start over",
	FinishedBefore: "You finished this lesson.",
	FinishedHint:   "enter: the next lesson   r: start over",
	Resuming:       "re-running the first %d steps with replay's short waits (30 s becomes 3 s) to rebuild their state; quitting keeps your place",
	LastFailed:     "  last step failed",
	SessionWaiting: "session %s waiting",
	LockWaitLimit:  " of at most %s (innodb_lock_wait_timeout, then 1205)",
	BlockedNote:    " (blocked on a lock; a later step collects it)",
	Predicted:      "you predicted %s",
	ArticleAnswer:  "the article's answer: %s",
	PredictMatch:   "your prediction matches the article; the next steps show it on the services",
	PredictDiffer:  "not the article's answer; the next steps show what really happens",

	Panels:  [panelCount]string{"Tables", "Queues", "Workers", "Ledger"},
	TabNext: "  tab: next panel",

	NoTables:  "this lesson shows no tables",
	Reading:   "reading...",
	RowsCount: " (%d rows)",
	RowsRange: " (rows %d-%d of %d)",
	RowsGone:  "- %d row(s) changed or removed by the last step",
	TableErrors: map[string]string{
		errNoMySQL:  errNoMySQL,
		errNoDB:     errNoDB,
		errNoTable:  errNoTable,
		errNoAnswer: errNoAnswer,
	},

	NoQueues:          "this lesson uses no broker queues",
	QueueGlance:       "%s %d ready %s unacked",
	GlanceMore:        " (+%d more: tab)",
	QueuesUnavailable: "queue state unavailable",
	NotDeclared:       "not declared yet",
	QueueDown:         "unavailable: its node is down",
	QueueCols:         [5]string{"queue", "ready", "unacked", "consumers", "source"},
	BrokerErr:         "broker: %s",
	QueueSources: map[string]string{
		broker.SourcePassive:    "passive declare; unacked: the lab's own channels",
		broker.SourceManagement: "passive declare; unacked: management API",
	},

	ChaosTitle: "Chaos",
	ChaosIdle:  "no chaos run yet: the chaos step starts one",

	ProgramFor:      "the command that runs your program for",
	HintProgram:     "p your program",
	ProgramEmpty:    "give a command (enter), or esc to keep the one set",
	ProgramSet:      "%s: your program is set; enter runs it",
	ProgramsNotHere: "%s: a workshop's screen runs no program of yours; run lab challenge run on your own machine (see the step)",
	ChaosHead:       "pipeline %s, seed %d: %s",
	ChaosPhases:     map[string]string{"setup": "setting up", "schedule": "faults being injected", "drain": "draining", "check": "checking", "done": "done"},
	ChaosLegend:     "dots: committed/s  line: applied/s",
	ChaosNoChart:    "per-second chart: %d more lines of height needed (a taller terminal)",
	ChaosTotals:     "so far: %d committed, %d published, %d applied, %d duplicates absorbed",
	ChaosEarlier:    "(+%d earlier faults: the chaos step's output lists them all)",
	ChaosResult:     "%s: %d committed, lost %d, twice %d, duplicates absorbed %d",

	NoWorkers:  "no worker processes",
	WorkerCols: [4]string{"name", "kind", "pid", "state"},
	PausedAt:   "paused at %s",
	KilledAt:   "killed at %s",
	ExitedN:    "exited %d",
	States: map[worker.State]string{
		worker.Running: "running", worker.Paused: "paused", worker.Killed: "killed", worker.Exited: "exited",
	},
	SQLSessions: "sql sessions:",
	NoSessions:  "sql sessions: none open",
	Waiting:     "waiting",
	Idle:        "idle",

	NoLedger:      "no ledger yet: a lesson's ledger steps fill it",
	LedgerUnsafe:  "unsafe",
	LedgerSafe:    "safe",
	LedgerVerdict: "verdict",
	NotRunYet:     "(not run yet)",
	Earlier:       "(+%d earlier) %s",
	Fields: map[string]string{
		"intended": "intended", "committed": "committed", "published": "published", "delivered": "delivered",
		"applied": "applied", "absorbed": "absorbed", "lost": "lost", "duplicated": "duplicated",
		"waiting": "waiting", "unavailable": "unavailable",
	},
	Verdicts: map[string]string{
		"applied once": "applied once", "lost": "lost", "duplicated": "duplicated",
		"lost and duplicated": "lost and duplicated", "waiting": "waiting", "unavailable": "unavailable",
	},

	ProgressUnreadable: "progress file unreadable, starting fresh: %s",
	ProgressNotSaved:   "could not save progress: %s",
	Actions:            map[string]string{"kill": "kill", "continue": "continue"},
	ActionFailed:       "%s %s: %v",
	ActionDone:         "%s: %s done",
	ConfirmResetAll:    "Reset ALL progress and this lesson's run? y to confirm, any other key cancels",
	ShortOn:            "short waits: this run's leases and TTLs are seconds, not tens of seconds (the text shows the values sent); w again for the article's",
	ShortOff:           "the article's waits: leases and TTLs as the text says",
	ShortLater:         "w chooses the waits before the first step: r starts this lesson over",
	ResetAllCancelled:  "reset of all progress cancelled",
	ProgressReset:      "progress of %s reset",
	LessonReset:        "lesson reset: a new run",
	AllReset:           "all progress reset",
	NoLessonsIn:        "no lessons in %s",
	NoTranslation:      "lesson %s has no %s file, so it stays in this language (a folder pairs en/NN-id.md with zh/NN-id.md by id)",
	FromInstructor:     "instructor: %s",
	Dismiss:            "  (x: dismiss)",
	PickFirst:          "pick your prediction first: up/down, then enter",
	WorkersShown:       "workers %d-%d of %d (tab to this panel, up/down)",
	NotOnPath:          "not on this path (%s)",
	TimeLeft:           "%s left",
	TimeUp:             "time is up",
	SentToLesson:       "the instructor opened lesson %d for you",
	LessonsLeftOut:     "%d lesson file(s) did not load (see `lab list`): %s",
	NoWorkerTo:         "no worker to %s (tab to the Workers panel, up/down to select)",
	AlreadyState:       "%s is already %s",
	NotPaused:          "%s is %s, not paused: c only lets a paused worker go on",
	Acting:             "%s %s...",
	StepIsRunning:      "a step is running; keys still work, enter waits for it",
	NothingToRun:       "explain-only lesson: nothing to run",
	LessonComplete:     "lesson complete: r runs it again",
	ChallengeNotPassed: "not passed yet: p sets another program, r runs it again",
	StepFailed:         "step %d failed: %s",
}

var textZH = text{
	AppName:     "可靠消息实验室",
	LangLabel:   "  语言: ",
	LessonN:     "  第 %d 课: ",
	ChallengeN:  "  挑战 %d: ",
	HelpQuit:    "? 帮助  q 退出 ",
	HintsList:   []string{"up/down 选择", "enter 打开", "r 重置本课", "R 全部重置", "l en/zh", "? 帮助", "q 退出"},
	HintsLesson: []string{"enter 运行下一步", "up/down 滚动/选择", "tab 面板", "k 杀死", "c 继续", "r 重置", "l en/zh", "esc 列表", "pgup/pgdn"},
	MoreKeys:    "? 更多",

	HelpTitle:  "按键",
	HelpMarks:  " 标记: [x] 已完成  [~] 进行中  [ ] 未开始  > 已打开",
	HelpTables: " 表格: + 标出上一步改动过的行。",
	HelpClose:  " 按任意键关闭帮助。",
	Keys: map[string]string{
		"up":         "选择课程、选项或 worker；否则滚动",
		"down":       "选择课程、选项或 worker；否则滚动",
		"enter":      "打开课程 / 运行下一步 / 采用所选选项",
		"esc":        "回到课程列表（也关闭帮助）",
		"tab":        "下一个面板（表格、队列、worker、账本）",
		"shift+tab":  "上一个面板",
		"pgup":       "课程向上翻一页",
		"pgdn/space": "课程向下翻一页",
		"home":       "课程开头",
		"end":        "课程末尾",
		"k":          "立即杀死所选 worker（SIGKILL）",
		"c":          "让所选的暂停 worker 继续",
		"r":          "重置本课（新的运行，先执行 reset 步骤）",
		"R":          "重置全部进度（会先确认）",
		"w":          "本次运行用短等待，和 replay 一样（第 1 步之前）",
		"l":          "切换语言 en/zh，位置不变",
		"?":          "本帮助",
		"q/ctrl+c":   "退出（杀死所有 worker）",
		"y":          "确认重置全部",
		"x":          "关闭讲师的消息",
		"p":          "挑战：设置运行你的程序的命令",
	},

	ListTitle: "课程",
	NoLessons: "没有课程",
	ListStep:  "（第 %d/%d 步）",
	ListRead:  "（阅读）",
	Parts: map[lab.Part]string{
		lab.PartIdempotency: "幂等消费者",
		lab.PartBroker:      "Broker：confirm 与 ack",
		lab.PartOutbox:      "事务性 outbox",
		lab.PartChallenges:  "挑战：你来写代码",
	},

	NoLessonOpen:   "没有打开的课程",
	PaneStep:       "  第 %d/%d 步",
	PaneDone:       "  已完成",
	MoreBelow:      "下面还有 %d 行（down、pgdn）",
	Needs:          "本课需要 %s，但服务器不提供（见 `lab doctor`）。",
	StateNext:      "下一步",
	StateRunning:   "运行中",
	ResultOK:       "通过",
	ResultSkipped:  "跳过",
	ResultFailed:   "失败",
	Returned:       "  -- 返回 --",
	FailedWhy:      "  失败: %s",
	OpenHint:       "enter 打开光标所在的课程",
	ExplainOnly:    "只读课程：不运行任何步骤；pgdn 往下读，esc 回到列表",
	StartHint:      "enter 开始本课",
	RunningStep:    "%s 正在运行第 %d/%d 步（%s）%s",
	Usually:        "（上次在这里用了 %s）",
	SleepLeft:      "：还剩 %s（共 %s）",
	CatchingUp:     "追赶进度：重新运行到第 %d 步，回到上次离开的位置",
	Choose:         "选择 %s",
	ChoiceKeys:     "  (up/down, enter)",
	PredictKeys:    "  (up/down, enter: 先预测，再观察)",
	Complete:       "本课完成。",
	CompleteHint:   " r 再运行一次；esc 回到列表",
	NotPassed:      "还没有通过。",
	NotPassedHint:  " 上面的判定说明了原因；p 换一个程序，r 再运行一次；esc 回到列表",
	RunStep:        "enter: 运行第 %d/%d 步（%s）",
	ResumeOffer:    "这一课你已运行了 %d/%d 步。",
	ResumeHint:     "enter: 继续（先用回放的短等待重跑这些步骤）   r: 从头开始",
	FinishedBefore: "这一课你已经学完了。",
	FinishedHint:   "enter: 下一课   r: 从头开始",
	Resuming:       "正在用回放的短等待（30 秒变为 3 秒）重跑前 %d 步以重建状态；此时退出不会丢失进度",
	LastFailed:     "  上一步失败",
	SessionWaiting: "会话 %s 等待中",
	LockWaitLimit:  "，最多 %s（innodb_lock_wait_timeout，之后报 1205）",
	BlockedNote:    "（被锁阻塞；后面的步骤会收回它）",
	Predicted:      "你的预测: %s",
	ArticleAnswer:  "文章的答案: %s",
	PredictMatch:   "预测与文章一致；接下来的步骤在真实服务上演示",
	PredictDiffer:  "与文章的答案不同；接下来的步骤展示实际发生了什么",

	Panels:  [panelCount]string{"表格", "队列", "进程", "账本"},
	TabNext: "  tab: 下一个面板",

	NoTables:  "本课不展示表格",
	Reading:   "读取中...",
	RowsCount: "（%d 行）",
	RowsRange: "（第 %d-%d 行，共 %d 行）",
	RowsGone:  "- 上一步改动或删除了 %d 行",
	TableErrors: map[string]string{
		errNoMySQL:  "没有 MySQL 连接",
		errNoDB:     "数据库尚未创建（运行本课的 reset 步骤）",
		errNoTable:  "表尚未创建（本课的某一步会创建它）",
		errNoAnswer: "未在 " + pollTimeout.String() + " 内应答",
	},

	NoQueues:          "本课不使用 Broker 队列",
	QueueGlance:       "%s 就绪 %d 未确认 %s",
	GlanceMore:        "（另有 %d 个：tab）",
	QueuesUnavailable: "无法读取队列状态",
	NotDeclared:       "尚未声明",
	QueueDown:         "不可用：所在节点已停机",
	QueueCols:         [5]string{"队列", "就绪", "未确认", "消费者", "来源"},
	BrokerErr:         "Broker: %s",
	QueueSources: map[string]string{
		broker.SourcePassive:    "被动声明；未确认数：实验室自己的通道",
		broker.SourceManagement: "被动声明；未确认数：管理 API",
	},

	ChaosTitle: "混沌",
	ChaosIdle:  "还没有混沌运行：chaos 步骤会启动一次",

	ProgramFor:      "运行你的程序的命令，挑战",
	HintProgram:     "p 你的程序",
	ProgramEmpty:    "请输入命令（enter），或按 esc 保留原来的命令",
	ProgramSet:      "%s：已设置你的程序；按 enter 运行",
	ProgramsNotHere: "%s：工作坊的界面不运行你的程序；请在你自己的机器上运行 lab challenge run（见该步骤）",
	ChaosHead:       "管道 %s，种子 %d：%s",
	ChaosPhases:     map[string]string{"setup": "准备中", "schedule": "正在注入故障", "drain": "排空中", "check": "检查中", "done": "已完成"},
	ChaosLegend:     "点：每秒提交  线：每秒生效",
	ChaosNoChart:    "每秒图表：还需要 %d 行高度（更高的终端）",
	ChaosTotals:     "累计：提交 %d，发布 %d，生效 %d，吸收的重复 %d",
	ChaosEarlier:    "（另有 %d 个更早的故障：chaos 步骤的输出列出了全部）",
	ChaosResult:     "%s：提交 %d，丢失 %d，重复生效 %d，被吸收的重复 %d",

	NoWorkers:  "没有 worker 进程",
	WorkerCols: [4]string{"名称", "类型", "pid", "状态"},
	PausedAt:   "暂停于 %s",
	KilledAt:   "杀死于 %s",
	ExitedN:    "已退出 %d",
	States: map[worker.State]string{
		worker.Running: "运行中", worker.Paused: "已暂停", worker.Killed: "已杀死", worker.Exited: "已退出",
	},
	SQLSessions: "SQL 会话:",
	NoSessions:  "SQL 会话: 无",
	Waiting:     "等待中",
	Idle:        "空闲",

	NoLedger:      "还没有账本：课程的 ledger 步骤会填写它",
	LedgerUnsafe:  "不安全",
	LedgerSafe:    "安全",
	LedgerVerdict: "结论",
	NotRunYet:     "（尚未运行）",
	Earlier:       "（另有 %d 个更早的）%s",
	Fields: map[string]string{
		"intended": "预期", "committed": "已提交", "published": "已发布", "delivered": "已投递",
		"applied": "已生效", "absorbed": "已吸收", "lost": "丢失", "duplicated": "重复",
		"waiting": "仍在等待", "unavailable": "暂不可读",
	},
	Verdicts: map[string]string{
		"applied once": "只生效一次", "lost": "丢失", "duplicated": "重复", "lost and duplicated": "丢失且重复",
		"waiting": "仍在等待", "unavailable": "暂不可读",
	},

	ProgressUnreadable: "进度文件无法读取，从头开始: %s",
	ProgressNotSaved:   "无法保存进度: %s",
	Actions:            map[string]string{"kill": "杀死", "continue": "继续"},
	ActionFailed:       "%s %s: %v",
	ActionDone:         "%s: %s 完成",
	ConfirmResetAll:    "重置全部进度以及本课的运行？按 y 确认，其他任意键取消",
	ShortOn:            "短等待：本次运行的租约和 TTL 只有几秒，而不是几十秒（正文显示实际发送的值）；再按 w 恢复文章里的等待",
	ShortOff:           "文章里的等待：租约和 TTL 与正文所说一致",
	ShortLater:         "w 要在第一步之前选择：按 r 重新开始本课",
	ResetAllCancelled:  "已取消重置全部进度",
	ProgressReset:      "%s 的进度已重置",
	LessonReset:        "本课已重置：新的运行",
	AllReset:           "全部进度已重置",
	NoLessonsIn:        "%s 没有课程",
	NoTranslation:      "课程 %s 没有 %s 文件，所以保持当前语言（文件夹按 id 把 en/NN-id.md 与 zh/NN-id.md 配对）",
	FromInstructor:     "讲师：%s",
	Dismiss:            "（x：关闭）",
	PickFirst:          "先选择你的预测：up/down，然后 enter",
	WorkersShown:       "worker 第 %d-%d 个，共 %d 个（tab 到本面板，up/down）",
	NotOnPath:          "不在这条路径上（%s）",
	TimeLeft:           "剩余 %s",
	TimeUp:             "时间到",
	SentToLesson:       "讲师为你打开了第 %d 课",
	LessonsLeftOut:     "%d 个课程文件未能加载（见 `lab list`）: %s",
	NoWorkerTo:         "没有可以%s的 worker（tab 到 Worker 面板，up/down 选择）",
	AlreadyState:       "%s 已经%s",
	NotPaused:          "%s %s，没有暂停：c 只让暂停的 worker 继续",
	Acting:             "%s %s...",
	StepIsRunning:      "有步骤正在运行；按键照常可用，enter 会等它结束",
	NothingToRun:       "只读课程：没有可运行的步骤",
	LessonComplete:     "本课完成：r 再运行一次",
	ChallengeNotPassed: "还没有通过：p 换一个程序，r 再运行一次",
	StepFailed:         "第 %d 步失败: %s",
}

// texts is every language's table.
var texts = map[string]*text{"en": &textEN, "zh": &textZH}

// textFor is the table of a language, English when there is none.
func textFor(lang string) *text {
	if t, ok := texts[lang]; ok {
		return t
	}
	return &textEN
}

// t is the screen's text in the current language.
func (c *common) t() *text { return textFor(c.lang) }

package main

import (
	"strings"

	"github.com/rmlab/lab/internal/catalog"
)

// The commands' own words, in every language they speak (--lang): what a
// learner meets before the screen opens. Usage and --help stay English
// (reference text); an error in Chinese points to them.
var (
	sayBadLang      = catalog.Add("--lang %q: use en or zh", "zh", "--lang %s：请用 en 或 zh")
	sayNameOne      = catalog.Add("name one lesson id or number (see `lab list`)", "zh", "请给出一个课程 id 或编号（见 `lab list`）")
	sayFlagsAfter   = catalog.Add("flags go after the command: `lab %s %s`", "zh", "参数要写在命令之后：`lab %s %s`")
	sayUnknownCmd   = catalog.Add("unknown command %q", "zh", "没有这个命令：%s")
	sayNoLesson     = catalog.Add("no lesson %q (see `lab list`, and `lab challenge list` for challenge-NAME)", "zh", "没有课程 %s（见 `lab list`；挑战见 `lab challenge list`，写作 challenge-NAME）")
	sayNoArgs       = catalog.Add("%s takes no arguments (got %s)%s", "zh", "%s 不接受参数（收到 %s）%s")
	sayOthersRun    = catalog.Add("the lessons that need it say so on the screen (lab doctor lists them); the others run", "zh", "需要它的课程会在屏幕上说明（lab doctor 会列出）；其余课程照常运行")
	sayInContainer  = catalog.Add("started %s in a container (removed when the lab exits)", "zh", "已在容器中启动 %s（实验室退出时删除）")
	sayUsagePointer = catalog.Add("see `%s --help` for its flags", "zh", "它的参数见 `%s --help`（英文）")
	sayCommandsList = catalog.Add("see `lab help` for the commands", "zh", "全部命令见 `lab help`（英文）")

	sayReplayWhat     = catalog.Add("name lesson ids, a lesson file, or --all", "zh", "请给出课程 id、一个课程文件，或 --all")
	sayReplayNoLesson = catalog.Add("no lesson %q (see `lab list`)", "zh", "没有课程 %s（见 `lab list`）")
	sayNoSubcommand   = catalog.Add("no subcommand %q; use list, contract, init, hint or run", "zh", "没有子命令 %s；可用 list、contract、init、hint 或 run")
	_                 = catalog.Add("no challenge %q; `lab challenge list` shows them: %s", "zh", "没有挑战 %s；`lab challenge list` 会列出它们：`%s`")

	sayMutantsDrawn    = catalog.Add("%d of %d mutants of %d lessons (--mutate %d --seed %d)", "zh", "从 %[3]d 课的 %[2]d 个变异体中抽取 %[1]d 个（--mutate %[4]d --seed %[5]d）")
	sayMutantsJudged   = catalog.Add("%d killed, %d survived, %d broken", "zh", "杀死 %d 个，存活 %d 个，损坏 %d 个")
	sayParallelN       = catalog.Add("--parallel N wants N ≥ 1 (1: one lesson after another)", "zh", "--parallel N 要求 N ≥ 1（1：一课接一课）")
	sayMutateN         = catalog.Add("--mutate N wants N ≥ 1 and prints its verdicts only (no --json, --junit or --transcript)", "zh", "--mutate N 要求 N ≥ 1，且只打印判定（不能与 --json、--junit 或 --transcript 同用）")
	sayKindNeedsMutate = catalog.Add("--kind chooses the kinds of --mutate's mutants; give --mutate N too", "zh", "--kind 选择 --mutate 的变异体种类；请同时给出 --mutate N")
	sayRepeatN         = catalog.Add("--repeat N wants N ≥ 1 and prints each lesson's failures only (no --mutate, --json, --junit or --transcript)", "zh", "--repeat N 要求 N ≥ 1，且只打印每课的失败次数（不能与 --mutate、--json、--junit 或 --transcript 同用）")
	sayNotLoaded       = catalog.Add("it may be in one of the files above that did not load", "zh", "它可能在上面没能加载的某个文件里")
	sayInitWhat        = catalog.Add("give a challenge and a folder: lab challenge init once --lang go ./once", "zh", "请给出一个挑战和一个目录：`lab challenge init once --lang go ./once`")
	sayProgramAfter    = catalog.Add("give your program after --, e.g.", "zh", "请在 -- 之后给出你的程序，例如：")
	sayRoomAs          = catalog.Add("--room and --as go together: the room's name and yours in it", "zh", "--room 和 --as 要一起用：房间名和你在房间里的名字")
	sayNotParticipant  = catalog.Add("not a participant's name: %s", "zh", "不是参与者的名字：%s")
	sayWorkshopDest    = catalog.Add("give NAME@HOST[:PORT], as you ssh to the workshop", "zh", "请写成 NAME@HOST[:PORT]，和你 ssh 到工作坊时一样")

	// The flag package's own errors.
	_ = catalog.Add("flag provided but not defined: %s", "zh", "没有这个参数：%s")
	_ = catalog.Add("invalid value %s for flag %s: %s", "zh", "参数 %[2]s 的值 %[1]s 无效：%[3]s")
	_ = catalog.Add("flag needs an argument: %s", "zh", "参数需要一个值：%s")
	_ = catalog.Add("invalid boolean value %s for %s: %s", "zh", "%[2]s 的布尔值 %[1]s 无效：%[3]s")
)

// langOf is the --lang the arguments name ("en" when none): the commands'
// errors are said in it from the first one, before flags parse.
func langOf(args []string) string {
	for i, a := range args {
		if a == "--" {
			break
		}
		switch {
		case a == "--lang" || a == "-lang":
			if i+1 < len(args) {
				return args[i+1]
			}
		case strings.HasPrefix(a, "--lang="), strings.HasPrefix(a, "-lang="):
			return a[strings.Index(a, "=")+1:]
		}
	}
	return "en"
}

// helpAsked reports whether args ask for a command's usage (-h, --help).
func helpAsked(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if a == "-h" || a == "--h" || a == "-help" || a == "--help" {
			return true
		}
	}
	return false
}

// What the commands say when a challenge, clean, replay, room or serve cannot go on.
var (
	_ = catalog.Add("could not keep how many hints you have seen in %s: %v", "zh", "没能把你看过的提示数保存到 %s：%s")
	_ = catalog.Add("the workshop's server runs the challenge and keeps its verdict; --room, --as, --schedule, --json, --history, --report and --shared-server are for a run on this machine",
		"zh", "挑战由工作坊的服务器运行并保存判定；--room、--as、--schedule、--json、--history、--report 和 --shared-server 只用于在本机上运行")
	_ = catalog.Add("could not keep the result in %s: %v", "zh", "没能把结果保存到 %s：%s")
	_ = catalog.Add("could not keep the verdict in %s: %v", "zh", "没能把判定保存到 %s：%s")
	_ = catalog.Add("%w (the room is on the workshop's MySQL: give its --mysql, as your instructor says)", "zh", "%s（房间在工作坊的 MySQL 上：按讲师说的给出它的 --mysql）")
	_ = catalog.Add("some things were left; each line above says why", "zh", "有些东西没能清理掉；上面每一行都说明了原因")
	_ = catalog.Add("the namespaces are found from their databases: %v", "zh", "命名空间要从它们的数据库里找：%s")
	_ = catalog.Add("--as-participant: %d lane(s) got no logins of their own (above)", "zh", "--as-participant：%s 个通道没有得到自己的登录账户（见上）")
	_ = catalog.Add("--strict: %d lesson(s) skipped checks, which counts as a failure here", "zh", "--strict：%s 个课程跳过了检查，在这里算作失败")
	_ = catalog.Add("--as-participant: the lab cannot make a participant's logins here:", "zh", "--as-participant：实验室在这里无法创建参与者的登录账户：")
	_ = catalog.Add("--as-participant: the logins of namespace %q are left (lab clean removes them): %v", "zh", "--as-participant：命名空间 %s 的登录账户还留着（lab clean 会删除它们）：%s")
	_ = catalog.Add("replay lane %s was not removed completely (`lab clean` with the replay's --namespace removes its lanes later):",
		"zh", "重放通道 %s 没有删除干净（之后用 `lab clean` 加上这次重放的 --namespace 可以删除它的通道）：")
	_ = catalog.Add("no such lesson; give a number or an id from `lab list`", "zh", "没有这个课程；请给出 `lab list` 里的编号或 id")
	_ = catalog.Add("name the room: lab room --room NAME (as lab serve --room NAME)", "zh", "请指定房间名：lab room --room NAME（和 lab serve --room NAME 一样）")
	_ = catalog.Add("--kind %q: use logins, refusals or commands", "zh", "--kind %s：请用 logins、refusals 或 commands")
	_ = catalog.Add("no way for participants to log in: give --password-file FILE (the workshop password), export %s=..., or give --participant-keys FILE",
		"zh", "参与者没法登录：请给出 --password-file FILE（工作坊密码）、export %s=...，或给出 --participant-keys FILE")
	_ = catalog.Add("how many labs MySQL can hold: %v", "zh", "MySQL 能容纳多少个实验室：%s")
	_ = catalog.Add("MySQL has no room for a participant (%s)", "zh", "MySQL 容纳不下一个参与者（%s）")
	_ = catalog.Add("fix: pick a free address with --listen HOST:PORT", "zh", "解决办法：用 --listen HOST:PORT 选一个空闲的地址")
	_ = catalog.Add("stopped: every session ended, told why, its workers gone", "zh", "已停止：每个会话都已结束并说明了原因，其工作进程都已退出")
	_ = catalog.Add("%s: its first line is empty", "zh", "%s：第一行是空的")
	_ = catalog.Add("not started as lab serve", "zh", "不是以 lab serve 启动的")
	_ = catalog.Add("give HOST:PORT, the address participants reach (%v)", "zh", "请给出 HOST:PORT，即参与者连接的地址（%s）")
	_ = catalog.Add("no state directory for the host key; give --host-key FILE:", "zh", "没有存放主机密钥的状态目录；请给出 --host-key FILE：")
	_ = catalog.Add("fix: give a file whose first line is the workshop password", "zh", "解决办法：给出一个第一行是工作坊密码的文件")
	_ = catalog.Add("the password stays readable in this process's /proc environ (%v); --password-file avoids it", "zh", "密码在本进程的 /proc environ 里仍然可读（%s）；用 --password-file 可以避免")
)

// The instructor's room command.
var _ = catalog.Add("no participant of that name in room %s (its participants: %s)", "zh", "房间 %s 里没有这个名字的参与者（它的参与者：%s）")
var _ = catalog.Add("none yet", "zh", "还没有")
var (
	_ = catalog.Add("the room %s is kept: some of its participants' things were left (above); run it again once they are free", "zh", "房间 %s 保留着：它的参与者还有东西没删掉（见上）；等它们空出来后再运行一次")
	_ = catalog.Add("removed the logins it made for %d participant(s) (MySQL users, vhosts)", "zh", "已删除它为 %s 位参与者创建的登录（MySQL 用户、vhost）")
	_ = catalog.Add("some participants' logins were left (lab room --drop, or lab clean, removes them): %v", "zh", "有些参与者的登录没删掉（lab room --drop 或 lab clean 会删除它们）：%s")
)
var (
	_ = catalog.Add("participants would share the lab's own logins, so any of them could read and change another's data:", "zh", "参与者将共用实验室自己的登录，任何人都能读取和修改别人的数据：")
	_ = catalog.Add("fix: give the lab's logins what the lines above ask, or --share-logins to accept it (a class that trusts itself)", "zh", "解决办法：按上面几行的要求给实验室的登录相应权限，或用 --share-logins 接受共用（彼此信任的班级）")
)

var _ = catalog.Add("--keep-logins needs --room NAME: the room keeps when the logins expire", "zh", "--keep-logins 需要 --room NAME：由房间记住这些登录何时过期")
var _ = catalog.Add("the logins a stopped class kept until %s: %v", "zh", "一个已停止的班级保留到 %s 的登录：%s")
var _ = catalog.Add("kept the logins of %d participant(s) until %s (the room's next lab serve removes them then; lab room --drop at once)", "zh", "保留了 %s 位参与者的登录，直到 %s（届时房间的下一个 lab serve 会删除它们；lab room --drop 会立即删除）")

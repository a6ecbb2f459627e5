package chaos

import "github.com/rmlab/lab/internal/catalog"

// What a fault found, as a lesson's chaos step shows it, in every language
// the screen speaks. (The checker matches the English: landed.)
var (
	sayDroppedConfirm  = catalog.Add("the next publisher confirm from the broker is dropped", "zh", "Broker 发出的下一个发布确认被丢弃")
	sayCutNext         = catalog.Add("the connection that sends the next %s is cut right after it", "zh", "发送下一个 %s 的连接在它之后立即被切断")
	sayNoSMS           = catalog.Add("no SMS provider in this run: nothing done", "zh", "这次运行没有短信服务：什么也没做")
	sayNoProcess       = catalog.Add("no such process", "zh", "没有这个进程")
	sayFinished        = catalog.Add("already finished", "zh", "已经结束")
	sayRestarting      = catalog.Add("not running (being restarted)", "zh", "没有在运行（正在重启）")
	sayKilledAt        = catalog.Add("SIGKILL pid %d (last point %s)", "zh", "SIGKILL pid %d（最后到达的点 %s）")
	sayNotRunning      = catalog.Add("not running: %s", "zh", "没有在运行：%s")
	sayDiedBefore      = catalog.Add("it died before reaching %s", "zh", "它在到达 %s 之前就死了")
	sayKilledWhere     = catalog.Add("did not reach %s within %s: SIGKILL pid %d where it was (last point %s)", "zh", "%[2]s 内没有到达 %[1]s：就地 SIGKILL pid %[3]s（最后到达的点 %[4]s）")
	sayKilledPaused    = catalog.Add("SIGKILL pid %d paused at %s", "zh", "SIGKILL pid %d，停在 %s")
	sayNotPaused       = catalog.Add("did not reach %s within %s: not paused", "zh", "%[2]s 内没有到达 %[1]s：没有暂停")
	sayNotResumed      = catalog.Add("paused at %s; not resumed: %v", "zh", "停在 %s；没有恢复：%s")
	sayResumed         = catalog.Add("paused at %s for %s (lease %ds), then resumed", "zh", "在 %s 暂停 %s（租约 %s 秒），然后恢复")
	sayNoOwnNode       = catalog.Add("no broker node of the lab's own: nothing restarted", "zh", "没有实验室自己的 Broker 节点：什么也没有重启")
	sayStillComing     = catalog.Add("the broker is still coming back from the previous restart: nothing done", "zh", "Broker 还在从上一次重启中恢复：什么也没做")
	sayInterruptedDown = catalog.Add("interrupted while the broker was down", "zh", "Broker 停机期间被中断")
	sayRestartFailed   = catalog.Add("killed; restart failed: %s", "zh", "已杀掉；重启失败：%s")
	sayBrokerBack      = catalog.Add("SIGKILL of the broker node, started again on its data, accepting connections after %.1fs", "zh", "SIGKILL 了 Broker 节点，在它的数据上重新启动，%s 秒后接受连接")
	sayNoSession       = catalog.Add("no session open on %s", "zh", "%s 上没有打开的会话")
	sayKillConn        = catalog.Add("KILL CONNECTION %d (one of %d sessions on %s)", "zh", "KILL CONNECTION %d（%[3]s 上 %[2]s 个会话之一）")
	sayVNoCategory     = catalog.Add("checker: %d of %d orders fell in no category (a bug of the lab's: report it)", "zh", "checker：%[2]s 个订单中有 %[1]s 个没有归入任何类别（这是实验室的 bug：请报告）")
	sayVAmount         = catalog.Add("amount: %d orders' accounts changed by what no number of applications of their amount gives (orders %v): add the amount, never set the balance", "zh", "amount：%d 个订单的账户变化量不是其金额的任何整数倍（订单 %s）：应加上金额，而不是直接设置余额")
	sayVLost           = catalog.Add("lost: %d committed orders were never applied (orders %v)", "zh", "lost：%d 个已提交的订单从未生效（订单 %s）")
	sayVTwice          = catalog.Add("twice: %d orders were applied more than once (orders %v)", "zh", "twice：%d 个订单生效了不止一次（订单 %s）")
	sayVStale          = catalog.Add("stale: %d orders ended in an older state than their newest event's (orders %v)", "zh", "stale：%d 个订单最终停在比最新事件更旧的状态（订单 %s）")
	sayVConflict       = catalog.Add("conflict: %d of %d orders had a repeat with another amount and no conflict was recorded in consumed_conflict (orders %v)", "zh", "conflict：%[2]s 个订单中有 %[1]s 个收到金额不同的重复消息，而 consumed_conflict 里没有记录冲突（订单 %[3]s）")
)

// A chaos run's errors and the fixes its lab.Errors give, in every language
// the commands speak.
var (
	_ = catalog.Add("the grader never runs a program with the lab's own login, which could write what it checks; give the lab's login CREATE USER and GRANT OPTION (GRANT CREATE USER ON *.* TO it WITH GRANT OPTION), or run on a server where it has them",
		"zh", "评分程序从不用实验室自己的登录账号运行程序，因为那个账号能写入它要检查的内容；请给实验室的登录账号 CREATE USER 和 GRANT OPTION 权限（GRANT CREATE USER ON *.* TO it WITH GRANT OPTION），或在它已有这些权限的服务器上运行")
	_ = catalog.Add("give the lab's RabbitMQ login the administrator tag, or leave out --management / --broker-control to run with the proxy's refusals only",
		"zh", "请给实验室的 RabbitMQ 登录账号加上 administrator 标签，或者去掉 --management / --broker-control，只用代理的拒绝来运行")
	_ = catalog.Add("--pipeline %s: no such pipeline; use one of %s", "zh", "--pipeline %s：没有这条流水线；请用其中之一：%s")
	_ = catalog.Add("own program: role %q; it takes the place of the consumer or the relay", "zh", "自己的程序：角色 %s 不对；它替代的是消费者或中继（consumer 或 relay）")
	_ = catalog.Add("own program: no command to run", "zh", "自己的程序：没有要运行的命令")
	_ = catalog.Add("--faults: sms-timeout and sms-error need an SMS provider, which only the challenges run", "zh", "--faults：sms-timeout 和 sms-error 需要短信服务，而只有挑战才会运行它")
	_ = catalog.Add("resend and conflict are every Nth order: N ≥ 1, or 0 for none", "zh", "resend 和 conflict 表示每第 N 个订单一次：N ≥ 1，或者 0 表示没有")
	_ = catalog.Add("--orders %d in --duration %s is over 2000 orders/s; give a longer duration", "zh", "--duration %[2]s 内 --orders %[1]s 超过了每秒 2000 个订单；请给更长的时长")
	_ = catalog.Add("--faults: %q is not a fault kind; use all, or some of %s", "zh", "--faults：%s 不是一种故障；请用 all，或从这些中选几个：%s")
	_ = catalog.Add("read the committed orders in %s: %w", "zh", "读取 %s 中已提交的订单：%s")
	_ = catalog.Add("read the accounts in %s: %w", "zh", "读取 %s 中的账户：%s")
	_ = catalog.Add("read the outbox's statuses in %s: %w", "zh", "读取 %s 中 outbox 的状态：%s")
	_ = catalog.Add("read the recorded conflicts in %s.consumed_conflict: %w", "zh", "读取 %s.consumed_conflict 中记录的冲突：%s")
	_ = catalog.Add("read the orders' states in %s.order_view: %w", "zh", "读取 %s.order_view 中订单的状态：%s")
	_ = catalog.Add("read the lab's audit %s.lab_applied: %w", "zh", "读取实验室的审计表 %s.lab_applied：%s")
	_ = catalog.Add("read the lab's audit %s.lab_view: %w", "zh", "读取实验室的审计表 %s.lab_view：%s")
	_ = catalog.Add("look again for the effect of an ack of %s: %w", "zh", "再次查找 %s 的 ack 所产生的效果：%s")
	_ = catalog.Add("read the lab's audit %s.lab_conflict: %w", "zh", "读取实验室的审计表 %s.lab_conflict：%s")
	_ = catalog.Add("read the lab's audit %s.lab_status: %w", "zh", "读取实验室的审计表 %s.lab_status：%s")
	_ = catalog.Add("read the events in %s.outbox_event: %w", "zh", "读取 %s.outbox_event 中的事件：%s")
	_ = catalog.Add("give every account its starting balance: %w", "zh", "给每个账户设置初始余额：%s")
	_ = catalog.Add("add the lab's audit to %s: %s: %w", "zh", "给 %s 加上实验室的审计：%s：%s")
	_ = catalog.Add("chaos run interrupted %.1fs into the schedule: %w", "zh", "混沌运行在计划开始 %s 秒后被中断：%s")
	_ = catalog.Add("chaos run interrupted while draining: %w", "zh", "混沌运行在排空期间被中断：%s")
	_ = catalog.Add("start a broker node of the lab's own for restart-broker: %w (leave restart-broker out of --faults to run on %s)",
		"zh", "为 restart-broker 启动实验室自己的 Broker 节点：%s（把 restart-broker 从 --faults 中去掉，就能在 %s 上运行）")
	_ = catalog.Add("chaos: no binary to start the workers with", "zh", "chaos：没有用来启动工作进程的二进制文件")
	_ = catalog.Add("create the outbox database: %w", "zh", "创建 outbox 数据库：%s")
)

var _ = catalog.Add("the lab cannot give your program a MySQL user of its own (%s: %v)", "zh", "实验室无法给你的程序一个它自己的 MySQL 用户（%s：%s）")

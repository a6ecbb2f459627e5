package labs

import "github.com/rmlab/lab/internal/catalog"

// What loading and checking the lessons writes, in every language the
// screen speaks (internal/catalog).
var (
	_ = catalog.Add("%s: step %d (%s) differs from the English one at %s (%s): %s; a translation changes only prose, titles, label= and prompt=",
		"zh", "%s：第 %d 步（%s）与 %s 处的英文步骤（%s）不同：%s；翻译只改正文、标题、label= 和 prompt=")
	_ = catalog.Add("read lessons from %s: %w",
		"zh", "无法读取 %s 中的课程：%s")
	_ = catalog.Add("cannot read lesson file",
		"zh", "无法读取课程文件")
	_ = catalog.Add("%s: when=%s names no choice step of this lesson%s",
		"zh", "%s：when=%s 指的不是本课的任何 choice 步骤%s")
	_ = catalog.Add("%s: when=%s: %q is not an option of choice %s%s; its options are %s",
		"zh", "%s：when=%s：%s 不是 choice %s 的选项%s；它的选项有 %s")
	_ = catalog.Add("attribute with no name near %q",
		"zh", "%s 附近有一个没有名字的属性")
	_ = catalog.Add("unclosed quote in %s=",
		"zh", "%s= 里的引号没有闭合")
)

// What lab check says of a lesson file's mistakes (load.go, check.go,
// check_topology.go), in every language the screen speaks.
var (
	_ = catalog.Add("table: database %s is not one of the article's%s; use %s",
		"zh", "table：数据库 %s 不是文章用到的数据库%s；请用 %s")
	_ = catalog.Add("table: %s has no table %s%s; its tables are %s (and those the lesson's own sql steps create)",
		"zh", "table：%s 没有表 %s%s；它的表有 %s（以及课程自己的 sql 步骤创建的表）")
	_ = catalog.Add("%s is not a variable: write ${choice-name} (lowercase) or ${name:SECONDS}",
		"zh", "%s 不是变量：请写 ${choice-name}（小写）或 ${name:SECONDS}")
	_ = catalog.Add("${%s} would be sent as it is: %s%s; the names it can use are %s",
		"zh", "${%s} 会被原样发送：%s%s；它能用的名字有 %s")
	_ = catalog.Add("spawn pause-at=%s: %s never pauses there%s; its points are %s (lab worker %s --help)",
		"zh", "spawn pause-at=%s：%s 从不在那里暂停%s；它的点有 %s（见 lab worker %s --help）")
	_ = catalog.Add("%s worker=%s: no earlier spawn step starts a worker named %s%s; %s",
		"zh", "%s worker=%s：之前没有哪个 spawn 步骤启动工作进程 %s%s；%s")
	_ = catalog.Add("wait until=%s: %s (a %s) never reaches that point%s; its points are %s, or until=exit",
		"zh", "wait until=%s：%s（一个 %s）永远到不了那个点%s；它的点有 %s，或者 until=exit")
	_ = catalog.Add("%s gone: no declare step before this one declares queue %s%s, so its absence after the restart would show nothing; declare it first",
		"zh", "%s gone：这一步之前没有 declare 步骤声明队列 %s%s，所以重启后它不在了也说明不了什么；请先声明它")
	_ = catalog.Add("lesson %s has no ledger %s: every lesson that runs ends with the unsafe and the safe ledger, side by side",
		"zh", "课程 %s 没有 ledger %s：每个会运行的课程都以并排的 unsafe 和 safe 两个 ledger 收尾")
	_ = catalog.Add("every predict of lesson %s has its answer as the first option: put some answers elsewhere, or the order gives them away",
		"zh", "课程 %s 的每个 predict 都把答案放在第一个选项：请把一些答案放到别的位置，否则顺序会泄露答案")
	_ = catalog.Add("broker-restart is skipped where the lab has no node of its own and no broker control: add needs: own-broker|broker-control (or the one the lesson must have) to the lesson block, so lab doctor and replay say so instead of passing",
		"zh", "实验室没有自己的节点、也没有 Broker 控制时，broker-restart 会被跳过：请在 lesson 块里加上 needs: own-broker|broker-control（或课程必须有的那一个），这样 lab doctor 和 replay 会如实说明，而不是算作通过")
	_ = catalog.Add("nodes steps other than start are skipped where the lab cannot start nodes of its own: add needs: own-broker to the lesson block",
		"zh", "实验室无法启动自己的节点时，start 以外的 nodes 步骤会被跳过：请在 lesson 块里加上 needs: own-broker")
	_ = catalog.Add("expect of=%q: no step leaves an outcome named so; write of=\"sql NAME\", \"worker NAME\", \"publish CHANNEL\", \"consume CHANNEL\", …",
		"zh", "expect of=%s：没有哪个步骤留下这个名字的结果；请写 of=\"sql NAME\"、\"worker NAME\"、\"publish CHANNEL\"、\"consume CHANNEL\"……")
	_ = catalog.Add("%s %s %s=%s: no declare step declares exchange %s%s, and %s; add `exchange %s type=fanout` (and a queue bound to it) to a declare step",
		"zh", "%s %s %s=%s：没有 declare 步骤声明交换机 %s%s，而%s；请在某个 declare 步骤里加上 `exchange %s type=fanout`（以及绑定到它的一个队列）")
	_ = catalog.Add("%s: queue %s is a %s queue, which never sets %s (%s), %s; declare the queue type=quorum, or check another header",
		"zh", "%s：队列 %s 是 %s 队列，它从不设置 %s（%s），%s；请把队列声明为 type=quorum，或者检查别的消息头")
	_ = catalog.Add("spawn: %s is the step's own attribute: write spawn %s=… on the fence line",
		"zh", "spawn：%s 是这个步骤自己的属性：请在围栏行上写 spawn %s=…")
	_ = catalog.Add("spawn program=%s: %s is not one of its flags%s; its flags are --%s (lab worker %s --help)",
		"zh", "spawn program=%s：%s 不是它的参数%s；它的参数有 --%s（见 lab worker %s --help）")
	_ = catalog.Add("bind %s %s: no declare step declares exchange %s%s, so this bind fails with 404 NOT_FOUND; add `exchange %s type=…` to a declare step before it",
		"zh", "bind %s %s：没有 declare 步骤声明交换机 %s%s，所以这个 bind 会以 404 NOT_FOUND 失败；请在它之前的某个 declare 步骤里加上 `exchange %s type=…`")
	_ = catalog.Add("a fence opens here inside the %s block that starts at line %d: that block's closing fence is missing, so it swallowed what follows — close it before this line",
		"zh", "这里在从第 %[2]s 行开始的 %[1]s 块里又开了一个围栏：那个块缺少结束围栏，所以吞掉了后面的内容——请在这一行之前把它闭合")
	_ = catalog.Add("a second lesson block; a lesson has one — delete this one or move it to its own file",
		"zh", "第二个 lesson 块；一个课程只有一个——请删掉这个，或把它移到单独的文件里")
	_ = catalog.Add("no ```lesson block (it gives id:, number: and part:); a Markdown file without one is not a lesson and is skipped in a folder",
		"zh", "没有 ```lesson 块（它给出 id:、number: 和 part:）；没有它的 Markdown 文件不是课程，在文件夹里会被跳过")
	_ = catalog.Add("no title: start the lesson with a # heading",
		"zh", "没有标题：请用一个 # 标题开始课程")
	_ = catalog.Add("lesson %s has no steps; mark it explain-only: true if nothing runs",
		"zh", "课程 %s 没有步骤；如果什么都不运行，请标上 explain-only: true")
	_ = catalog.Add("lesson block line %q: write key: value",
		"zh", "lesson 块的行 %s：请写成 key: value")
	_ = catalog.Add("id %q: use lowercase words joined by -",
		"zh", "id %s：请用以 - 连接的小写单词")
	_ = catalog.Add("number %q is not a positive whole number",
		"zh", "number %s 不是正整数")
	_ = catalog.Add("part %q: use idempotency, broker or outbox%s",
		"zh", "part %s：请用 idempotency、broker 或 outbox%s")
	_ = catalog.Add("needs: %s is not a capability%s; use %s, or A|B when either will do (lab doctor lists what the servers offer)",
		"zh", "needs：%s 不是一项能力%s；请用 %s，两者皆可时写 A|B（lab doctor 会列出服务器提供的能力）")
	_ = catalog.Add("unknown lesson key %q%s; the keys are %s",
		"zh", "未知的 lesson 键 %s%s；可用的键有 %s")
	_ = catalog.Add("lesson block has no id:",
		"zh", "lesson 块没有 id:")
	_ = catalog.Add("lesson block has no number:",
		"zh", "lesson 块没有 number:")
	_ = catalog.Add("lesson block has no part:",
		"zh", "lesson 块没有 part:")

	// The parts those sentences take as arguments, said in Chinese too.
	_ = catalog.Add("no choice of this lesson is named %s",
		"zh", "本课没有名为 %s 的 choice")
	_ = catalog.Add("this lesson has no choice step",
		"zh", "本课没有 choice 步骤")
	_ = catalog.Add("no spawn step before it starts a worker",
		"zh", "它之前没有 spawn 步骤启动工作进程")
	_ = catalog.Add("the workers spawned before it are %s",
		"zh", "它之前启动的工作进程有 %s")
	_ = catalog.Add("variant=unsafe and a ledger variant=safe",
		"zh", "variant=unsafe，也没有 ledger variant=safe")
	_ = catalog.Add("the broker drops a dead-lettered message silently when its exchange does not exist",
		"zh", "死信交换机不存在时，Broker 会悄悄丢掉死信消息")
	_ = catalog.Add("the broker drops an unroutable message silently when the alternate exchange does not exist",
		"zh", "备用交换机不存在时，Broker 会悄悄丢掉无法路由的消息")
	_ = catalog.Add("quorum queues count returned deliveries in x-delivery-count",
		"zh", "仲裁队列在 x-delivery-count 里计数退回的投递")
	_ = catalog.Add("RabbitMQ 4.x's quorum queues count every delivery in x-acquired-count",
		"zh", "RabbitMQ 4.x 的仲裁队列在 x-acquired-count 里计数每一次投递")
	_ = catalog.Add("so this can never pass",
		"zh", "所以这一条永远不会通过")
	_ = catalog.Add("so `not header` always passes and shows nothing",
		"zh", "所以 `not header` 总是通过，什么也说明不了")
)

// lab check's checks that cannot fail.
var (
	_ = catalog.Add("ledger %s reads nothing from a server (every field is a number or a constant SELECT), so it holds whatever the servers answer: give applied: (or committed:, delivered:) a SELECT, redis:, broker: or outbox: read",
		"zh", "ledger %s 没有从任何服务器读取数据（每个字段都是数字或常量 SELECT），所以无论服务器怎么回答它都成立：请给 applied:（或 committed:、delivered:）一个 SELECT、redis:、broker: 或 outbox: 读取")
	_ = catalog.Add("expect checks the sql step at line %d, which reads nothing from a server (a constant SELECT), so it holds whatever the server answers: select from a table the lesson changes",
		"zh", "expect 检查的是第 %s 行的 sql 步骤，它没有从服务器读取任何东西（常量 SELECT），所以无论服务器怎么回答它都成立：请从课程会改动的表里查询")
)

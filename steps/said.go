// Code below is the lab's own sentences a step writes, in every language the
// screen speaks (internal/catalog). The run formats the English; the screen
// and a Chinese replay say the same line in Chinese.

package steps

import "github.com/rmlab/lab/internal/catalog"

var (
	sayOffsetNeeds      = catalog.Add("%s: offset= reads a stream, which a consumer reads with prefetch=N (RabbitMQ refuses an unlimited one) and mode=deliver", "zh", "%s：offset= 用于读取流，而读取流的消费者需要 prefetch=N（RabbitMQ 拒绝不限数量的预取）且 mode=deliver")
	sayOffsetConsuming  = catalog.Add("channel %s already consumes %s: offset= says where a consumer starts; name a new channel= for a consumer that starts elsewhere", "zh", "通道 %s 已经在消费 %s：offset= 说明的是消费者从哪里开始；要从别处开始的消费者，请另起一个 channel=")
	sayOffsetValue      = catalog.Add("write first, last, next, an offset (a whole number) or -D (what was written in the last D, e.g. -1h)", "zh", "请写 first、last、next、一个偏移量（整数），或 -D（最近 D 时间内写入的，例如 -1h）")
	sayOnErrorValue     = catalog.Add("%s: on-error=%s: write on-error=continue (the client carries on after the error) or on-error=stop", "zh", "%s：on-error=%s：请写 on-error=continue（客户端在出错后继续）或 on-error=stop")
	sayOnErrorNeedsCode = catalog.Add("%s: on-error=continue names no error to carry on after; add error=CODE (error=1062)", "zh", "%s：on-error=continue 没有指明要在哪个错误之后继续；请加上 error=CODE（如 error=1062）")
	sayPaused           = catalog.Add("%s is paused at %s (pid %d)",
		"zh", "%s 停在 %s（pid %d）")
	sayExited = catalog.Add("%s exited with code %d",
		"zh", "%s 已退出，退出码 %d")
	sayStateAt = catalog.Add("%s is %s, last point %s",
		"zh", "%s 的状态是 %s，最后到达的点是 %s")
	sayExitNot = catalog.Add("%s exited with code %d, not %d (the lesson says exit=%d when a worker is meant to fail)",
		"zh", "%s 的退出码是 %d，不是 %d（工作进程本该失败时，课程会写 exit=%d）")
	sayAlreadyKilled = catalog.Add("%s was already killed (SIGKILL at %s, by hand): the lesson goes on from there",
		"zh", "%s 已经被杀掉（在 %s 手动 SIGKILL）：课程从那里继续")
	sayKilled = catalog.Add("SIGKILL %s (pid %d) at %s: the process is gone",
		"zh", "SIGKILL %s（pid %d，停在 %s）：进程已经不在了")
	sayGoesOn = catalog.Add("%s goes on from %s",
		"zh", "%s 从 %s 继续运行")
	sayStopped = catalog.Add("%s stopped (%s, code %s)",
		"zh", "%s 已停止（%s，退出码 %s）")
	sayStarted = catalog.Add("started %s (pid %d)",
		"zh", "已启动 %s（pid %d）")
	sayNoWorker = catalog.Add("no worker named %s was started in this lesson",
		"zh", "本课没有启动名为 %s 的工作进程")
	sayReopened = catalog.Add("channel %s had closed (%s); opened a new channel %s, whose delivery tags start again at 1",
		"zh", "通道 %s 之前已关闭（%s）；已新开通道 %s，它的投递标签重新从 1 开始")
	sayClosedByLab = catalog.Add("channel %s was closed by the lab",
		"zh", "通道 %s 已被实验室关闭")
	sayClosedByBroker = catalog.Add("channel %s closed by the broker: %s",
		"zh", "通道 %s 被 Broker 关闭：%s")
	sayEndedWithConn = catalog.Add("channel %s ended with its connection: %s",
		"zh", "通道 %s 随它的连接一起结束：%s")
	sayQueueReached = catalog.Add("%s %s reached %d after %s",
		"zh", "%[1]s 的 %[2]s 在 %[4]s 后达到 %[3]s")
	saySwallowConfirm = catalog.Add("%s: will swallow the broker's confirm (basic.ack/nack) of publish seq %d on each confirm-mode channel; the publish itself passes",
		"zh", "%s：将吞掉 Broker 对每个确认模式通道上发布序号 %d 的确认（basic.ack/nack）；发布本身照常通过")
	saySwallowReturn = catalog.Add("%s: will swallow basic.return #%d of each connection, with its content",
		"zh", "%s：将吞掉每个连接的第 %d 个 basic.return 及其内容")
	sayHoldFrames = catalog.Add("%s: holds every frame %s in each direction",
		"zh", "%s：两个方向的每一帧都延迟 %s")
	sayCutAfterNext = catalog.Add("%s: will close the connection right after forwarding the next %s (what follows it on the wire never arrives)",
		"zh", "%s：转发下一个 %s 之后立即关闭连接（线路上跟在它后面的内容永远不会到达）")
	sayProxyTotals = catalog.Add("totals: %d publish(es), %d confirm(s) forwarded, %d dropped, %d return(s) forwarded, %d dropped",
		"zh", "合计：发布 %d 次；转发确认 %d 个，丢弃 %d 个；转发 return %d 个，丢弃 %d 个")
	sayBrokerRestarted = catalog.Add("the broker restarted in %.1fs; every AMQP connection to it was closed",
		"zh", "Broker 用 %ss 重启完毕；连到它的每个 AMQP 连接都已关闭")
	sayQueuesBack = catalog.Add("the queues were back %.1fs after it accepted connections (quorum queues and streams recover in the background)",
		"zh", "它开始接受连接 %ss 后，队列都回来了（仲裁队列和流在后台恢复）")
	sayAfterRestart = catalog.Add("after the restart %s is %s, expected %s",
		"zh", "重启后 %s 是 %s，预期是 %s")
	sayGoneProvesNothing = catalog.Add("%s did not exist before the restart, so its being gone after proves nothing (a misspelt queue, or one never declared?)",
		"zh", "%s 在重启前就不存在，所以重启后不见了什么也证明不了（队列名写错了，还是从没声明过？）")
	sayCleanShutdown = catalog.Add("%s: a clean shutdown (%.1fs)",
		"zh", "%s：正常关闭（%ss）")
	saySameData = catalog.Add("%s on the same data, until it accepts AMQP connections (%.1fs)",
		"zh", "%s：在同一份数据上启动，直到它接受 AMQP 连接（%ss）")
	sayArrivedWithin = catalog.Add("%d of %d deliveries arrived within %s",
		"zh", "在 %[3]s 内收到 %[2]s 条投递中的 %[1]s 条")
	sayArrivedWithinWhy = catalog.Add("%d of %d deliveries arrived within %s (write up-to when fewer may come, or a longer timeout=)",
		"zh", "在 %[3]s 内收到 %[2]s 条投递中的 %[1]s 条（可能来得更少时写 up-to，或者写更长的 timeout=）")
	sayChannelClosed = catalog.Add("channel %s closed: %s",
		"zh", "通道 %s 已关闭：%s")
	sayBrokerAnswered = catalog.Add("wanted error %s, but the broker answered %s",
		"zh", "预期错误 %s，但 Broker 的回答是 %s")
	sayNoPrefetch = catalog.Add("channel %s stays subscribed to %s with no prefetch cap: the broker pushes it every ready message, unacked, until its acks or its close; a worker consuming %s meanwhile gets none (prefetch=N caps it)",
		"zh", "通道 %s 继续订阅 %s，且没有预取上限：Broker 把每条就绪消息都推给它，处于未确认状态，直到它确认或关闭；这期间消费 %s 的工作进程什么也收不到（prefetch=N 可以设上限）")
	sayGaveUp = catalog.Add("%s on channel %s: %v (the lab gave up on channel %s; a later step naming it opens a new one)",
		"zh", "通道 %[2]s 上的 %[1]s：%[3]s（实验室放弃了通道 %[4]s；之后提到它的步骤会新开一个）")
	sayOnChannel = catalog.Add("%s on channel %s: %v",
		"zh", "通道 %[2]s 上的 %[1]s：%[3]s")
	sayRefusedAfter = catalog.Add("← %s refused after %s: %s",
		"zh", "← %s 在 %s 后被拒绝：%s")
	sayNoConfirmWithin = catalog.Add("… no confirm for publish seq %d within %s: the publisher cannot tell whether the broker stored the message",
		"zh", "… 发布序号 %d 在 %s 内没有等到确认：发布方无法判断 Broker 是否存下了这条消息")
	sayAcked = catalog.Add("← basic.ack for publish seq %d after %s: the broker took responsibility for the message",
		"zh", "← basic.ack（发布序号 %d，%s 后）：Broker 已为这条消息负责")
	sayNoConfirmClosed = catalog.Add("← no confirm: channel %s closed first (%s); the library reports ack=false, which means unknown, not lost",
		"zh", "← 没有确认：通道 %s 先关闭了（%s）；客户端库报告 ack=false，意思是结果未知，不是丢失")
	sayNacked = catalog.Add("← basic.nack for publish seq %d after %s: the broker could not take the message",
		"zh", "← basic.nack（发布序号 %d，%s 后）：Broker 没能接收这条消息")
	sayReturned = catalog.Add("← basic.return %d %s (exchange %q, routing key %q, message-id %s): no queue took the message",
		"zh", "← basic.return %d %s（交换机 %s，路由键 %s，message-id %s）：没有队列接收这条消息")
	sayLibraryNil = catalog.Add("→ %s: the library returned nil (it does not wait for the broker)",
		"zh", "→ %s：客户端库返回了 nil（它不等 Broker 的回应）")
	sayPutsBack = catalog.Add("the broker puts back what channel %s held unacked: %d deliver%s, to come again with redelivered=true",
		"zh", "Broker 放回通道 %[1]s 持有的未确认投递：%[2]s 条，会带着 redelivered=true 再来")
	sayAcceptedQos = catalog.Add("the broker accepted it (a basic.qos round trip came back): %s tag%s %s",
		"zh", "Broker 接受了它（一次 basic.qos 往返已经回来）：%[1]s 标签 %[3]s")
	sayClosedPutsBack = catalog.Add("closed; the broker puts back the %d deliver%s held unacked there, to come again with redelivered=true",
		"zh", "已关闭；Broker 放回那里持有的 %[1]s 条未确认投递，会带着 redelivered=true 再来")
	sayChannelErr = catalog.Add("channel %s: %v",
		"zh", "通道 %s：%s")
	sayClusterOfOwn = catalog.Add("a cluster of %d RabbitMQ nodes of the lab's own",
		"zh", "实验室自己的 %d 个 RabbitMQ 节点组成的集群")
	sayNodesLeft = catalog.Add("the nodes the previous option left: every node running, its queues and exchanges deleted (RabbitMQ %s; %s)",
		"zh", "上一个选项留下的节点：每个节点都在运行，队列和交换机已删除（RabbitMQ %s；%s）")
	sayNodeKill = catalog.Add("%s (node %d)",
		"zh", "%s（节点 %d）")
	sayNodeStop = catalog.Add("%s (node %d): a clean shutdown",
		"zh", "%s（节点 %d）：正常关闭")
	sayNodeStart = catalog.Add("%s (node %d) on its data",
		"zh", "%s（节点 %d），在它自己的数据上启动")
	sayStillWaiting = catalog.Add("… still waiting after %s (blocked inside the server)",
		"zh", "… 已等待 %s 仍未完成（在服务器内阻塞）")
	sayStmtWaiting = catalog.Add("statement still waiting after %s (a lock held by another session?)",
		"zh", "语句等待 %s 后仍未完成（是否有其他会话持有锁？）")
	sayWantedErrGot = catalog.Add("wanted error %s, got %s",
		"zh", "预期错误 %s，实际是 %s")
	sayWantedErrNone = catalog.Add("wanted error %s, but every statement succeeded",
		"zh", "预期错误 %s，但每条语句都成功了")
	saySessWaiting = catalog.Add("session %s still waiting after %s",
		"zh", "会话 %s 等待 %s 后仍未完成")
	saySessUnexpected = catalog.Add("session %s: unexpected %s",
		"zh", "会话 %s：意外的 %s")
	sayAwaitOne = catalog.Add("[%s] %s (waited %s)",
		"zh", "[%s] %s（等待 %s）")
	sayDeletedKeys = catalog.Add("deleted %d Redis key(s) matching %s",
		"zh", "删除了 %d 个匹配 %s 的 Redis 键")
	sayChaosLine = catalog.Add("%d orders committed: applied once %d, lost %d, twice %d; duplicates absorbed %d; %d faults; commit→applied p99 %.0f ms: %s",
		"zh", "提交了 %d 个订单：生效一次 %d，丢失 %d，生效两次 %d；吸收的重复 %d；故障 %d 次；提交到生效 p99 %s ms：%s")
	sayChallengeLine = catalog.Add("seed %d: %d orders committed, applied once %d, lost %d, twice %d",
		"zh", "种子 %d：提交了 %d 个订单，生效一次 %d，丢失 %d，生效两次 %d")
	sayWaited = catalog.Add("waited %s",
		"zh", "等待了 %s")
	sayPublishedAgoLine = catalog.Add("    published %s ago (its timestamp property)",
		"zh", "    %s 前发布（依据它的 timestamp 属性）")
	sayNodesStartedLine = catalog.Add("%s started in %s; this lesson's AMQP steps use it from here on",
		"zh", "%s 已在 %s 内启动；本课的 AMQP 步骤从这里起都用它")
	sayNodesBootedLine = catalog.Add("%s booted in %s, in the background since the lesson began; ready %s after this step began; this lesson's AMQP steps use it from here on",
		"zh", "%s 从课程开始起在后台启动，用了 %s；这一步开始 %s 后就绪；本课的 AMQP 步骤从这里起都用它")
	sayNodesReusedLine = catalog.Add("%s from the previous option, ready again in %s (no new boot); this lesson's AMQP steps use it from here on",
		"zh", "%s 沿用上一个选项的，%s 后再次就绪（没有重新启动）；本课的 AMQP 步骤从这里起都用它")
	sayNodesAnsweredLine = catalog.Add("the cluster %s names, driven with %s, answered in %s; this lesson's AMQP steps use it from here on, and the nodes it leaves down are started again when it ends",
		"zh", "%s 指定的集群（用 %s 控制）在 %s 内应答；本课的 AMQP 步骤从这里起都用它，课程结束时会重新启动它留下的停机节点")
	sayNodeOfOwn = catalog.Add("a RabbitMQ node of the lab's own",
		"zh", "实验室自己的一个 RabbitMQ 节点")
	sayNoOwnNodes = catalog.Add("the lab cannot start RabbitMQ nodes of its own here (%s); the lesson goes on against %s",
		"zh", "实验室在这里无法启动自己的 RabbitMQ 节点（%s）；课程改用 %s 继续")
	sayNodesNotReused = catalog.Add("the previous option's nodes could not be used again (%s), so new ones booted",
		"zh", "上一个选项的节点无法再用（%s），所以启动了新的")
	sayAwaitAllLine = catalog.Add("[%s] waited %s in all",
		"zh", "[%s] 共等待 %s")
	sayChaosFaultLine = catalog.Add("%6.2fs %s: %s",
		"zh", "%ss %s：%s")
	sayChallengePassedLine = catalog.Add("passed under seed %d; the next run uses seed %d",
		"zh", "种子 %d 下通过；下一次运行使用种子 %d")
	sayEveryInvariant = catalog.Add("every invariant held",
		"zh", "每条不变式都成立")
	sayNoLabObjects = catalog.Add("no lab exchanges or queues to delete",
		"zh", "没有要删除的实验室交换机或队列")
	sayAtBrokerNow = catalog.Add("at the broker now (%s)",
		"zh", "Broker 此刻的状态（%s）")
	sayNoFaults = catalog.Add("%s: no faults; every frame passes unchanged",
		"zh", "%s：没有故障；每一帧原样通过")
	sayRefusesAllowed = catalog.Add("this broker refuses it (allowed: brokers differ here); nothing after it in this step was declared",
		"zh", "这个 Broker 拒绝了它（允许：各版本 Broker 在这里不同）；这一步中它之后的内容都没有声明")
	sayChanClosedBroker = catalog.Add("channel closed by the broker: %s",
		"zh", "通道被 Broker 关闭：%s")
	sayUnexpected = catalog.Add("unexpected %s",
		"zh", "意外的 %s")
	sayWantedErrDeclare = catalog.Add("wanted error %s, but every declare succeeded",
		"zh", "预期错误 %s，但每个声明都成功了")
	sayWantedErrStmt = catalog.Add("wanted error %s, but the statement succeeded",
		"zh", "预期错误 %s，但语句成功了")
	sayStillNot = catalog.Add("%s %s is %d, still not %d after %s",
		"zh", "%[1]s 的 %[2]s 为 %[3]s，%[5]s 后仍不是 %[4]s")
	sayRecreated = catalog.Add("recreated %s from sql/%s",
		"zh", "已按 sql/%[2]s 重建 %[1]s")
	sayWaitExit = catalog.Add("waited %s for %s to exit: it is %s, last point %s",
		"zh", "等待 %[2]s 退出 %[1]s 仍未等到：它的状态是 %[3]s，最后到达的点是 %[4]s")
	sayWaitExitErr = catalog.Add("waited %s for %s to exit: it is %s, last point %s (%s)",
		"zh", "等待 %[2]s 退出 %[1]s 仍未等到：它的状态是 %[3]s，最后到达的点是 %[4]s（%[5]s）")
	sayWaitReach = catalog.Add("waited %s for %s to reach %s: it is %s, last point %s",
		"zh", "等待 %[2]s 到达 %[3]s %[1]s 仍未等到：它的状态是 %[4]s，最后到达的点是 %[5]s")
	sayWaitReachErr = catalog.Add("waited %s for %s to reach %s: it is %s, last point %s (%s)",
		"zh", "等待 %[2]s 到达 %[3]s %[1]s 仍未等到：它的状态是 %[4]s，最后到达的点是 %[5]s（%[6]s）")
	sayPassMark = catalog.Add("✓ %s",
		"zh", "✓ 通过：%s")
	sayFailMark = catalog.Add("✗ %s: %s",
		"zh", "✗ 未通过：%s：%s")
	sayOkMark = catalog.Add("ok %s",
		"zh", "ok 通过：%s")
	sayHolds = catalog.Add("it holds (in %q)",
		"zh", "它成立（在 %s 中）")
	sayNotIn = catalog.Add("not in %q",
		"zh", "不在 %s 中")
	sayNoRows = catalog.Add("no rows",
		"zh", "没有行")
	sayOnlyRows = catalog.Add("only %d rows",
		"zh", "只有 %d 行")
	sayNotComplete = catalog.Add("the statement did not complete: %s",
		"zh", "语句没有完成：%s")
	sayNotWaiting = catalog.Add("not waiting: %s",
		"zh", "没有在等待：%s")
	sayStillWaitingNoErr = catalog.Add("still waiting, no error yet",
		"zh", "仍在等待，还没有错误")
	// errNoAnswer as a consume step wraps it (%w within D).
	_ = catalog.Add("no answer within %s",
		"zh", "%s 内没有应答")
	sayNoMySQL = catalog.Add("no MySQL connection",
		"zh", "没有 MySQL 连接")
	sayNoDatabase = catalog.Add("database not created yet (run the lesson's reset step)",
		"zh", "数据库还没有创建（先运行课程的重置步骤）")
	sayNoTable = catalog.Add("table not created yet (a step of the lesson creates it)",
		"zh", "表还没有创建（课程的某一步会创建它）")
	sayChallengeFailed = catalog.Add("the challenge failed: %s",
		"zh", "挑战没有通过：%s")
	sayInterrupted = catalog.Add("interrupted",
		"zh", "已中断")
	sayMayNotRestart = catalog.Add("the lab may not restart this broker: it has no node of its own here (%s), and without --broker-control rabbitmqctl (or LAB_BROKER_CONTROL=rabbitmqctl) on the machine whose local RabbitMQ node it may stop and start it restarts none it did not start",
		"zh", "实验室不能重启这个 Broker：它在这里没有自己的节点（%s）；没有 --broker-control rabbitmqctl（或 LAB_BROKER_CONTROL=rabbitmqctl）时，它不会重启任何不是它启动的节点（只有在允许它停止和启动本机 RabbitMQ 节点的机器上才可以）")
	sayNotOnPath = catalog.Add("not on this path (%s)",
		"zh", "不在这条路径上（%s）")
	sayWire = catalog.Add("wire %s ch%d %s",
		"zh", "线路 %s ch%d %s")
	sayWireNote = catalog.Add("wire %s ch%d %s (%s)",
		"zh", "线路 %s ch%d %s（%s）")
	sayShown = catalog.Add("sql/%s (shown, not run):",
		"zh", "sql/%s（只展示，不运行）：")
	sayPublishSeq = catalog.Add("%s (publish seq %d on channel %s)",
		"zh", "%s（通道 %[3]s 上的发布序号 %[2]s）")
	saySentArrow = catalog.Add("→ %s",
		"zh", "→ %s")
	sayNoConfirmMode = catalog.Add("no confirm mode: Publish returned nil once the frames were written to the socket; nothing more comes back on success",
		"zh", "没有确认模式：帧一写进套接字，Publish 就返回 nil；成功时不会再有任何回应")
	sayNotifyClose = catalog.Add("NotifyClose +%s: %s",
		"zh", "NotifyClose +%s：%s")
	sayAckDeletes = catalog.Add("acknowledged: the broker deletes",
		"zh", "已确认：Broker 删除")
	sayRequeuePutsBack = catalog.Add("rejected with requeue: the broker puts back (past a quorum queue's delivery limit: dead-letters)",
		"zh", "带 requeue 拒绝：Broker 放回（超过仲裁队列的投递上限时：死信）")
	sayRejectDrops = catalog.Add("rejected without requeue: the broker drops (or dead-letters)",
		"zh", "不带 requeue 拒绝：Broker 丢弃（或转为死信）")
	sayNothingHeld = catalog.Add("closed; nothing was held unacked there",
		"zh", "已关闭；那里没有未确认的投递")
	sayClosedByLabShort = catalog.Add("closed by the lab",
		"zh", "被实验室关闭")
	sayServerOption = catalog.Add("%s → %s (this server, %s %s): %s",
		"zh", "%s → %s（本服务器，%s %s）：%s")
)

// What checking a lesson's steps and reading their figures writes: a
// lesson's mistakes, as lab check and the screen say them.
var (
	// Suggest's hint, as a message ends with it.
	_ = catalog.Add(" (did you mean %s?)",
		"zh", "（是不是想写 %s？）")
	_ = catalog.Add("channel %s runs on the %s connection, not %s; name another channel",
		"zh", "通道 %s 运行在 %s 连接上，不是 %s；请换一个通道名")
	_ = catalog.Add("%s: %s=%q: write a publish or return number from 1",
		"zh", "%s：%s=%s：请写一个从 1 起的发布序号或 return 序号")
	_ = catalog.Add("%s: cut-after=%s: use basic.publish or basic.ack",
		"zh", "%s：cut-after=%s：请用 basic.publish 或 basic.ack")
	_ = catalog.Add("%s: proxy step sets nothing: use drop-confirm=N, drop-return=N, delay=D, cut-after=METHOD, reset or show",
		"zh", "%s：proxy 步骤什么也没有设置：请用 drop-confirm=N、drop-return=N、delay=D、cut-after=METHOD、reset 或 show")
	_ = catalog.Add("until=%q: %s wants a number",
		"zh", "until=%s：%s 需要一个数字")
	_ = catalog.Add("%s: queues step names no queue (one per line)",
		"zh", "%s：queues 步骤没有列出任何队列（每行一个）")
	_ = catalog.Add("header %s: the lab reads %s and the application's own headers%s",
		"zh", "header %s：实验室读取 %s 以及应用自己的消息头%s")
	_ = catalog.Add("the last delivery has no %s",
		"zh", "最后一条投递没有 %s")
	_ = catalog.Add("%s: %s=%q is not a whole number",
		"zh", "%s：%s=%s 不是整数")
	_ = catalog.Add("%s: mode=%s: use deliver or get",
		"zh", "%s：mode=%s：请用 deliver 或 get")
	_ = catalog.Add("broker: %q: use ready, unacked, consumers, messages, unavailable or holds",
		"zh", "broker：%s：请用 ready、unacked、consumers、messages、unavailable 或 holds")
	_ = catalog.Add("amqp: %q: use acked, nacked, timeouts, unknown, returned, delivered, redelivered, wire publishes or wire dropped-confirms",
		"zh", "amqp：%s：请用 acked、nacked、timeouts、unknown、returned、delivered、redelivered、wire publishes 或 wire dropped-confirms")
	_ = catalog.Add("broker: queue %s does not exist (misspelt, or not declared yet?)",
		"zh", "broker：队列 %s 不存在（名字写错了，还是还没有声明？）")
	_ = catalog.Add("broker: queue %s is unavailable (%s) and the lab never read it while it was available: nothing to count",
		"zh", "broker：队列 %s 不可用（%s），而实验室在它可用时从没读过它：没有可数的")
	_ = catalog.Add("%s: declare line %q: start with exchange, queue or bind",
		"zh", "%s：declare 行 %s：请以 exchange、queue 或 bind 开头")
	_ = catalog.Add("%s: declare step declares nothing",
		"zh", "%s：declare 步骤什么也没有声明")
	_ = catalog.Add("%s: declare takes error=CODE (must fail) or allow-error=CODE (may fail), not both",
		"zh", "%s：declare 接受 error=CODE（必须失败）或 allow-error=CODE（可以失败），不能两个都写")
	_ = catalog.Add("%s: via=%s: use direct or proxy",
		"zh", "%s：via=%s：请用 direct 或 proxy")
	_ = catalog.Add("%s: publish takes queue= (default exchange) or exchange= and key=, not both",
		"zh", "%s：publish 接受 queue=（默认交换机）或 exchange= 加 key=，不能两者都写")
	_ = catalog.Add("type=%s: an exchange is direct, fanout, topic or headers",
		"zh", "type=%s：交换机的类型是 direct、fanout、topic 或 headers")
	_ = catalog.Add("type=%s: a queue is classic, quorum or stream",
		"zh", "type=%s：队列的类型是 classic、quorum 或 stream")
	_ = catalog.Add("%q: a bind line takes key=K only",
		"zh", "%s：bind 行只接受 key=K")
	_ = catalog.Add("%q is not understood%s; %s lines take type=, durable|transient and %s",
		"zh", "无法理解 %s%s；%s 行接受 type=、durable|transient 以及 %s")
	_ = catalog.Add("%s needs a value (%s)",
		"zh", "%s 需要一个值（%s）")
	_ = catalog.Add("%s: close needs channel=NAME or connection=direct|proxy",
		"zh", "%s：close 需要 channel=NAME 或 connection=direct|proxy")
	_ = catalog.Add("%s: tag=%q: write a delivery tag number or last",
		"zh", "%s：tag=%s：请写一个投递标签号，或者 last")
	_ = catalog.Add("chaos: %q: write chaos: FIGURE PIPELINE (FIGURE: committed, applied, once, lost, twice, absorbed, published)",
		"zh", "chaos：%s：请写成 chaos: FIGURE PIPELINE（FIGURE：committed、applied、once、lost、twice、absorbed、published）")
	_ = catalog.Add("chaos: no chaos step of pipeline %s has run in this lesson",
		"zh", "chaos：本课还没有运行过流水线 %s 的 chaos 步骤")
	_ = catalog.Add("chaos: %q: FIGURE is one of committed, applied, once, lost, twice, absorbed, published",
		"zh", "chaos：%s：FIGURE 只能是 committed、applied、once、lost、twice、absorbed、published 之一")
	_ = catalog.Add("%s=%q: write a whole number ≥ 1",
		"zh", "%s=%s：请写一个 ≥ 1 的整数")
	_ = catalog.Add("seed=%q: write a whole number",
		"zh", "seed=%s：请写一个整数")
	_ = catalog.Add("%s=%q: write a duration such as 8s",
		"zh", "%s=%s：请写一个时长，例如 8s")
	_ = catalog.Add("%s: server step: fact=%q is not one the lab reads%s; it reads %s",
		"zh", "%s：server 步骤：fact=%s 不是实验室读取的事实%s；它读取的是 %s")
	_ = catalog.Add("%s: server step %s: its options are on and off (the fact's value), one per line as name: what this server does",
		"zh", "%s：server 步骤 %s：它的选项是 on 和 off（事实的值），每行一个，写成 name: 这台服务器做什么")
	_ = catalog.Add("%s: choice %s needs at least two options, one per line as name: description",
		"zh", "%s：choice %s 至少需要两个选项，每行一个，写成 name: description")
	_ = catalog.Add("%s: choice option %q: names are single words, unique",
		"zh", "%s：choice 选项 %s：名字必须是单个词，且互不相同")
	_ = catalog.Add("%s: expect step has no expectation",
		"zh", "%s：expect 步骤没有任何期望")
	_ = catalog.Add("%q is not a number",
		"zh", "%s 不是数字")
	_ = catalog.Add("%s takes nothing after it",
		"zh", "%s 后面不能再写东西")
	_ = catalog.Add("write confirm ack|nack|timeout|unknown|none",
		"zh", "请写 confirm ack|nack|timeout|unknown|none")
	_ = catalog.Add("%q is not a duration",
		"zh", "%s 不是时长")
	_ = catalog.Add("every statement takes %s or more, so this comes out the same whatever the server did; name a time the answer could miss",
		"zh", "每条语句都至少耗时 %s，所以无论服务器做了什么结果都一样；请写一个回答可能达不到的时长")
	_ = catalog.Add("%s needs an argument",
		"zh", "%s 需要一个参数")
	_ = catalog.Add("%s:%d: unknown expectation %q%s; known: %s (any of them after not)",
		"zh", "%s:%d：未知的期望 %s%s；已知的有：%s（每个都可以写在 not 之后）")
	_ = catalog.Add("%s:%d: not row: row lines match rows in order; check a row's absence with not contains TEXT",
		"zh", "%s:%d：not row：row 行按顺序匹配各行；要检查某一行不存在，请用 not contains TEXT")
	_ = catalog.Add("a %s step reports no fact %q%s; its facts are %s",
		"zh", "%s 步骤不报告事实 %s%s；它的事实有 %s")
	_ = catalog.Add("a %s step names no queue: write %s QUEUE N",
		"zh", "%s 步骤没有指定队列：请写 %s QUEUE N")
	_ = catalog.Add("%s reads %s, which a %s step does not report; after %s, check %s",
		"zh", "%s 读取的是 %s，而 %s 步骤不报告它；在 %s 之后请检查 %s")
	_ = catalog.Add("not an object",
		"zh", "不是 JSON 对象")
	_ = catalog.Add("provider: %q: use sent, replayed or requests",
		"zh", "provider：%s：请用 sent、replayed 或 requests")
	_ = catalog.Add("no SMS provider is listening in this lesson yet: start one with a spawn step (program=provider) and wait until=listening",
		"zh", "本课还没有短信服务在监听：先用 spawn 步骤（program=provider）启动一个，再 wait until=listening")
	_ = catalog.Add("no services to read %q from (see lab doctor)",
		"zh", "没有可以读取 %s 的服务（见 lab doctor）")
	_ = catalog.Add("cannot read %q: write a number, a SELECT, or a source prefix (%s)",
		"zh", "无法读取 %s：请写一个数字、一条 SELECT，或一个来源前缀（%s）")
	_ = catalog.Add("%s: ledger needs variant=unsafe or variant=safe",
		"zh", "%s：ledger 需要 variant=unsafe 或 variant=safe")
	_ = catalog.Add("%s: ledger has no expect=: write the verdict it must show, expect=lost, duplicated or \"applied once\" (a ledger without one never fails)",
		"zh", "%s：ledger 没有 expect=：请写出它必须给出的判定，expect=lost、duplicated 或 \"applied once\"（没有判定的 ledger 永远不会失败）")
	_ = catalog.Add("%s: ledger expect=%q: use lost, duplicated, waiting, unavailable or \"applied once\"",
		"zh", "%s：ledger expect=%s：请用 lost、duplicated、waiting、unavailable 或 \"applied once\"")
	_ = catalog.Add("%s: ledger variant=safe expect=%q: the safe variant is the one that applies each message once: expect=\"applied once\"",
		"zh", "%s：ledger variant=safe expect=%s：safe 变体正是让每条消息只生效一次的那个：请写 expect=\"applied once\"")
	_ = catalog.Add("%s: ledger needs at least intended: and applied:",
		"zh", "%s：ledger 至少需要 intended: 和 applied:")
	_ = catalog.Add("%s: nodes step takes one of start=1|3, kill=N, stop=N, restart=N (N may list nodes: restart=1,2)",
		"zh", "%s：nodes 步骤接受 start=1|3、kill=N、stop=N、restart=N 中的一个（N 可以列出多个节点：restart=1,2）")
	_ = catalog.Add("%s: nodes start=%d: the lab starts 1 node or a cluster of 3",
		"zh", "%s：nodes start=%d：实验室只启动 1 个节点，或 3 个节点的集群")
	_ = catalog.Add("nodes %s=%q: write a node number, or numbers joined by commas",
		"zh", "nodes %s=%s：请写一个节点编号，或用逗号连接的几个编号")
	_ = catalog.Add("nodes %s=%d: nodes are numbered 1 to 3",
		"zh", "nodes %s=%d：节点编号是 1 到 3")
	_ = catalog.Add("nodes %s=: write a node number",
		"zh", "nodes %s=：请写一个节点编号")
	_ = catalog.Add("%s: show step takes file= and no body",
		"zh", "%s：show 步骤只接受 file=，不能有正文")
	_ = catalog.Add("%s: predict %s needs at least two options, one per line as name: description",
		"zh", "%s：predict %s 至少需要两个选项，每行一个，写成 name: description")
	_ = catalog.Add("%s: predict option %q: names are single words, unique",
		"zh", "%s：predict 选项 %s：名字必须是单个词，且互不相同")
	_ = catalog.Add("%s: predict %s: answer=%s is not one of its options",
		"zh", "%s：predict %s：answer=%s 不是它的选项之一")
	_ = catalog.Add("Redis is not connected",
		"zh", "Redis 没有连接")
	_ = catalog.Add("%s returned %v, not a number",
		"zh", "%s 返回了 %s，不是数字")
	_ = catalog.Add("%s: redis error=%q: write the error's first word as Redis sends it (WRONGTYPE, ERR, NOSCRIPT, …)",
		"zh", "%s：redis error=%s：请按 Redis 发来的原样写错误的第一个词（WRONGTYPE、ERR、NOSCRIPT……）")
	_ = catalog.Add("%s: redis step has no command",
		"zh", "%s：redis 步骤没有命令")
	_ = catalog.Add("%s: reset db=%s is not one of the article's databases%s; use blog_idempotency_lab and/or blog_outbox_lab",
		"zh", "%s：reset db=%s 不是文章用到的数据库%s；请用 blog_idempotency_lab 和/或 blog_outbox_lab")
	_ = catalog.Add("%s: %s=%q is not a duration (write 5s or 500ms)",
		"zh", "%s：%s=%s 不是时长（请写 5s 或 500ms 这样的值）")
	_ = catalog.Add("%s: %s step has unknown attribute %q%s; allowed: %s",
		"zh", "%s：%s 步骤有未知的属性 %s%s；允许的有：%s")
	_ = catalog.Add("session %s: USE %s: %w (did the lesson's reset step run?)",
		"zh", "会话 %s：USE %s：%s（课程的重置步骤运行过了吗？）")
	_ = catalog.Add("%s: await takes session=NAME or sessions=A,B, not both",
		"zh", "%s：await 接受 session=NAME 或 sessions=A,B，不能两个都写")
	_ = catalog.Add("%s: await sessions=%s: name two or more (one is session=NAME)",
		"zh", "%s：await sessions=%s：请写两个或更多（只有一个时写 session=NAME）")
	_ = catalog.Add("%s: await sessions=%s names %s twice: name each session once",
		"zh", "%s：await sessions=%s 把 %s 写了两次：每个会话只写一次")
	_ = catalog.Add("%s: sql step has both file=%s and a body; use one",
		"zh", "%s：sql 步骤同时有 file=%s 和正文；只用其中一个")
	_ = catalog.Add("%s: sql step has no statement",
		"zh", "%s：sql 步骤没有语句")
	_ = catalog.Add("%s: %s step db=%s is not one of the article's databases%s; use %s",
		"zh", "%s：%s 步骤的 db=%s 不是文章用到的数据库%s；请用 %s")
	_ = catalog.Add("%s: wait exit=%s checks an exit code: it goes with until=exit",
		"zh", "%s：wait exit=%s 检查的是退出码：它要和 until=exit 一起用")
	_ = catalog.Add("%s: wait exit=%q: write the exit code the worker must end with, 0 to 255",
		"zh", "%s：wait exit=%s：请写工作进程结束时必须给出的退出码，0 到 255")
	_ = catalog.Add("%s: spawn program=%s is not a worker program%s; use one of %s",
		"zh", "%s：spawn program=%s 不是工作进程程序%s；请用其中之一：%s")
	_ = catalog.Add("%s: spawn pause-at=%s: %s never pauses there%s; its points are %s (lab worker %s --help)",
		"zh", "%s：spawn pause-at=%s：%s 从不在那里暂停%s；它的暂停点有 %s（lab worker %s --help）")
)

package chaos

import "github.com/rmlab/lab/internal/catalog"

// An explanation of an order that went wrong (explain.go), in every
// language the lab speaks: its verdict, its likely cause and its story.
var (
	_ = catalog.Add("order %d — %s: %s", "zh", "订单 %s — %s：%s")
	_ = catalog.Add("%7.2fs  %s", "zh", "%s 秒  %s")

	_ = catalog.Add("applied twice", "zh", "生效了两次")
	_ = catalog.Add("lost", "zh", "丢失")
	_ = catalog.Add("left stale", "zh", "留下了旧版本")
	_ = catalog.Add("never sent", "zh", "从未发出")
	_ = catalog.Add("conflict not recorded", "zh", "冲突没有记录")

	_ = catalog.Add("committed by the producer (%s)", "zh", "生产者已提交（%s）")
	_ = catalog.Add("published by the lab's %s as %s", "zh", "实验室的 %s 以 %s 发布")
	_ = catalog.Add("applied by the lab's %s (%s)", "zh", "实验室的 %s 使其生效（%s）")
	_ = catalog.Add("recognised as a duplicate by the lab's %s (%s)", "zh", "实验室的 %s 认出这是重复消息（%s）")
	_ = catalog.Add("%s published %s; the connection was cut before the broker got it", "zh", "%s 发布了 %s；Broker 收到之前连接被切断")
	_ = catalog.Add("%s published %s (no confirm mode: it cannot know whether the broker got it)", "zh", "%s 发布了 %s（没有开启确认模式：它无法知道 Broker 是否收到）")
	_ = catalog.Add("%s published %s", "zh", "%s 发布了 %s")
	_ = catalog.Add("the broker confirmed %s, but the confirm was cut before %s read it", "zh", "Broker 确认了 %s，但确认在 %s 读到之前被切断")
	_ = catalog.Add("the broker confirmed %s to %s", "zh", "Broker 向 %[2]s 确认了 %[1]s")
	_ = catalog.Add("the broker refused %s (nack) to %s", "zh", "Broker 向 %[2]s 拒绝了 %[1]s（nack）")
	_ = catalog.Add("redelivered to %s (%s)", "zh", "重新投递给 %s（%s）")
	_ = catalog.Add("delivered to %s (%s)", "zh", "投递给 %s（%s）")
	_ = catalog.Add("%s acked %s; the ack was cut before the broker got it", "zh", "%s ack 了 %s；Broker 收到之前 ack 被切断")
	_ = catalog.Add("%s acked %s", "zh", "%s ack 了 %s")
	_ = catalog.Add("%s nacked %s", "zh", "%s nack 了 %s")
	_ = catalog.Add("%s rejected %s", "zh", "%s reject 了 %s")
	_ = catalog.Add("the SMS provider %s", "zh", "短信服务 %s")
	_ = catalog.Add("the SMS provider: %s", "zh", "短信服务：%s")
	_ = catalog.Add("applied: its account %+d, committed", "zh", "生效：账户变化 %s，已提交")
	_ = catalog.Add("%s went %s → %s (committed)", "zh", "%s 从 %s 变为 %s（已提交）")
	_ = catalog.Add("fault %s on %s: %s", "zh", "故障 %s 作用于 %s：%s")
	_ = catalog.Add("fault %s at %s on %s: %s", "zh", "故障 %[1]s 在 %[2]s 处作用于 %[3]s：%[4]s")
	_ = catalog.Add("%s started again (%s)", "zh", "%s 重新启动（%s）")
	_ = catalog.Add("%s ended: %s", "zh", "%s 结束：%s")

	_ = catalog.Add("an SMS went out without an Idempotency-Key, and another attempt (a redelivery, or a retry after a lost answer) sent one again: send every attempt for an order under one key, its business key, and the provider sends once",
		"zh", "有一条短信没有带 Idempotency-Key 就发出了，另一次尝试（一次重投，或在应答丢失后的重试）又发了一次：一个订单的每次尝试都用同一个键（它的业务键）发送，短信服务就只发一次")
	_ = catalog.Add("its SMS went out under %d keys (%s): the key must be the same for every attempt of one order — its business key, not the message id or a fresh one",
		"zh", "它的短信以 %s 个不同的键（%s）发出：同一订单的每次尝试必须用同一个键——它的业务键，而不是消息 id 或一个新生成的键")
	_ = catalog.Add("your consumer acked it before the provider had sent its SMS, and died or gave up in between: ack only once the provider answered",
		"zh", "你的消费者在短信服务发出短信之前就 ack 了它，随后在中间死掉或放弃了：只在短信服务应答之后才 ack")
	_ = catalog.Add("no SMS went out for it: a send that failed (a timeout, a 503) must be tried again, under the same key — the provider may have sent it already",
		"zh", "它的短信一条也没发出：失败的发送（超时、503）必须重试，并用同一个键——短信服务可能已经发过了")
	_ = catalog.Add("a repeat of its business key with another amount was applied too: compare a repeat with the operation you stored, record a conflict in consumed_conflict and apply nothing",
		"zh", "同一业务键、金额不同的重复消息也生效了：把重复消息与你存下的操作比较，在 consumed_conflict 中记录冲突，并且什么也不生效")
	_ = catalog.Add("the same business key came again under a new message id (a re-send) and was applied again: a mark keyed by the message id cannot see that; key it by the business key",
		"zh", "同一业务键以新的消息 id 再次到来（重新发送），又生效了一次：以消息 id 为键的标记看不出这一点；请以业务键为键")
	_ = catalog.Add("the lab's relay published it again (a confirm it never got, or a claim that ran out), under the same message id, and your consumer applied both copies: remember each message you applied, in the transaction of its effect, and skip one already there",
		"zh", "实验室的中继以同一个消息 id 再次发布了它（一个没收到的确认，或一次过期的认领），你的消费者让两份都生效了：在产生效果的同一个事务中记下每条已生效的消息，并跳过已经记下的")
	_ = catalog.Add("your consumer applied it, the broker never got the ack, and the redelivery was applied again: record the operation in the same transaction as the effect and skip a delivery whose operation is already there",
		"zh", "你的消费者让它生效了，Broker 却没收到 ack，重投又生效了一次：在与效果相同的事务中记录这个操作，并跳过操作已经存在的投递")
	_ = catalog.Add("its effect committed %d times; a consumer must recognise a message it has already applied, whichever copy of it comes",
		"zh", "它的效果提交了 %s 次；无论来的是哪一份，消费者都必须认出自己已经处理过的消息")
	_ = catalog.Add("your consumer consumes with auto-ack (no-ack): the broker forgets each message as it sends it, so one in the consumer's hands when it dies is gone; ack after the commit",
		"zh", "你的消费者用自动确认（no-ack）消费：Broker 发出每条消息就把它忘掉，所以消费者死掉时手里的那条就没了；请在提交之后 ack")
	_ = catalog.Add("your consumer acked it before its transaction committed, and it died in between: ack only after the commit",
		"zh", "你的消费者在事务提交之前就 ack 了它，并在中间死掉了：只在提交之后 ack")
	_ = catalog.Add("it was never delivered to your consumer: did it consume from LAB_QUEUE, and did it stay up? Its last lines are below",
		"zh", "它从未投递给你的消费者：它是否从 LAB_QUEUE 消费，并且一直在运行？它最后的输出在下面")
	_ = catalog.Add("it was delivered but its effect never committed, and nothing delivered it again",
		"zh", "它已投递，但效果从未提交，也没有任何东西再次投递它")
	_ = catalog.Add("an older event (version 1) was applied after the newer one — it came later, redelivered, republished or on the other copy — and overwrote it: apply an event only over an older version (UPDATE … WHERE order_id=? AND version < ?)",
		"zh", "一个较旧的事件（版本 1）在较新的事件之后生效——它来得更晚：重投、重新发布或在另一份副本上——并覆盖了新值：只在旧版本之上应用事件（UPDATE … WHERE order_id=? AND version < ?）")
	_ = catalog.Add("no event of it was ever applied to order_view", "zh", "它的事件没有一个应用到 order_view")
	_ = catalog.Add("one of its two events carried another amount under the same business key, and no row of that key is in consumed_conflict",
		"zh", "它的两个事件之一在同一业务键下带着不同的金额，而 consumed_conflict 中没有这个键的行")
	_ = catalog.Add("your relay published it, the broker never got it, and your relay marked it SENT anyway: mark it SENT only after the broker's confirm, and publish again when no confirm comes",
		"zh", "你的中继发布了它，Broker 没有收到，你的中继却照样把它标为 SENT：只在收到 Broker 的确认之后才标记 SENT，没有确认就再发布一次")
	_ = catalog.Add("your relay marked it SENT, but no publish of it ever reached the broker: a publish call that returns proves nothing without the broker's confirm; mark it SENT only after the confirm",
		"zh", "你的中继把它标为 SENT，但它的发布没有一次到达 Broker：没有 Broker 的确认，发布调用返回了也不证明什么；只在确认之后标记 SENT")
	_ = catalog.Add("your relay claimed it (SENDING) and died before the broker had it, and nothing took the claim back: give a claim a lease (lease_token, locked_until) and let a relay take SENDING events whose lease has run out",
		"zh", "你的中继认领了它（SENDING），在 Broker 收到之前就死了，也没有任何东西收回这个认领：给认领一个租约（lease_token、locked_until），并让中继接手租约已过期的 SENDING 事件")
	_ = catalog.Add("it was never applied; its outbox status is %s", "zh", "它从未生效；它在 outbox 中的状态是 %s")
	_ = catalog.Add("your relay published it under %d message ids (%s): a republish must carry the event id as its message id, or no consumer can tell it is the same event",
		"zh", "你的中继以 %s 个消息 id（%s）发布了它：重新发布必须以事件 id 作为消息 id，否则没有消费者能看出这是同一个事件")
	_ = catalog.Add("it was published more than once and applied more than once: is the message id the event id?",
		"zh", "它被发布了不止一次，也生效了不止一次：消息 id 是事件 id 吗？")
	_ = catalog.Add("it was SENT, then a copy of your relay set it SENDING again: two relays took the same event with nothing to keep them apart; claim it with a token of your own, under FOR UPDATE SKIP LOCKED, and mark only your own claim",
		"zh", "它已经是 SENT，随后你的中继的一个副本又把它设回 SENDING：两个中继拿到了同一个事件，没有任何东西把它们分开；用 FOR UPDATE SKIP LOCKED 加上你自己的令牌认领它，并只标记你自己的认领")
	_ = catalog.Add("it is still %s after the drain: a relay claimed it and died or stalled, and nothing takes a claim back once its lease has run out",
		"zh", "排空之后它仍是 %s：某个中继认领了它，然后死掉或卡住了，而租约过期之后没有任何东西收回这个认领")
)

// A run's setup, faults and notes, as its report shows them.
var (
	_ = catalog.Add("!%7.2fs  %s", "zh", "!%s 秒  %s")
	_ = catalog.Add("%s at a random moment", "zh", "%s（在随机时刻）")
	_ = catalog.Add("MySQL user %s (%s), from %s: %s on %s only", "zh", "MySQL 用户 %s（%s），来自 %s：只能访问 %[5]s 上的 %[4]s")
	_ = catalog.Add("RabbitMQ user %s (through %s): configure %q, write %q, read %q on vhost %s",
		"zh", "RabbitMQ 用户 %s（经由 %s）：在 vhost %[6]s 上 configure %[3]s、write %[4]s、read %[5]s")
	_ = catalog.Add("SIGKILL pid %d of %s: %s", "zh", "SIGKILL %[2]s 的 pid %[1]s：%[3]s")
	_ = catalog.Add("on the run's side: %d broker connection(s) cut, %d MySQL session(s) ended", "zh", "运行这一侧：切断了 %s 个 Broker 连接，结束了 %s 个 MySQL 会话")
	_ = catalog.Add("%s: %s; it had exited on its own by then", "zh", "%s：%s；那时它已经自己退出了")
	_ = catalog.Add("its ack was cut before the broker got it", "zh", "它的 ack 在 Broker 收到之前被切断")
	_ = catalog.Add("its ack reached the broker and it was stopped at once", "zh", "它的 ack 到达了 Broker，它随即被停住")
	_ = catalog.Add("its publish was cut before the broker got it", "zh", "它的发布在 Broker 收到之前被切断")
	_ = catalog.Add("the broker's confirm to it was cut before it read it", "zh", "Broker 给它的确认在它读到之前被切断")
	_ = catalog.Add("%s's connection was cut at its %s, which the broker never got", "zh", "%s 的连接在它的 %s 处被切断，Broker 从未收到")
	_ = catalog.Add("not running: %s was not up within the window", "zh", "没有在运行：%s 在时间窗口内没有起来")
	_ = catalog.Add("no moment: another fault held %s's proxy", "zh", "没有时机：另一个故障占着 %s 的代理")
	_ = catalog.Add("no %s from %s within the window: nothing cut", "zh", "时间窗口内 %[2]s 没有 %[1]s：什么也没切断")
	_ = catalog.Add("exited, code %d: %s", "zh", "已退出，退出码 %s：%s")
	_ = catalog.Add("killed, code %d: %s", "zh", "被杀掉，退出码 %s：%s")
	_ = catalog.Add("exited, code %d at %q: %s", "zh", "已退出，退出码 %s，停在 %s：%s")
	_ = catalog.Add("killed, code %d at %q: %s", "zh", "被杀掉，退出码 %s，停在 %s：%s")
	_ = catalog.Add("killed ×%d", "zh", "被杀掉 ×%s")
	_ = catalog.Add("exited with code %d ×%d", "zh", "以退出码 %s 退出 ×%s")

	_ = catalog.Add("MySQL: a server of the lab's own for this run, %s %s at %s, whose administrator's password only the lab holds: the evidence your program is graded on is out of its reach",
		"zh", "MySQL：本次运行使用实验室自己的服务器，%s %s，地址 %s，它的管理员密码只有实验室知道：给你的程序评分所依据的证据不在它能触及的范围内")
	_ = catalog.Add("RabbitMQ: your program logs in as the lab does (%s); its proxy refuses queue.purge, queue.delete and exchange.delete",
		"zh", "RabbitMQ：你的程序与实验室用同一个登录（%s）；它的代理拒绝 queue.purge、queue.delete 和 exchange.delete")
	_ = catalog.Add("no management API answers and the lab may not run rabbitmqctl here (--broker-control rabbitmqctl)",
		"zh", "没有应答的管理 API，实验室在这里也不能运行 rabbitmqctl（--broker-control rabbitmqctl）")
	_ = catalog.Add("no management API answers, and rabbitmqctl reaches a local node only", "zh", "没有应答的管理 API，而 rabbitmqctl 只能控制本机节点")
	_ = catalog.Add("the management API's user %s has no administrator tag and the lab may not run rabbitmqctl here (--broker-control rabbitmqctl)",
		"zh", "管理 API 的用户 %s 没有 administrator 标签，实验室在这里也不能运行 rabbitmqctl（--broker-control rabbitmqctl）")
	_ = catalog.Add("your program's logins are removed", "zh", "你的程序的登录已删除")
	_ = catalog.Add("left behind: %s (lab clean removes it)", "zh", "遗留：%s（lab clean 会删除它）")
	_ = catalog.Add("restart-broker left out: the lab cannot start a broker node of its own here (%s), and it never restarts one it did not start",
		"zh", "不做 restart-broker：实验室在这里无法启动自己的 Broker 节点（%s），而它从不重启不是自己启动的节点")
	_ = catalog.Add("nothing moved for %s after the schedule (%d events NEW or SENDING, %d messages in the queue); checked as it was",
		"zh", "故障计划结束后 %s 内没有任何进展（%s 个事件处于 NEW 或 SENDING，队列中 %s 条消息）；按当时的状态检查")
	_ = catalog.Add("the pipeline had not drained %s after the schedule; checked as it was", "zh", "故障计划结束 %s 后流水线仍未排空；按当时的状态检查")
	_ = catalog.Add("the run's evidence was kept on %s (--shared-server), where any administrator's login of that server could have rewritten it",
		"zh", "本次运行的证据存放在 %s（--shared-server），那台服务器的任何管理员登录都可能改写它")
	_ = catalog.Add("the lab could not start a MySQL server of its own for this run (%v), so the evidence was kept on %s, where any administrator's login of that server (root with no password, on most machines) could have rewritten it: install mariadb-server or mysql-server (or set LAB_MYSQLD) for a verdict",
		"zh", "实验室无法为本次运行启动自己的 MySQL 服务器（%s），所以证据存放在 %s，那台服务器的任何管理员登录（在多数机器上是没有密码的 root）都可能改写它：要得到判定，请安装 mariadb-server 或 mysql-server（或设置 LAB_MYSQLD）")
)

package main

import "github.com/rmlab/lab/internal/catalog"

// A chaos run's report (lab challenge run, lab chaos) in every language the
// lab speaks: each line the commands print to stdout (--json stays as it
// is).
var (
	_ = catalog.Add("challenge %d. %s (%s): your program as the %s, %d copies: %s", "zh", "挑战 %s. %s（%s）：你的程序担任 %s，%s 个副本：%s")
	_ = catalog.Add("it runs as %s", "zh", "它以 %s 的身份运行")
	_ = catalog.Add("passed %s under seed %d. Try another seed: --seed %d", "zh", "%s 在种子 %s 下通过。再换一个种子试试：--seed %s")
	_ = catalog.Add("unproven: %s under seed %d broke no rule the lab saw, but %s", "zh", "未证明：%s 在种子 %s 下没有违反实验室看到的任何规则，但 %s")
	_ = catalog.Add("the verdict is in %s", "zh", "判定已记入 %s")
	_ = catalog.Add("%s (started %d times)", "zh", "%s（启动了 %s 次）")
	_ = catalog.Add("%s; its lives ended: %s", "zh", "%s；它每次的结束：%s")
	_ = catalog.Add("its lives ended: %s", "zh", "它每次的结束：%s")
	_ = catalog.Add("%s; it wrote nothing", "zh", "%s；它什么也没有输出")
	_ = catalog.Add("%s; its last lines:", "zh", "%s；它最后的输出：")
	_ = catalog.Add("why:", "zh", "原因：")
	_ = catalog.Add("wrote %s", "zh", "已写入 %s")
	_ = catalog.Add("run it:  lab challenge run %s --seed 1 -- %s", "zh", "运行它：  lab challenge run %s --seed 1 -- %s")
	_ = catalog.Add("hint %d of %d: %s", "zh", "提示 %s/%s：%s")
	_ = catalog.Add("that is every hint; the reference solutions are in the lab's source: %s", "zh", "提示已经全部给出；参考答案在实验室的源码里：%s")

	_ = catalog.Add("chaos: seed %d, pipeline %s, %d orders over %s, %d relays, %d consumers, a fault about every %s",
		"zh", "chaos：种子 %s，流水线 %s，%s 个订单，历时 %s，%s 个中继，%s 个消费者，大约每 %s 一个故障")
	_ = catalog.Add("chaos: %s", "zh", "chaos：%s")
	_ = catalog.Add("schedule (%d faults):", "zh", "故障计划（%s 个故障）：")
	_ = catalog.Add("(! a fault your program cannot survive unless it is right: every seed plays each, and a run where one found no moment to land in is no pass)",
		"zh", "（! 表示程序只有写对才能挺过的故障：每个种子都会安排每一个这样的故障；其中某个没有找到落下的时机的运行不算通过）")
	_ = catalog.Add("%s  pipeline %s, seed %d, on %s", "zh", "%s  流水线 %s，种子 %s，在 %s 上")
	_ = catalog.Add("orders committed %d of %d; applied once %d, lost %d, twice %d", "zh", "已提交订单 %s / %s；生效一次 %s，丢失 %s，两次 %s")
	_ = catalog.Add("applied with a wrong amount %d", "zh", "以错误金额生效 %s")
	_ = catalog.Add("publishes %d; unsent %d, DEAD %d, left in the queue %d", "zh", "发布 %s 次；未发送 %s，DEAD %s，留在队列中 %s")
	_ = catalog.Add("duplicates absorbed by the consumer %d; publishes %d; unsent %d, DEAD %d, left in the queue %d",
		"zh", "消费者吸收的重复 %s；发布 %s 次；未发送 %s，DEAD %s，留在队列中 %s")
	_ = catalog.Add("conflicts recorded in consumed_conflict: %d of %d orders with a conflicting repeat", "zh", "记录在 consumed_conflict 中的冲突：%s / %s 个有冲突重复的订单")
	_ = catalog.Add("commit to applied: p50 %.1f ms, p99 %.1f ms, max %.1f ms; %.1f orders/s; %s in all, drain %s",
		"zh", "从提交到生效：p50 %s ms，p99 %s ms，最大 %s ms；%s 个订单/秒；共 %s，排空 %s")
	_ = catalog.Add("faults: %s (%d found nothing to hit)", "zh", "故障：%s（%s 个没有找到目标）")
	_ = catalog.Add("restarts: %s", "zh", "重启：%s")
	_ = catalog.Add("%s %6.2fs %-14s %s: %s", "zh", "%s %s 秒 %s %s：%s")
	_ = catalog.Add("%6.2fs %-14s %s: %s", "zh", "%s 秒 %s %s：%s")
	_ = catalog.Add("violation: %s", "zh", "违规：%s")
	_ = catalog.Add("refused: %s", "zh", "拒绝：%s")
	_ = catalog.Add("note: %s", "zh", "注：%s")
	_ = catalog.Add("%5.1fs %-8s committed %d, published %d, applied %d, faults %d", "zh", "%s 秒 %s 已提交 %s，已发布 %s，已生效 %s，故障 %s")
)

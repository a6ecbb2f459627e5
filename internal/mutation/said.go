package mutation

import "github.com/rmlab/lab/internal/catalog"

// What a mutant's verdict says, in every language the lab speaks.
var (
	sayNoKind         = catalog.Add("no mutant kind %q (kinds: %s, %s, %s)", "zh", "没有变异体种类 %s（种类：%s、%s、%s）")
	sayPassedWithout  = catalog.Add("the replay passed without %s (line %d): no check after it depends on its fault; add one that reads what the fault did, or take the fault out", "zh", "去掉 %s（第 %d 行）后重放仍然通过：它之后没有哪项检查依赖这个故障；请加一项读取故障后果的检查，或者去掉这个故障")
	sayNoFault        = catalog.Add("(no fault)", "zh", "（没有故障）")
	sayGoesOnInstead  = catalog.Add("resume worker=%s (no crash: it goes on)", "zh", "resume worker=%s（没有崩溃：它继续运行）")
	saySetupFailed    = catalog.Add("line %d: the %s step failed (%s): the mutant's own doing, not a check", "zh", "第 %d 行：%s 步骤失败（%s）：这是变异体自己造成的，不是哪项检查的结论")
	sayFailedAtChange = catalog.Add("failed at line %d, the change itself: %s", "zh", "在第 %d 行，即改动本身处失败：%s")
	sayPassedWith     = catalog.Add("the replay passed with %s", "zh", "改成 %s 后重放仍然通过")
	sayFailedAt       = catalog.Add("line %d: %s", "zh", "第 %d 行：%s")
	sayFailedBefore   = catalog.Add("failed at line %d before the change: %s", "zh", "在改动之前的第 %d 行失败：%s")
	sayAnotherAnswer  = catalog.Add("(another answer)", "zh", "（换一个回答）")
	sayHeldWithAnswer = catalog.Add("%s still held with the answer replaced (%s): it does not read what the server answered; check a value of the answer itself", "zh", "%s 在回答被换掉（%s）后仍然成立：它没有读取服务器的回答；请检查回答本身的值")
	sayNotMade        = catalog.Add("the check at line %d was not made again: its step did not run on this path", "zh", "第 %d 行的检查没有被再做一次：这条路径上它的步骤没有运行")
	saySkipped        = catalog.Add("skipped: %s", "zh", "跳过：%s")
)

package mutation

import "github.com/rmlab/lab/internal/catalog"

// What a mutant's verdict says, in every language the lab speaks.
var (
	sayNoKind        = catalog.Add("no mutant kind %q (kinds: %s, %s)", "zh", "没有变异体种类 %s（种类：%s、%s）")
	sayPassedWithout = catalog.Add("the replay passed without %s (line %d): no check after it depends on its fault", "zh", "去掉 %s（第 %d 行）后重放仍然通过：它之后没有哪项检查依赖这个故障")
	sayPassedWith    = catalog.Add("the replay passed with %s", "zh", "改成 %s 后重放仍然通过")
	sayFailedAt      = catalog.Add("line %d: %s", "zh", "第 %d 行：%s")
	sayFailedBefore  = catalog.Add("failed at line %d before the change: %s", "zh", "在改动之前的第 %d 行失败：%s")
	saySkipped       = catalog.Add("skipped: %s", "zh", "跳过：%s")
)

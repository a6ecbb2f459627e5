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

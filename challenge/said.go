package challenge

import "github.com/rmlab/lab/internal/catalog"

// What loading, starting and running a challenge writes, in every language
// the screen speaks (internal/catalog).
var (
	_ = catalog.Add("language %q: the challenges are written in %s",
		"zh", "语言 %s：挑战只有 %s 版本")
	_ = catalog.Add("no program to run; give it after --, e.g. lab challenge run %s -- go run ./mine",
		"zh", "没有要运行的程序；请在 -- 之后给出，例如 lab challenge run %s -- go run ./mine")
	_ = catalog.Add("your program does not build (%s):",
		"zh", "你的程序构建失败（%s）：")
	_ = catalog.Add("--lang %s: starters are written in go and python",
		"zh", "--lang %s：起步程序只有 go 和 python 版本")
	_ = catalog.Add("%s has no %s starter yet; --lang go has one",
		"zh", "%s 还没有 %s 的起步程序；--lang go 有")
	_ = catalog.Add("%s already there: nothing written; give an empty or new folder",
		"zh", "%s 已经存在：什么也没有写；请给一个空的或新的目录")
)

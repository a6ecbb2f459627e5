package bench

import "github.com/rmlab/lab/internal/catalog"

// The benchmark's errors, in every language the commands speak.
var (
	_ = catalog.Add("--events and --workers must be at least 1", "zh", "--events 和 --workers 至少要为 1")
	_ = catalog.Add("start the database latency proxy: %w", "zh", "启动数据库延迟代理：%s")
	_ = catalog.Add("insert bench events: %w", "zh", "插入基准测试事件：%s")
	_ = catalog.Add("baseline publish not confirmed (%v)", "zh", "基线发布没有得到确认（%s）")
)

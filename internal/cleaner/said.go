package cleaner

import "github.com/rmlab/lab/internal/catalog"

// The cleaner's errors, in every language the commands speak.
var (
	_ = catalog.Add("list the lab's databases: %w", "zh", "列出实验室的数据库：%s")
)

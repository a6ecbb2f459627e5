package broker

import "github.com/rmlab/lab/internal/catalog"

// Where a queue's figures came from, in every language the screen speaks.
var (
	_ = catalog.Add(SourcePassive, "zh", "被动声明；未确认数：实验室自己的通道")
	_ = catalog.Add(SourceManagement, "zh", "被动声明；未确认数：管理 API")
)

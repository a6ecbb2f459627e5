package room

import "github.com/rmlab/lab/internal/catalog"

// A room's errors and its commands' complaints, in every language the commands speak.
var (
	_ = catalog.Add("room %s: read its log: %w", "zh", "房间 %s：读取它的日志：%s")
	_ = catalog.Add("room %s: claim %s's screen: it kept changing hands", "zh", "房间 %s：接管 %s 的屏幕：它一直在换人持有")
	_ = catalog.Add("an empty command; %s", "zh", "空命令；%s")
	_ = catalog.Add("write say TEXT, or say NAME TEXT for one participant", "zh", "请写 say TEXT，或用 say NAME TEXT 只发给一位参与者")
	_ = catalog.Add("write timer 10m (or timer off)", "zh", "请写 timer 10m（或 timer off）")
	_ = catalog.Add("timer %s: write a duration such as 10m or 90s (or off)", "zh", "timer %s：请写一个时长，例如 10m 或 90s（或 off）")
	_ = catalog.Add("%q is not a command: %s", "zh", "%s 不是命令：%s")
	_ = catalog.Add("room command %q: use goto, say, end or timer", "zh", "房间命令 %s：请用 goto、say、end 或 timer")
	_ = catalog.Add("room %q: use 1–24 lowercase letters, digits or _", "zh", "房间 %s：请用 1–24 个小写字母、数字或 _")
	_ = catalog.Add("room %s: %s's screen on %s did not close within %s; nothing was reset", "zh", "房间 %s：%s 在 %s 上的屏幕没有在 %s 内关闭；什么也没有重置")
	_ = catalog.Add("look up the room's database %s: %w", "zh", "查找房间的数据库 %s：%s")
	_ = catalog.Add("database %s exists but was not created by the lab; nothing was touched — pick another --room", "zh", "数据库 %s 已存在，但不是实验室创建的；什么也没动——请换一个 --room")
	_ = catalog.Add("there is no room %s on this MySQL server (database %s): lab serve --room %s creates it", "zh", "这台 MySQL 服务器上没有房间 %s（数据库 %s）：lab serve --room %s 会创建它")
	_ = catalog.Add("create the room's database %s: %w", "zh", "创建房间的数据库 %s：%s")
)

var (
	_ = catalog.Add("room %s: look up lesson %s: %w", "zh", "房间 %s：查找课程 %s：%s")
	_ = catalog.Add("room %s: record lesson %s: %w", "zh", "房间 %s：记录课程 %s：%s")
)

var _ = catalog.Add("give its log kinds: %w", "zh", "给它的日志分类：%s")

var (
	_ = catalog.Add("room %s: record %s: %w", "zh", "房间 %s：记录 %s：%s")
	_ = catalog.Add("room %s: read %s: %w", "zh", "房间 %s：读取 %s：%s")
	_ = catalog.Add("room %s: read its participants: %w", "zh", "房间 %s：读取参与者：%s")
)

var (
	_ = catalog.Add("room %s: record a %s: %w", "zh", "房间 %s：记录一次 %s：%s")
	_ = catalog.Add("room %s: read its record: %w", "zh", "房间 %s：读取它的记录：%s")
)

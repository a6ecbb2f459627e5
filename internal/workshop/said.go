package workshop

import "github.com/rmlab/lab/internal/catalog"

// The workshop server's errors, in every language the commands speak.
var (
	_ = catalog.Add("read keys from %s: %w", "zh", "从 %s 读取公钥：%s")
	_ = catalog.Add("%s: %w (one key per line, as in authorized_keys)", "zh", "%s：%s（每行一个公钥，和 authorized_keys 一样）")
	_ = catalog.Add("%s: no screen within 30 s", "zh", "%s：30 秒内没有出现屏幕")
	_ = catalog.Add("--sessions and --keys must be at least 1", "zh", "--sessions 和 --keys 至少要为 1")
	_ = catalog.Add("a challenge run of yours is going already: one at a time (wait for its verdict)", "zh", "你已经有一次挑战运行在进行中：一次只能运行一个（请等它的判定）")
	_ = catalog.Add("the server runs %d challenge runs at once and all are taken: try again in a minute", "zh", "服务器同时最多运行 %d 个挑战，现在都已占满：请一分钟后再试")
	_ = catalog.Add("your machine did not answer %s within %s", "zh", "你的机器没有在 %[2]s 内应答 %[1]s")
	_ = catalog.Add("forward %s to your machine: %w", "zh", "把 %s 转发到你的机器：%s")
	_ = catalog.Add("your machine forwarded %s to %q, not an address", "zh", "你的机器把 %s 转发到了 %s，这不是一个地址")
	_ = catalog.Add("no signal %v for a program on a participant's machine", "zh", "参与者机器上的程序不支持信号 %s")
	_ = catalog.Add("connect as your MySQL user: %w", "zh", "以你的 MySQL 用户连接：%s")
	_ = catalog.Add("the AMQP URL cannot be read", "zh", "无法解析 AMQP URL")
	_ = catalog.Add("your RabbitMQ user %s was made but cannot log in to %s: %w", "zh", "你的 RabbitMQ 用户 %s 已创建，但无法登录到 %s：%s")
	_ = catalog.Add("%q is not a participant's name: %s", "zh", "%s 不是参与者的名字：%s")
	_ = catalog.Add("no way for participants to log in: set the workshop password's environment variable or give --participant-keys FILE",
		"zh", "参与者无法登录：请设置工作坊密码的环境变量，或给出 --participant-keys FILE")
	_ = catalog.Add("host key folder %s: %w", "zh", "主机密钥目录 %s：%s")
	_ = catalog.Add("shutting down: when the wait ended, %d session(s) were still ending and %d screen(s) still closing (workers to kill, progress to save): %w",
		"zh", "正在关闭：等待结束时，仍有 %d 个会话在结束、%d 个屏幕在关闭（要杀掉工作进程、保存进度）：%s")
)

package broker

import "github.com/rmlab/lab/internal/catalog"

// Where a queue's figures came from, in every language the screen speaks.
var (
	_ = catalog.Add(SourcePassive, "zh", "被动声明；未确认数：实验室自己的通道")
	_ = catalog.Add(SourceManagement, "zh", "被动声明；未确认数：管理 API")
)

// What failed at the broker, its management API or a queue's attributes.
var (
	_ = catalog.Add("open a channel on RabbitMQ: %w", "zh", "在 RabbitMQ 上打开通道：%s")
	_ = catalog.Add("the connection's handshake is still under way", "zh", "连接的握手还在进行中")
	_ = catalog.Add("connect to RabbitMQ at %s: the client was closed during the handshake", "zh", "连接 %s 上的 RabbitMQ：握手期间客户端被关闭了")
	_ = catalog.Add("fix: run `rabbitmqctl start_app` yourself if the broker stays down", "zh", "解决办法：如果 Broker 一直没有起来，请自己运行 `rabbitmqctl start_app`")
	_ = catalog.Add("RabbitMQ did not accept connections within %s after start_app: %w", "zh", "start_app 之后 %s 内 RabbitMQ 没有接受连接：%s")
	_ = catalog.Add("management API at %s: the exchanges of vhost %s take more than %d MiB: something declared them without end; delete the vhost (rabbitmqctl delete_vhost) or its exchanges",
		"zh", "%s 上的管理 API：vhost %s 的交换机超过 %s MiB：有东西在没完没了地声明交换机；请删除这个 vhost（rabbitmqctl delete_vhost）或它的交换机")
	_ = catalog.Add("the AMQP URL cannot be read", "zh", "无法解析 AMQP URL")
	_ = catalog.Add("management API at %s refused user %s (HTTP %d): give the user the monitoring tag", "zh", "%s 上的管理 API 拒绝了用户 %s（HTTP %s）：请给这个用户加上 monitoring 标签")
	_ = catalog.Add("read queue %s at the broker: %w", "zh", "在 Broker 上读取队列 %s：%s")
	_ = catalog.Add("queue %s holds more than %d messages: counted %d with id %s among the first %d", "zh", "队列 %[1]s 里的消息超过 %[2]s 条：在前 %[5]s 条中数到 %[3]s 条 id 为 %[4]s 的消息")
	_ = catalog.Add("look for message %s in queue %s: %w", "zh", "在队列 %[2]s 中查找消息 %[1]s：%[3]s")
	_ = catalog.Add("the channel closed while reading stream %s", "zh", "读取流 %s 时通道关闭了")
	_ = catalog.Add("read stream %s from its first offset: %w", "zh", "从第一个偏移量开始读取流 %s：%s")
	_ = catalog.Add("%s=%s: want one of %s", "zh", "%s=%s：应为 %s 之一")
	_ = catalog.Add("mark %s %s as the lab's: %w", "zh", "把 %s %s 标记为实验室的：%s")
	_ = catalog.Add("%s=%s: want a whole number ≥ 0", "zh", "%s=%s：应为 ≥ 0 的整数")
	_ = catalog.Add("%s=%s: want true or false", "zh", "%s=%s：应为 true 或 false")
	_ = catalog.Add("%s=%s: want a duration such as 5s or 500ms", "zh", "%s=%s：应为一个时长，例如 5s 或 500ms")
	_ = catalog.Add("log in to RabbitMQ vhost %s at %s: %w", "zh", "登录 %[2]s 上的 RabbitMQ vhost %[1]s：%[3]s")
	_ = catalog.Add("management API at %s answered HTTP %d to %s %s (user %s needs the administrator tag)", "zh", "%[1]s 上的管理 API 对 %[3]s %[4]s 回应了 HTTP %[2]s（用户 %[5]s 需要 administrator 标签）")
)

var _ = catalog.Add("%s %s exists but the lab did not create it (no mark exchange %s); nothing was deleted", "zh", "%s %s 已存在，但不是实验室创建的（没有标记交换机 %s）；什么也没有删除")

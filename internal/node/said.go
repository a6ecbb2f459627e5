package node

import "github.com/rmlab/lab/internal/catalog"

// Why the lab's own broker nodes did not start or attach, in every language the commands speak.
var (
	_ = catalog.Add("%s: %q is not an AMQP URL with a port (write amqp://user:password@host:5701/)", "zh", "%s：%s 不是带端口的 AMQP URL（写成 amqp://user:password@host:5701/）")
	_ = catalog.Add("%s names %d URLs: a cluster lesson needs the three nodes' URLs, node 1 first", "zh", "%s 给出了 %s 个 URL：集群课程需要三个节点的 URL，节点 1 的在最前")
	_ = catalog.Add("attach a cluster: want three URLs and a control command", "zh", "接入集群：需要三个 URL 和一条控制命令")
	_ = catalog.Add("no %q for a node", "zh", "节点不支持 %s")
	_ = catalog.Add("%d nodes asked; the lab starts 1 or 3", "zh", "要求了 %s 个节点；实验室只启动 1 个或 3 个")
	_ = catalog.Add("no Docker engine answers at %s (start Docker, or set DOCKER_HOST)", "zh", "%s 上没有 Docker 引擎应答（请启动 Docker，或设置 DOCKER_HOST）")
	_ = catalog.Add("create a network for the nodes: %w", "zh", "为节点创建网络：%s")
	_ = catalog.Add("no rabbit application in %s", "zh", "%s 里没有 rabbit 应用")
	_ = catalog.Add("no cache directory for the lab's broker nodes: %w (set XDG_CACHE_HOME)", "zh", "实验室的 Broker 节点没有缓存目录：%s（请设置 XDG_CACHE_HOME）")
	_ = catalog.Add("LAB_OWN_BROKER=%s: the lab starts no RabbitMQ nodes of its own here", "zh", "LAB_OWN_BROKER=%s：实验室在这里不启动自己的 RabbitMQ 节点")
	_ = catalog.Add("no RabbitMQ server script at %s (install rabbitmq-server, or set LAB_RABBITMQ_SERVER to its rabbitmq-server under lib/rabbitmq/bin)",
		"zh", "%s 处没有 RabbitMQ 服务器脚本（请安装 rabbitmq-server，或把 LAB_RABBITMQ_SERVER 设为它在 lib/rabbitmq/bin 下的 rabbitmq-server）")
	_ = catalog.Add("RabbitMQ's script is at %s but Erlang's erl is not on PATH", "zh", "RabbitMQ 的脚本在 %s，但 PATH 上没有 Erlang 的 erl")
	_ = catalog.Add("another lab in this namespace owns the nodes in %s (use another --namespace, or end that lab)", "zh", "这个命名空间里的另一个实验室占用着 %s 中的节点（换一个 --namespace，或结束那个实验室）")
	_ = catalog.Add("no epmd (Erlang's port mapper) on PATH or under /usr/lib/erlang", "zh", "PATH 上和 /usr/lib/erlang 下都没有 epmd（Erlang 的端口映射器）")
	_ = catalog.Add("node %s exited while booting:", "zh", "节点 %s 在启动过程中退出了：")
	_ = catalog.Add("node %s (%s) did not accept AMQP connections within %s: %v", "zh", "节点 %s（%s）在 %s 内没有接受 AMQP 连接：%s")
	_ = catalog.Add("node %s did not accept AMQP connections on port %d within %s: %v (its log: %s)", "zh", "节点 %[1]s 在 %[3]s 内没有接受端口 %[2]s 上的 AMQP 连接：%[4]s（它的日志：%[5]s）")
	_ = catalog.Add("there is no node %d: this lesson's broker has %d", "zh", "没有节点 %s：本课的 Broker 只有 %s 个节点")
	_ = catalog.Add("no free loopback port: %w", "zh", "没有空闲的回环端口：%s")
)

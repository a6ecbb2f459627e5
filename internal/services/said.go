package services

import "github.com/rmlab/lab/internal/catalog"

// What a lesson's reset says about the servers, in every language the
// screen speaks.
var sayOwnBinlog = catalog.Add("%s has no row-based binary log (%s): this lesson runs on a server of the lab's own, %s %s at %s%s, with log_bin ON and binlog_format ROW",
	"zh", "%s 没有基于行的二进制日志（%s）：本课改在实验室自己的服务器上运行，%s %s，地址 %s%s，log_bin 为 ON，binlog_format 为 ROW")

// A service the lab cannot use: the parts of its lab.Error (what, where,
// the fix; lab.Error.In lays them out), in every language the screen and
// the commands speak.
var (
	_ = catalog.Add("cannot reach %s", "zh", "连不上 %s")
	_ = catalog.Add("%s refused the login", "zh", "%s 拒绝了登录")
	_ = catalog.Add("cannot find %s's host %s", "zh", "找不到 %s 的主机 %s")
	_ = catalog.Add("%s did not answer in time", "zh", "%s 没有及时应答")
	_ = catalog.Add("the MySQL DSN is malformed", "zh", "MySQL DSN 格式不对")
	_ = catalog.Add("the MySQL DSN is malformed: %s", "zh", "MySQL DSN 格式不对：%s")
	_ = catalog.Add("the AMQP URL is malformed: %s", "zh", "AMQP URL 格式不对：%s")
	_ = catalog.Add("the management API URL is malformed: %s", "zh", "管理 API 的 URL 格式不对：%s")
	_ = catalog.Add("the Redis address is malformed: want host:port, with no user, password or scheme", "zh", "Redis 地址格式不对：应为 host:port，不带用户、密码或协议")
	_ = catalog.Add("the Redis address is malformed: %s", "zh", "Redis 地址格式不对：%s")
	_ = catalog.Add("namespace %q is not allowed: %s", "zh", "命名空间 %s 不可用：%s")
	_ = catalog.Add("broker control %q is unknown", "zh", "不认识的 broker 控制方式 %s")
	_ = catalog.Add("fix: %s", "zh", "解决办法：%s")
	_ = catalog.Add("nothing listens at that address: %s", "zh", "那个地址上没有服务在监听：%s")
	_ = catalog.Add("start it (on Debian: start-stop-daemon --start --background --exec /usr/sbin/mariadbd), pass another server with --mysql DSN or LAB_MYSQL_DSN, or run `docker compose up -d mysql rabbitmq redis` in the lab's folder",
		"zh", "启动它（Debian 上：start-stop-daemon --start --background --exec /usr/sbin/mariadbd），用 --mysql DSN 或 LAB_MYSQL_DSN 指定另一台服务器，或在实验室目录里运行 `docker compose up -d mysql rabbitmq redis`")
	_ = catalog.Add("start it (rabbitmq-server -detached), pass another broker with --amqp URL or LAB_AMQP_URL, or run `docker compose up -d mysql rabbitmq redis`",
		"zh", "启动它（rabbitmq-server -detached），用 --amqp URL 或 LAB_AMQP_URL 指定另一个 Broker，或运行 `docker compose up -d mysql rabbitmq redis`")
	_ = catalog.Add("start it (redis-server --daemonize yes --port 6379), pass another with --redis ADDR or LAB_REDIS_ADDR, or run `docker compose up -d mysql rabbitmq redis`",
		"zh", "启动它（redis-server --daemonize yes --port 6379），用 --redis ADDR 或 LAB_REDIS_ADDR 指定另一个，或运行 `docker compose up -d mysql rabbitmq redis`")
	_ = catalog.Add("start it, or point LAB_MYSQL_DSN / --mysql at a running server", "zh", "启动它，或让 LAB_MYSQL_DSN / --mysql 指向一台正在运行的服务器")
	_ = catalog.Add("the server is up: check the user and password in %s", "zh", "服务器是开着的：请检查 %s 里的用户名和密码")
	_ = catalog.Add("check the host name in %s (a typo, or a name this machine cannot resolve)", "zh", "请检查 %s 里的主机名（写错了，或者这台机器解析不了这个名字）")
	_ = catalog.Add("a wrong host or port, a firewall dropping the connection, or a server still starting: check %s, then try again",
		"zh", "主机或端口不对、防火墙丢弃了连接，或者服务器还在启动：检查 %s 后再试一次")
	_ = catalog.Add("write it as user:password@tcp(host:3306)/ in LAB_MYSQL_DSN or --mysql", "zh", "写成 user:password@tcp(host:3306)/，放在 LAB_MYSQL_DSN 或 --mysql 里")
	_ = catalog.Add("write it as user:password@tcp(host:3306)/ (go-sql-driver form), via --mysql or LAB_MYSQL_DSN", "zh", "写成 user:password@tcp(host:3306)/（go-sql-driver 的格式），通过 --mysql 或 LAB_MYSQL_DSN 给出")
	_ = catalog.Add("the lab takes go-sql-driver's form, not a URL: %s, via --mysql or LAB_MYSQL_DSN", "zh", "实验室用的是 go-sql-driver 的格式，不是 URL：%s，通过 --mysql 或 LAB_MYSQL_DSN 给出")
	_ = catalog.Add("write it as amqp://user:password@host:5672/vhost, via --amqp or LAB_AMQP_URL", "zh", "写成 amqp://user:password@host:5672/vhost，通过 --amqp 或 LAB_AMQP_URL 给出")
	_ = catalog.Add("write it as http://host:15672/ (the AMQP URL's user is used unless it names one), via --management or LAB_MANAGEMENT_URL", "zh", "写成 http://host:15672/（不写用户时沿用 AMQP URL 的用户），通过 --management 或 LAB_MANAGEMENT_URL 给出")
	_ = catalog.Add("write it as host:port, e.g. 127.0.0.1:6379, via --redis or LAB_REDIS_ADDR (the lab uses Redis without a password)", "zh", "写成 host:port，例如 127.0.0.1:6379，通过 --redis 或 LAB_REDIS_ADDR 给出（实验室使用不带密码的 Redis）")
	_ = catalog.Add("write it as host:port, e.g. 127.0.0.1:6379, via --redis or LAB_REDIS_ADDR", "zh", "写成 host:port，例如 127.0.0.1:6379，通过 --redis 或 LAB_REDIS_ADDR 给出")
	_ = catalog.Add("use 1–16 lowercase letters, digits or _, e.g. --namespace alice", "zh", "用 1 到 16 个小写字母、数字或 _，例如 --namespace alice")
	_ = catalog.Add("use --broker-control=rabbitmqctl on a machine whose local RabbitMQ node the lab may restart", "zh", "在允许实验室重启本机 RabbitMQ 节点的机器上用 --broker-control=rabbitmqctl")
)

// Why a DSN or a namespace is refused, inside the errors above.
var (
	_ = catalog.Add("it is a URL", "zh", "它是一个 URL")
	_ = catalog.Add("it contains a space", "zh", "它含有空格")
	_ = catalog.Add("no slash before the database name (end it with /)", "zh", "数据库名前没有斜杠（用 / 结尾）")
	_ = catalog.Add("the address after @ must be in tcp(…)", "zh", "@ 后面的地址必须写在 tcp(…) 里")
	_ = catalog.Add("a parenthesis is not closed", "zh", "有一个括号没有闭合")
	_ = catalog.Add("go-sql-driver cannot read it", "zh", "go-sql-driver 读不懂它")
	_ = catalog.Add("use 1–16 lowercase letters, digits or _", "zh", "请用 1 到 16 个小写字母、数字或 _")
	_ = catalog.Add("names ending _r and a number are the lanes of `lab replay --parallel`", "zh", "以 _r 加数字结尾的名字是 `lab replay --parallel` 的通道")
	_ = catalog.Add("it is reserved", "zh", "它是保留名")
	_ = catalog.Add("names starting presenter are the workshop rooms' presented lessons", "zh", "以 presenter 开头的名字属于工作坊房间展示的课程")
	_ = catalog.Add("%s = [%d characters, not shown: the lab cannot tell which part is a password]", "zh", "%s = [%s 个字符，不显示：实验室分不清哪一部分是密码]")
	_ = catalog.Add("[%d characters, not shown: the lab cannot tell which part is a password]", "zh", "[%s 个字符，不显示：实验室分不清哪一部分是密码]")
)

// What failed while the lab reached, started, marked or granted its servers.
var (
	_ = catalog.Add("set it to 1 (MySQL, RabbitMQ and Redis) or to a list of mysql, rabbitmq and redis, e.g. LAB_CONTAINERS=redis; unset it for none",
		"zh", "设为 1（MySQL、RabbitMQ 和 Redis），或设为 mysql、rabbitmq、redis 组成的列表，例如 LAB_CONTAINERS=redis；不设则一个也不用容器")
	_ = catalog.Add("the port is not a number", "zh", "端口不是数字")
	_ = catalog.Add("start the service yourself, or run `docker compose up -d mysql rabbitmq redis`", "zh", "请自己启动这个服务，或运行 `docker compose up -d mysql rabbitmq redis`")
	_ = catalog.Add("its processes (STAT: R runs, S sleeps, D waits on the disk, T stopped):%s%s", "zh", "它的进程（STAT：R 运行，S 睡眠，D 等待磁盘，T 已停止）：%s%s")
	_ = catalog.Add("%s holds more than its own databases after the lab's grants: %s (revoke it: REVOKE ALL PRIVILEGES, GRANT OPTION FROM %s)",
		"zh", "实验室授权之后，%s 拥有的权限超出了它自己的数据库：%s（请收回：REVOKE ALL PRIVILEGES, GRANT OPTION FROM %s）")
	_ = catalog.Add("%q is not a service the lab starts in a container", "zh", "%s 不是实验室会在容器中启动的服务")
	_ = catalog.Add("%v: want --containers (all three) or --containers=LIST of mysql, rabbitmq, redis", "zh", "%s：应为 --containers（三个全部）或 --containers=LIST，LIST 取自 mysql、rabbitmq、redis")
	_ = catalog.Add("queue %s exists at %s but is unavailable (the broker says: %s); it serves again once its node is back: start the %s again then",
		"zh", "队列 %s 在 %s 上存在但不可用（Broker 说：%s）；它的节点回来后它会重新提供服务：到那时再启动一次 %s")
	_ = catalog.Add("queue %s does not exist at %s: the lesson declares its queues (run its earlier steps); the %s never creates one",
		"zh", "%[2]s 上没有队列 %[1]s：队列由课程声明（请先运行它前面的步骤）；%[3]s 从不创建队列")
	_ = catalog.Add("run the lesson's reset step first: it creates the database", "zh", "请先运行课程的 reset 步骤：它会创建数据库")
	_ = catalog.Add("look up database %s: %w", "zh", "查找数据库 %s：%s")
	_ = catalog.Add("look for the lab's mark in %s: %w", "zh", "在 %s 中查找实验室的标记：%s")
	_ = catalog.Add("finish or quit the other lab using this namespace, or pick another with --namespace", "zh", "结束或退出正在使用这个命名空间的另一个实验室，或用 --namespace 另选一个")
	_ = catalog.Add("mark database %s as the lab's: %w", "zh", "把数据库 %s 标记为实验室的：%s")
	_ = catalog.Add("this lesson reads a binary log, which %s does not write (%s), and the lab could not start a server of its own: %w",
		"zh", "本课要读二进制日志，而 %s 不写（%s），实验室也没能启动自己的服务器：%s")
	_ = catalog.Add("give %s a password: MySQL sent no generated password back (%v)", "zh", "给 %s 设置密码：MySQL 没有返回生成的密码（%s）")
	_ = catalog.Add("give %s a password: MySQL sent an empty generated password back", "zh", "给 %s 设置密码：MySQL 返回的生成密码是空的")
	_ = catalog.Add("%s: a container was asked for", "zh", "%s：已要求在容器中运行")
	_ = catalog.Add("containers were asked for (--containers or LAB_CONTAINERS) but no Docker engine answers", "zh", "要求了容器（--containers 或 LAB_CONTAINERS），但没有 Docker 引擎应答")
	_ = catalog.Add("start Docker, or point DOCKER_HOST at an engine (CI: bash .ci/docker up; eval \"$(.ci/docker env)\")", "zh", "请启动 Docker，或让 DOCKER_HOST 指向一个引擎（CI：bash .ci/docker up; eval \"$(.ci/docker env)\"）")
	_ = catalog.Add("the AMQP URL %s cannot be read", "zh", "无法解析 AMQP URL %s")
	_ = catalog.Add("list the MySQL users the lab made (mysql.user): %w", "zh", "列出实验室创建的 MySQL 用户（mysql.user）：%s")
	_ = catalog.Add("read the host MySQL sees the lab connect from: %w", "zh", "读取 MySQL 看到的实验室连接来源主机：%s")
	_ = catalog.Add("MySQL sees the lab connect from %q, which the lab cannot write in an account", "zh", "MySQL 看到实验室从 %s 连接，实验室没法把它写进账户名")
)

// A database that is not the lab's, or not this room's.
var (
	_ = catalog.Add("database %s exists but was not created by the lab; nothing was dropped", "zh", "数据库 %s 已存在，但不是实验室创建的；什么也没有删除")
	_ = catalog.Add("database %s is in use by another session; it was not dropped", "zh", "数据库 %s 正被另一个会话使用；没有删除")
	_ = catalog.Add("database %s does not exist", "zh", "数据库 %s 不存在")
	_ = catalog.Add("read the lab's mark in %s: %w", "zh", "读取 %s 中实验室的标记：%s")
	_ = catalog.Add("the name %s is taken: database %s exists and the lab did not make it", "zh", "名字 %s 已被占用：数据库 %s 已存在，而且不是实验室创建的")
	_ = catalog.Add("the name %s is taken: database %s belongs to a lab run outside the workshop (lab --namespace %s)", "zh", "名字 %s 已被占用：数据库 %s 属于工作坊之外的一次实验室运行（lab --namespace %s）")
	_ = catalog.Add("the name %s is taken: database %s belongs to %s", "zh", "名字 %s 已被占用：数据库 %s 属于 %s")
	_ = catalog.Add("log in under another name (ssh OTHER@HOST)", "zh", "换一个名字登录（ssh OTHER@HOST）")
	_ = catalog.Add("log in under another name (ssh OTHER@HOST); its owner removes it with lab clean --namespace %s", "zh", "换一个名字登录（ssh OTHER@HOST）；它的主人可以用 lab clean --namespace %s 删除它")
	_ = catalog.Add("log in under another name (ssh OTHER@HOST), or ask the instructor of %s to free it (lab room --reset %s)", "zh", "换一个名字登录（ssh OTHER@HOST），或请 %s 的讲师释放它（lab room --reset %s）")
)

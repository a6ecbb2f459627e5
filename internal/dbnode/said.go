package dbnode

import "github.com/rmlab/lab/internal/catalog"

// Why the lab's own MySQL server did not start, in every language the commands speak.
var (
	_ = catalog.Add("lab-owned MySQL server on 127.0.0.1:%d did not answer within 60s: %v", "zh", "实验室自己在 127.0.0.1:%s 上的 MySQL 服务器 60s 内没有应答：%s")
	_ = catalog.Add("no cache directory for the lab's own MySQL server: %w (set XDG_CACHE_HOME)", "zh", "实验室自己的 MySQL 服务器没有缓存目录：%s（请设置 XDG_CACHE_HOME）")
	_ = catalog.Add("LAB_OWN_MYSQL=%s: the lab starts no MySQL server of its own here", "zh", "LAB_OWN_MYSQL=%s：实验室在这里不启动自己的 MySQL 服务器")
	_ = catalog.Add("%s is here but mariadb-install-db is not on PATH (install mariadb-server)", "zh", "%s 是有的，但 PATH 上没有 mariadb-install-db（请安装 mariadb-server）")
	_ = catalog.Add("no MySQL-compatible server binary at %s (install mariadb-server or mysql-server, or set LAB_MYSQLD)", "zh", "%s 处没有兼容 MySQL 的服务器程序（请安装 mariadb-server 或 mysql-server，或设置 LAB_MYSQLD）")
)

package services

import "github.com/rmlab/lab/internal/catalog"

// What a lesson's reset says about the servers, in every language the
// screen speaks.
var sayOwnBinlog = catalog.Add("%s has no row-based binary log (%s): this lesson runs on a server of the lab's own, %s %s at %s%s, with log_bin ON and binlog_format ROW",
	"zh", "%s 没有基于行的二进制日志（%s）：本课改在实验室自己的服务器上运行，%s %s，地址 %s%s，log_bin 为 ON，binlog_format 为 ROW")

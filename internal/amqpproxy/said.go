package amqpproxy

import "github.com/rmlab/lab/internal/catalog"

// The proxy's own words on the wire trace (an event's name and note), in
// every language the screen speaks.
var (
	_ = catalog.Add("end of stream", "zh", "流结束")
	_ = catalog.Add("connection cut", "zh", "连接被切断")
	_ = catalog.Add("connection accepted", "zh", "连接已接受")

	sayClosedByPeer   = catalog.Add("closed by peer", "zh", "对端关闭")
	sayCutMatched     = catalog.Add("CutAfter or CutBefore matched; closing both sides", "zh", "CutAfter 或 CutBefore 命中；关闭两端")
	sayForbid         = catalog.Add("Forbid: refused; the connection closes instead", "zh", "Forbid：拒绝；改为关闭连接")
	sayCutBefore      = catalog.Add("CutBefore: not forwarded; the connection closes instead", "zh", "CutBefore：不转发；改为关闭连接")
	sayDroppedContent = catalog.Add("content of dropped basic.return", "zh", "被丢弃的 basic.return 的内容")
	sayConfirmMode    = catalog.Add("confirm mode: publish seqs count from 1", "zh", "确认模式：发布序号从 1 开始计数")
	sayDropReturn     = catalog.Add("DropReturn: return #%d of this connection dropped with its content", "zh", "DropReturn：这个连接的第 %d 个 return 连同内容被丢弃")
	sayCutAfterFrame  = catalog.Add("CutAfter: connection closes after this frame", "zh", "CutAfter：这一帧之后关闭连接")
	sayDelayed        = catalog.Add("delayed %s", "zh", "延迟了 %s")
	sayDropConfirm    = catalog.Add("DropConfirm: confirm for seq %d dropped", "zh", "DropConfirm：序号 %d 的确认被丢弃")
	sayRewritten      = catalog.Add("DropConfirm: rewritten into individual confirms for %s (%s)", "zh", "DropConfirm：改写为对 %s 的逐条确认（%s）")
	saySynthesized    = catalog.Add("synthesized by proxy", "zh", "由代理合成")
)

// Why the proxy could not read what came on the wire.
var (
	_ = catalog.Add("reading protocol header: %w", "zh", "读取协议头：%s")
	_ = catalog.Add("amqpproxy: reading %d-byte frame payload: %w", "zh", "amqpproxy：读取 %s 字节的帧负载：%s")
)

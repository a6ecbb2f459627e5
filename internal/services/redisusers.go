package services

import (
	"context"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/rmlab/lab/internal/secret"
)

// RedisOptions are the client options for a Redis address, which may carry
// a login: host:port, user:password@host:port or a redis:// URL.
func RedisOptions(addr string) *redis.Options {
	if strings.HasPrefix(addr, "redis://") {
		if o, err := redis.ParseURL(addr); err == nil {
			o.DialTimeout, o.MaxRetries = DialTimeout, -1
			return o
		}
	}
	o := &redis.Options{Addr: addr, DialTimeout: DialTimeout, MaxRetries: -1}
	if at := strings.LastIndexByte(addr, '@'); at >= 0 {
		cred := addr[:at]
		o.Addr = addr[at+1:]
		if user, pass, ok := strings.Cut(cred, ":"); ok {
			o.Username, o.Password = user, pass
		} else {
			o.Password = cred
		}
	}
	return o
}

// RedisUser is participant ns's Redis user (an ACL user, Redis 6 and
// later).
func RedisUser(ns string) string { return ParticipantUser(ns) }

// redisCommands are what a participant's lessons and workers send: the
// lessons' redis steps (GET, EXISTS, EXPIRE, TTL), the consumer's marks
// (SET NX, SETNX, GET, DEL) and the client's own handshake (HELLO, AUTH,
// PING; no SELECT: its keys are in database 0). No SCAN or
// KEYS: they list every participant's key names (a reset's SCAN runs as
// the lab); no command that reaches the server's configuration, other
// clients or the whole keyspace.
var redisCommands = []string{"+get", "+set", "+setnx", "+del", "+exists", "+expire", "+pexpire", "+ttl", "+pttl",
	"+ping", "+hello", "+auth"}

// redisLater are allowed where the server knows them (CLIENT SETINFO came
// with Redis 7.2; the client sends it and lives without it).
var redisLater = []string{"+client|setinfo"}

// MakeRedisUser makes (or renews, with a new password) participant ns's
// Redis user, allowed only the keys of ns (lab_NS:*, NS:*; lab:* for the
// default namespace) and the
// commands its lessons send, and returns the address that logs in as it.
func MakeRedisUser(ctx context.Context, admin *redis.Client, addr, ns string) (string, error) {
	user, pass := RedisUser(ns), Password()
	// Its keys as the lab names them (Names.RedisKey): lab_NS:* and NS:*,
	// or lab:* for the default namespace (lab replay --as-participant).
	args := []any{"ACL", "SETUSER", user, "reset", "on", ">" + pass, "~" + Names{NS: ns}.RedisKey("lab:*")}
	if ns != "" {
		args = append(args, "~"+ns+":*")
	}
	args = append(args, "resetchannels", "-@all")
	for _, c := range redisCommands {
		args = append(args, c)
	}
	if err := admin.Do(ctx, args...).Err(); err != nil {
		return "", fmt.Errorf("make Redis user %s: %w", user, err)
	}
	for _, c := range redisLater {
		admin.Do(ctx, "ACL", "SETUSER", user, c) // an older server refuses it: nothing lost
	}
	secret.NotePassword(pass) // never printed, whatever shows it
	o := RedisOptions(addr)
	host := o.Addr
	if _, _, err := net.SplitHostPort(host); err != nil {
		host = net.JoinHostPort(host, "6379")
	}
	return user + ":" + pass + "@" + host, nil
}

// DropRedisUser removes participant ns's Redis user.
func DropRedisUser(ctx context.Context, admin *redis.Client, ns string) error {
	if err := admin.Do(ctx, "ACL", "DELUSER", RedisUser(ns)).Err(); err != nil {
		return fmt.Errorf("remove Redis user %s: %w", RedisUser(ns), err)
	}
	return nil
}

// RedisUsersAllowed reports whether the lab's Redis login may make users
// (ACL SETUSER, Redis 6+), trying it with a user no participant can have.
func RedisUsersAllowed(ctx context.Context, admin *redis.Client) error {
	c, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	probe := "rmlab_Probe" + Password()[:8]
	if err := admin.Do(c, "ACL", "SETUSER", probe, "off").Err(); err != nil {
		return err
	}
	return admin.Do(c, "ACL", "DELUSER", probe).Err()
}

package services

import (
	"errors"
	"net"
	"strings"
	"syscall"

	amqp "github.com/rabbitmq/amqp091-go"
)

// advice says what went wrong reaching a service and how to fix it, by
// what the error is: a wrong password is not a server to start, nor is a
// host name that does not resolve. flag names where the address comes from; start is the
// advice for a server that is not running.
func advice(service, flag string, err error, start string) (what, fix string) {
	var dns *net.DNSError
	var ae *amqp.Error
	switch {
	case Code(err) == ErAccessDenied || errors.As(err, &ae) && ae.Code == amqp.AccessRefused ||
		strings.Contains(err.Error(), "ACCESS_REFUSED") || strings.Contains(err.Error(), "username or password not allowed"):
		return service + " refused the login", "the server is up: check the user and password in " + flag
	case errors.As(err, &dns):
		return "cannot find " + service + "'s host " + dns.Name, "check the host name in " + flag + " (a typo, or a name this machine cannot resolve)"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "cannot reach " + service, "nothing listens at that address: " + start
	case isTimeout(err):
		return service + " did not answer in time", "a wrong host or port, a firewall dropping the connection, or a server still starting: check " + flag + ", then try again"
	}
	return "cannot reach " + service, start
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout() || strings.Contains(err.Error(), "i/o timeout")
}

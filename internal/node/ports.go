package node

import (
	"fmt"
	mrand "math/rand/v2"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
)

// FreePorts finds n distinct free loopback ports, holding each until all
// are chosen. They are drawn below the kernel's ephemeral range, where no
// outgoing connection takes its local port between the choice and the
// node's bind; the kernel's own choice is the fallback.
func FreePorts(n int) ([]int, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	low := ephemeralLow()
	var out []int
	for tries := 0; len(out) < n && tries < 200 && low > 12000; tries++ {
		port := 10000 + mrand.IntN(low-10000)
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
		if err != nil || slices.Contains(out, port) {
			continue
		}
		ls = append(ls, l)
		out = append(out, port)
	}
	for len(out) < n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("no free loopback port: %w", err)
		}
		ls = append(ls, l)
		out = append(out, l.Addr().(*net.TCPAddr).Port)
	}
	return out, nil
}

// ephemeralLow is the first port of the kernel's ephemeral range (Linux:
// /proc/sys/net/ipv4/ip_local_port_range), 32768 when unknown.
func ephemeralLow() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 32768
	}
	if f := strings.Fields(string(b)); len(f) == 2 {
		if n, err := strconv.Atoi(f[0]); err == nil {
			return n
		}
	}
	return 32768
}

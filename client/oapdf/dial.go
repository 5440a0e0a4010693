package oapdf

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"syscall"
	"time"

	"github.com/groundwork/curate/internal/httpx"
)

// ErrForbiddenAddress means a host resolved to, or a connection was about
// to go to, an address a downloader of untrusted URLs must not reach:
// loopback, private, link-local, unspecified, multicast or otherwise
// reserved. It wraps httpx.ErrPolicy, so the call is not retried.
var ErrForbiddenAddress = fmt.Errorf("forbidden address: %w", httpx.ErrPolicy)

// reserved are the ranges netip's predicates do not name but no public
// PDF host lives in.
var reserved = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),       // "this network"
	netip.MustParsePrefix("100.64.0.0/10"),   // carrier-grade NAT
	netip.MustParsePrefix("192.0.0.0/24"),    // IETF protocol assignments
	netip.MustParsePrefix("192.0.2.0/24"),    // documentation
	netip.MustParsePrefix("198.18.0.0/15"),   // benchmarking
	netip.MustParsePrefix("198.51.100.0/24"), // documentation
	netip.MustParsePrefix("203.0.113.0/24"),  // documentation
	netip.MustParsePrefix("240.0.0.0/4"),     // reserved, broadcast
	netip.MustParsePrefix("64:ff9b::/96"),    // NAT64: would reach any IPv4 address
	netip.MustParsePrefix("64:ff9b:1::/48"),  // local-use NAT64
	netip.MustParsePrefix("100::/64"),        // discard
	netip.MustParsePrefix("2001::/23"),       // IETF protocol assignments (Teredo, ORCHID)
	netip.MustParsePrefix("2001:db8::/32"),   // documentation
	netip.MustParsePrefix("2002::/16"),       // 6to4: embeds any IPv4 address
	netip.MustParsePrefix("fec0::/10"),       // site-local (deprecated)
}

// PublicAddr reports whether a is a public unicast address: not loopback,
// private, link-local, unspecified, multicast or reserved. An IPv4 address
// written as IPv6 (::ffff:10.0.0.1) is judged as the IPv4 address.
func PublicAddr(a netip.Addr) bool {
	a = a.Unmap()
	if !a.IsValid() || !a.IsGlobalUnicast() || a.IsPrivate() || a.IsLoopback() ||
		a.IsLinkLocalUnicast() || a.IsUnspecified() || a.IsMulticast() {
		return false
	}
	for _, p := range reserved {
		if p.Contains(a) {
			return false
		}
	}
	return true
}

// dialer connects to host names after resolving them itself, to
// addresses the policy allows only. The check runs twice: on the resolved
// addresses, and in net.Dialer's Control on the address actually being
// connected, so that nothing (a redirect, a resolver answering
// differently the second time) reaches a forbidden address.
type dialer struct {
	resolve func(ctx context.Context, host string) ([]netip.Addr, error)
	allow   func(netip.Addr) bool
	net     net.Dialer
}

func newDialer(resolve func(context.Context, string) ([]netip.Addr, error), allow func(netip.Addr) bool) *dialer {
	d := &dialer{resolve: resolve, allow: allow}
	if d.resolve == nil {
		d.resolve = func(ctx context.Context, host string) ([]netip.Addr, error) {
			return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		}
	}
	if d.allow == nil {
		d.allow = PublicAddr
	}
	d.net = net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second, Control: d.control}
	return d
}

// control is net.Dialer's last word before connect(2).
func (d *dialer) control(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("dial %s: %w (unparsable)", address, ErrForbiddenAddress)
	}
	if !d.allow(ap.Addr()) {
		return fmt.Errorf("dial %s: %w", address, ErrForbiddenAddress)
	}
	return nil
}

// DialContext resolves host and dials its allowed addresses in order.
func (d *dialer) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(address)
	if err != nil {
		return nil, err
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return nil, fmt.Errorf("dial %s: bad port", address)
	}
	var addrs []netip.Addr
	if a, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{a}
	} else if addrs, err = d.resolve(ctx, host); err != nil {
		return nil, fmt.Errorf("resolve %s: %w", host, err)
	}
	var errs []error
	tried := 0
	for _, a := range addrs {
		if !d.allow(a) {
			errs = append(errs, fmt.Errorf("%s resolves to %s: %w", host, a, ErrForbiddenAddress))
			continue
		}
		tried++
		c, err := d.net.DialContext(ctx, network, netip.AddrPortFrom(a, mustPort(port)).String())
		if err == nil {
			return c, nil
		}
		errs = append(errs, err)
	}
	if len(addrs) == 0 {
		return nil, fmt.Errorf("resolve %s: no addresses", host)
	}
	err = errors.Join(errs...)
	if tried == 0 {
		return nil, fmt.Errorf("dial %s: %w", address, err)
	}
	return nil, err
}

func mustPort(p string) uint16 {
	n, _ := strconv.ParseUint(p, 10, 16)
	return uint16(n)
}

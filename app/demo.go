package app

import (
	"context"
	"encoding/json"
	"maps"
	"net/url"

	"github.com/groundwork/curate/sim"
	"github.com/groundwork/curate/sim/demo"
)

// demoAddrsKey is where the demo's store keeps the addresses its services
// listened on.
const demoAddrsKey = "demo/addresses"

// StartDemo starts the demo's services at the addresses they had in the
// last demo run on the store, when they are free: robots.txt answers are
// kept under their URL, so a run that finds everything stored asks
// nothing at all, robots.txt included, within their TTL. The addresses
// are recorded in the store for the next run.
func StartDemo(ctx context.Context, dir string) (*sim.Servers, error) {
	st, err := OpenStore(ctx, dir, false)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	addrs := map[string]string{}
	if b, err := st.Value(ctx, demoAddrsKey); err == nil {
		json.Unmarshal(b, &addrs) // a value that does not read: fresh ports
	}
	srv, err := demo.StartAt(addrs)
	if err != nil {
		return nil, err
	}
	now := map[string]string{}
	for _, name := range demo.Services() {
		if u, err := url.Parse(srv.URL(name)); err == nil {
			now[name] = u.Host
		}
	}
	if b, err := json.Marshal(now); err == nil && !maps.Equal(now, addrs) {
		if err := st.SetValue(ctx, demoAddrsKey, b); err != nil {
			srv.Close()
			return nil, err
		}
	}
	return srv, nil
}

package sim_test

import (
	"testing"

	"github.com/groundwork/curate/client/arxivapi"
	"github.com/groundwork/curate/client/llm"
	"github.com/groundwork/curate/client/oaipmh"
	"github.com/groundwork/curate/client/s2"
	"github.com/groundwork/curate/sim"
)

// TestServiceNames: the services are named as the clients name theirs, so
// a name means one service in curate's counters and in the simulation.
func TestServiceNames(t *testing.T) {
	for _, tc := range []struct{ sim, client string }{
		{sim.S2, s2.ServiceName},
		{sim.ArxivAPI, arxivapi.ServiceName},
		{sim.OAIPMH, oaipmh.ServiceName},
		{sim.LLM, llm.DefaultService},
	} {
		if tc.sim != tc.client {
			t.Errorf("sim names a service %q, its client %q", tc.sim, tc.client)
		}
	}
}

package sdk

import (
	"time"

	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// capabilities is what this SDK tells the admin it can do
// (RegisterRequest.capabilities): it starts a run at its due_at (launcher.go),
// and its results carry its instance id (admins.reportResults).
var capabilities = []carillonv1.Capability{carillonv1.Capability_CAPABILITY_DUE_AT, carillonv1.Capability_CAPABILITY_INSTANCE_RESULTS}

// clockReading is the offset between the admin's clock and this
// executor's, measured over one heartbeat's round trip: the admin's time
// when it handled the heartbeat (RegisterResponse.admin_time) minus the
// middle of the call by this executor's clock. It is good to half the
// round trip. The next heartbeat reports it (RegisterRequest.clock_offset),
// and the admin warns when it is over 50 ms: runs sent ahead start at
// their due_at by the executor's clock, so the clocks must agree (NTP).
type clockReading struct {
	offset    time.Duration // admin minus executor
	roundTrip time.Duration
	measured  bool
}

// measureClock returns the reading of a call sent at sent and answered at
// received, both by this executor's clock, whose answer says the admin's
// clock read admin. An admin that predates admin_time measures nothing.
func measureClock(sent, received time.Time, admin *timestamppb.Timestamp) clockReading {
	if admin == nil {
		return clockReading{}
	}
	rt := received.Sub(sent)
	mid := sent.Add(rt / 2)
	return clockReading{offset: admin.AsTime().Sub(mid), roundTrip: rt, measured: true}
}

package server

import (
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/carillonhq/carillon/admin/internal/store"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// ts converts t to a Timestamp; the zero time is unset.
func ts(t time.Time) *timestamppb.Timestamp {
	if t.IsZero() {
		return nil
	}
	return timestamppb.New(t)
}

// fromTS converts a Timestamp to a time; unset is the zero time.
func fromTS(t *timestamppb.Timestamp) time.Time {
	if t == nil {
		return time.Time{}
	}
	return t.AsTime()
}

func groupToProto(g store.Group, addresses []string) *carillonv1.Group {
	return &carillonv1.Group{
		Id: g.ID, AppName: g.AppName, Title: g.Title, AddressMode: g.AddressMode,
		Addresses: addresses, UpdatedAt: ts(g.UpdatedAt), HasOwnToken: g.HasOwnToken,
		ExecutorProtocol: g.ExecutorProtocol, AllowScripts: g.AllowScripts, Paused: !g.PausedAt.IsZero(), MaxConcurrency: g.MaxConcurrency,
	}
}

func jobToProto(j store.Job) *carillonv1.Job {
	p := &carillonv1.Job{
		Id: j.ID, GroupId: j.GroupID, Description: j.Description, Owner: j.Owner, AlarmEmails: j.AlarmEmails,
		Schedule: &carillonv1.Schedule{
			Type: j.ScheduleType, Cron: j.Cron, IntervalSeconds: j.IntervalSeconds, TimeZone: j.TimeZone,
		},
		MisfireStrategy: j.MisfireStrategy, RouteStrategy: j.RouteStrategy, Handler: j.Handler, Param: j.Param,
		BlockStrategy: j.BlockStrategy, TimeoutSeconds: j.TimeoutSeconds, RetryCount: j.RetryCount,
		ChildJobIds: j.ChildJobIDs, Enabled: j.Enabled, LastFireAt: ts(j.LastFireAt), NextFireAt: ts(j.NextFireAt),
		CreatedAt: ts(j.CreatedAt), UpdatedAt: ts(j.UpdatedAt), RetryDelaySeconds: j.RetryDelaySeconds,
		RetryBackoff: j.RetryBackoff, AlarmWebhookUrl: j.AlarmWebhookURL, AlarmEveryFailure: j.AlarmEveryFailure,
		ParamTemplate:  j.ParamTemplate,
		CalendarIds:    j.CalendarIDs,
		MaxConcurrency: j.MaxConcurrency,
		// Never the secret: it is write-only.
		AlarmWebhookFormat: j.AlarmWebhookFormat, HasAlarmWebhookSecret: j.AlarmWebhookSecret != "",
		AlarmWebhookTemplate: j.AlarmWebhookTemplate,
		Name:                 j.Name,
	}
	if j.ScriptType != carillonv1.ScriptType_SCRIPT_TYPE_UNSPECIFIED {
		p.Script = &carillonv1.Script{Type: j.ScriptType, Source: j.ScriptSource, UpdatedAt: ts(j.ScriptUpdatedAt)}
	}
	return p
}

// jobFromProto converts the input fields of a validated job; output fields
// are left zero.
func jobFromProto(p *carillonv1.Job) store.Job {
	j := store.Job{
		ID: p.Id, GroupID: p.GroupId, Description: p.Description, Owner: p.Owner, AlarmEmails: p.AlarmEmails,
		MisfireStrategy: p.MisfireStrategy, RouteStrategy: p.RouteStrategy, Handler: p.Handler, Param: p.Param,
		BlockStrategy: p.BlockStrategy, TimeoutSeconds: p.TimeoutSeconds, RetryCount: p.RetryCount,
		ChildJobIDs: p.ChildJobIds, RetryDelaySeconds: p.RetryDelaySeconds, RetryBackoff: p.RetryBackoff,
		AlarmWebhookURL: p.AlarmWebhookUrl, AlarmEveryFailure: p.AlarmEveryFailure, ParamTemplate: p.ParamTemplate, CalendarIDs: p.CalendarIds,
		MaxConcurrency: p.MaxConcurrency, AlarmWebhookFormat: p.AlarmWebhookFormat, AlarmWebhookSecret: p.AlarmWebhookSecret,
		AlarmWebhookTemplate: p.AlarmWebhookTemplate, Name: p.Name,
	}
	if s := p.Schedule; s != nil {
		j.ScheduleType, j.Cron, j.IntervalSeconds, j.TimeZone = s.Type, s.Cron, s.IntervalSeconds, s.TimeZone
	}
	if s := p.Script; s != nil {
		j.ScriptType, j.ScriptSource, j.ScriptUpdatedAt = s.Type, s.Source, fromTS(s.UpdatedAt)
	}
	return j
}

// runToProto returns r as the API shows it at now: a run claimed for a
// later instant and not recorded as sent (store.Run.Waiting) is PENDING,
// due at its instant, with no triggered_at yet; RUNNING means sent.
func runToProto(r store.Run, now time.Time) *carillonv1.Run {
	if r.Waiting(now) {
		r.Status, r.DueAt, r.TriggeredAt = carillonv1.RunStatus_RUN_STATUS_PENDING, r.TriggeredAt, time.Time{}
	}
	return &carillonv1.Run{
		Id: r.ID, JobId: r.JobID, GroupId: r.GroupID, ExecutorAddress: r.ExecutorAddress, Handler: r.Handler,
		Param: r.SentParam(), ShardIndex: r.ShardIndex, ShardTotal: r.ShardTotal, TriggerType: r.TriggerType,
		ScheduledAt: ts(r.ScheduledAt), TriggeredAt: ts(r.TriggeredAt), TriggerMessage: r.TriggerMessage,
		Status: r.Status, Message: r.Message, FinishedAt: ts(r.FinishedAt), Attempt: r.Attempt,
		DueAt: ts(r.DueAt), AlarmStatus: r.AlarmStatus, AlarmMessage: r.AlarmMessage,
		MissedCount: r.MissedCount, MissedUntil: ts(r.MissedUntil), SettledByAdmin: r.AdminSettled, LateResult: r.LateResult,
		WorkflowRunId: r.WorkflowRunID, WorkflowNode: r.WorkflowNode, Outputs: r.Outputs, Inputs: r.Inputs,
		StartedAt: ts(r.StartedAt),
	}
}

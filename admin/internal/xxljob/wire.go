package xxljob

import (
	"encoding/json"
	"strings"
)

// Header names of xxl-job's protocol.
const (
	// TokenHeader carries the access token, in every version.
	TokenHeader = "XXL-JOB-ACCESS-TOKEN" //nolint:gosec // a header name, not a credential
	// AppNameHeader carries the executor's app name (3.5 and later).
	AppNameHeader = "XXL-JOB-APPNAME"
)

// Handle codes of xxl-job's results and replies.
const (
	codeSuccess = 200
	codeFail    = 500
	codeTimeout = 502
)

// reply is xxl-job's reply envelope: ReturnT {code, msg, content} up to
// 3.2, Response {code, msg, data} from 3.3. A reader takes either.
type reply struct {
	Code    int             `json:"code"`
	Msg     json.RawMessage `json:"msg"`
	Content json.RawMessage `json:"content,omitempty"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// message returns the reply's msg as text: executors send a string, null,
// or (xxl-job-executor-go) any JSON value.
func (r reply) message() string {
	var s string
	if json.Unmarshal(r.Msg, &s) == nil {
		return s
	}
	if t := strings.TrimSpace(string(r.Msg)); t != "null" {
		return t
	}
	return ""
}

// payload returns the reply's data (3.3 and later) or content (classic).
func (r reply) payload() json.RawMessage {
	if len(r.Data) > 0 && string(r.Data) != "null" {
		return r.Data
	}
	return r.Content
}

// triggerParam is the body of /run (/trigger in 3.5): TriggerParam, later
// TriggerRequest, with the same fields in every version.
type triggerParam struct {
	JobID                 int64  `json:"jobId"`
	ExecutorHandler       string `json:"executorHandler"`
	ExecutorParams        string `json:"executorParams"`
	ExecutorBlockStrategy string `json:"executorBlockStrategy"`
	ExecutorTimeout       int32  `json:"executorTimeout"`
	LogID                 int64  `json:"logId"`
	LogDateTime           int64  `json:"logDateTime"`
	GlueType              string `json:"glueType"`
	GlueSource            string `json:"glueSource"`
	GlueUpdatetime        int64  `json:"glueUpdatetime"`
	BroadcastIndex        int32  `json:"broadcastIndex"`
	BroadcastTotal        int32  `json:"broadcastTotal"`
}

// jobParam is the body of /idleBeat and /kill.
type jobParam struct {
	JobID int64 `json:"jobId"`
}

// logParam is the body of /log. It carries the time under both spellings:
// logDateTim (sic) up to 3.4 and in xxl-job-executor-go, logDateTime in
// 3.5; each executor reads its own and ignores the other.
type logParam struct {
	LogDateTim  int64 `json:"logDateTim"`
	LogDateTime int64 `json:"logDateTime"`
	LogID       int64 `json:"logId"`
	FromLineNum int32 `json:"fromLineNum"`
}

// logResult is the payload of /log's reply: LogResult, later LogData.
type logResult struct {
	FromLineNum int32  `json:"fromLineNum"`
	ToLineNum   int32  `json:"toLineNum"`
	LogContent  string `json:"logContent"`
	IsEnd       bool   `json:"isEnd"`
}

// registryParam is the body of /api/registry and /api/registryRemove.
type registryParam struct {
	RegistryGroup string `json:"registryGroup"`
	RegistryKey   string `json:"registryKey"`
	RegistryValue string `json:"registryValue"`
}

// callbackItem is one result of /api/callback: HandleCallbackParam,
// later CallbackRequest or CallbackData. Before 2.3 the outcome came as
// executeResult {code, msg}; xxl-job-executor-go sends both forms.
type callbackItem struct {
	LogID         *int64  `json:"logId"`
	LogDateTim    int64   `json:"logDateTim"`
	LogDateTime   int64   `json:"logDateTime"`
	HandleCode    *int    `json:"handleCode"`
	HandleMsg     *string `json:"handleMsg"`
	ExecuteResult *struct {
		Code int             `json:"code"`
		Msg  json.RawMessage `json:"msg"`
	} `json:"executeResult"`
}

// callbackList is the body of /api/callback in 3.5: the items wrapped in
// an object. Earlier versions send the array alone.
type callbackList struct {
	CallbackList []callbackItem `json:"callbackList"`
}

package alarm

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// maxChatMessage bounds the run's message in a chat robot's alarm (the
// robots refuse long messages: WeCom's markdown at 4096 bytes, Slack's
// section text at 3000 characters); the run's page has all of it.
const maxChatMessage = 1500

// title sums up e in a line: "job 7 nightly report: run 12 FAILED".
func title(e Event) string {
	if e.WorkflowRunID != 0 {
		return fmt.Sprintf("workflow %d %s: workflow run %d %s", e.WorkflowID, e.WorkflowName, e.WorkflowRunID, e.Status)
	}
	return fmt.Sprintf("job %d %s: run %d %s", e.JobID, e.JobDescription, e.RunID, e.Status)
}

// chatMessage is e's message, shortened to maxChatMessage characters.
func chatMessage(e Event) string {
	r := []rune(e.Message)
	if len(r) <= maxChatMessage {
		return e.Message
	}
	return string(r[:maxChatMessage]) + "…"
}

// markdown is e as the Markdown the robots of DingTalk, Feishu and WeCom
// render: a heading, the fields of the e-mail, the message quoted and the
// link to the run; sep separates the lines (DingTalk needs a blank line
// for a line break).
func markdown(e Event, heading, sep string) string {
	lines := []string{heading + "Carillon: " + title(e)}
	for _, f := range eventFields(e) {
		lines = append(lines, "**"+f[0]+":** "+f[1])
	}
	if msg := chatMessage(e); msg != "" {
		lines = append(lines, "> "+strings.ReplaceAll(msg, "\n", "\n> "))
	}
	if e.RunURL != "" {
		lines = append(lines, "[Open the run in Carillon]("+e.RunURL+")")
	}
	return strings.Join(lines, sep)
}

// dingTalk is the POST of e to a DingTalk custom robot: the URL, with
// timestamp (Unix ms) and sign query parameters when secret is set, and a
// markdown message. sign is the base64 of the HMAC-SHA256 of
// timestamp+"\n"+secret keyed by secret, URL-escaped (as a query value).
// https://open.dingtalk.com/document/robots/custom-robot-access
// https://open.dingtalk.com/document/robots/customize-robot-security-settings
// https://open.dingtalk.com/document/development/robot-message-type
func dingTalk(hook, secret string, e Event, now time.Time) (string, []byte, error) {
	if secret != "" {
		u, err := url.Parse(hook)
		if err != nil {
			return "", nil, err
		}
		ts := strconv.FormatInt(now.UnixMilli(), 10)
		q := u.Query()
		q.Set("timestamp", ts)
		q.Set("sign", base64.StdEncoding.EncodeToString(hmacSHA256([]byte(secret), []byte(ts+"\n"+secret))))
		u.RawQuery = q.Encode()
		hook = u.String()
	}
	body, err := json.Marshal(map[string]any{
		"msgtype":  "markdown",
		"markdown": map[string]string{"title": "Carillon: " + title(e), "text": markdown(e, "#### ", "\n\n")},
	})
	return hook, body, err
}

// feishu is the body of e for a Feishu (Lark) custom bot: an interactive
// card with a red header and the markdown, and, when secret is set,
// timestamp (Unix seconds, a string) and sign: the base64 of the
// HMAC-SHA256 of an empty message keyed by timestamp+"\n"+secret.
// https://open.feishu.cn/document/client-docs/bot-v3/add-custom-bot
// https://www.feishu.cn/hc/en-US/articles/360024984973
func feishu(secret string, e Event, now time.Time) ([]byte, error) {
	msg := map[string]any{
		"msg_type": "interactive",
		"card": map[string]any{
			"config":   map[string]any{"wide_screen_mode": true},
			"header":   map[string]any{"template": "red", "title": map[string]string{"tag": "plain_text", "content": "Carillon: " + title(e)}},
			"elements": []any{map[string]string{"tag": "markdown", "content": markdown(e, "", "\n")}},
		},
	}
	if secret != "" {
		ts := strconv.FormatInt(now.Unix(), 10)
		msg["timestamp"] = ts
		msg["sign"] = base64.StdEncoding.EncodeToString(hmacSHA256([]byte(ts+"\n"+secret), nil))
	}
	return json.Marshal(msg)
}

// weCom is the body of e for a WeCom (WeChat Work) group robot: a
// markdown message (WeCom's robots do not sign).
// https://developer.work.weixin.qq.com/document/path/91770
func weCom(e Event) ([]byte, error) {
	return json.Marshal(map[string]any{
		"msgtype":  "markdown",
		"markdown": map[string]string{"content": markdown(e, "### ", "\n")},
	})
}

// slackEscape escapes the three characters Slack's mrkdwn reserves.
var slackEscape = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

// slack is the body of e for a Slack incoming webhook: text (the
// notification's fallback) and blocks: a header, the fields, the message
// and the link (incoming webhooks do not sign).
// https://api.slack.com/messaging/webhooks
// https://api.slack.com/reference/block-kit/blocks
func slack(e Event) ([]byte, error) {
	head := "Carillon: " + title(e)
	var fields []any
	for _, f := range eventFields(e) {
		fields = append(fields, map[string]string{"type": "mrkdwn", "text": "*" + f[0] + "*\n" + slackEscape.Replace(f[1])})
	}
	blocks := []any{
		map[string]any{"type": "header", "text": map[string]string{"type": "plain_text", "text": truncateRunes(head, 150)}},
		map[string]any{"type": "section", "fields": fields},
	}
	if msg := chatMessage(e); msg != "" {
		blocks = append(blocks, map[string]any{"type": "section", "text": map[string]string{"type": "mrkdwn", "text": "```" + slackEscape.Replace(msg) + "```"}})
	}
	text := head
	if e.RunURL != "" {
		blocks = append(blocks, map[string]any{"type": "section", "text": map[string]string{"type": "mrkdwn", "text": "<" + e.RunURL + "|Open the run in Carillon>"}})
		text += " " + e.RunURL
	}
	return json.Marshal(map[string]any{"text": text, "blocks": blocks})
}

// truncateRunes cuts s to n characters (a Slack header's limit is 150).
func truncateRunes(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

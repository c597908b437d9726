package alarm_test

import (
	"bufio"
	"crypto/hmac"
	"crypto/md5"
	"crypto/tls"
	"encoding/base64"
	"encoding/hex"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
)

// smtpdConfig is how a test SMTP server behaves.
type smtpdConfig struct {
	// addr to listen on; "" is 127.0.0.1:0.
	addr string
	// cert, if set, is offered with STARTTLS, or with implicit from the
	// first byte.
	cert     *tls.Certificate
	implicit bool
	// mechs are the AUTH mechanisms offered (PLAIN, LOGIN, CRAM-MD5 and
	// XOAUTH2 are checked); user with password or token is accepted.
	mechs                 []string
	user, password, token string
	// stallAt, if set, is where the server stops answering (it reads on
	// until the client hangs up): "greeting", or a command ("DATA": after
	// the message).
	stallAt string
}

// smtpd is a minimal SMTP server on loopback, written for the tests: it
// keeps the dialogue and each message.
type smtpd struct {
	cfg  smtpdConfig
	addr string
	// hangups receives a value each time a client hangs up on a stalled
	// server.
	hangups chan struct{}

	mu   sync.Mutex
	cmds []string // every command, verbs only past AUTH
	mail []smtpMail
}

// smtpMail is a message the server took.
type smtpMail struct {
	rcpts []string
	data  string
	tls   bool   // whether the connection was TLS
	auth  string // the mechanism the client authenticated with, if any
}

func startSMTPD(t *testing.T, cfg smtpdConfig) *smtpd {
	t.Helper()
	ln, err := net.Listen("tcp", cmpOr(cfg.addr, "127.0.0.1:0"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	s := &smtpd{cfg: cfg, addr: ln.Addr().String(), hangups: make(chan struct{}, 16)}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			if cfg.implicit {
				c = tls.Server(c, &tls.Config{Certificates: []tls.Certificate{*cfg.cert}})
			}
			go s.serve(c)
		}
	}()
	return s
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func (s *smtpd) messages() []smtpMail {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]smtpMail(nil), s.mail...)
}

func (s *smtpd) dialogue() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Join(s.cmds, " | ")
}

// session is one client's connection.
type session struct {
	s     *smtpd
	c     net.Conn
	r     *bufio.Reader
	tls   bool
	auth  string
	rcpts []string
}

func (x *session) say(line string) { _, _ = io.WriteString(x.c, line+"\r\n") } // the client under test notices a failed write

func (x *session) read() (string, bool) {
	line, err := x.r.ReadString('\n')
	return strings.TrimRight(line, "\r\n"), err == nil
}

// stall stops answering and waits for the client to hang up.
func (x *session) stall() {
	_, _ = io.Copy(io.Discard, x.r)
	x.s.hangups <- struct{}{}
}

func (s *smtpd) serve(c net.Conn) {
	defer c.Close()
	_, isTLS := c.(*tls.Conn)
	x := &session{s: s, c: c, r: bufio.NewReader(c), tls: isTLS}
	if s.cfg.stallAt == "greeting" {
		x.stall()
		return
	}
	x.say("220 test ESMTP")
	for {
		line, ok := x.read()
		if !ok {
			return
		}
		verb := strings.ToUpper(strings.SplitN(line, " ", 2)[0])
		s.mu.Lock()
		if verb == "AUTH" {
			s.cmds = append(s.cmds, strings.Join(strings.Fields(line)[:2], " "))
		} else {
			s.cmds = append(s.cmds, line)
		}
		s.mu.Unlock()
		if verb == s.cfg.stallAt && verb != "DATA" {
			x.stall()
			return
		}
		switch verb {
		case "EHLO":
			x.ehlo()
		case "STARTTLS":
			if s.cfg.cert == nil || x.tls {
				x.say("502 no STARTTLS here")
				continue
			}
			x.say("220 go ahead")
			tc := tls.Server(c, &tls.Config{Certificates: []tls.Certificate{*s.cfg.cert}})
			if tc.Handshake() != nil {
				return
			}
			x.c, x.r, x.tls = tc, bufio.NewReader(tc), true
		case "AUTH":
			x.authenticate(line)
		case "MAIL":
			x.rcpts = nil
			x.say("250 ok")
		case "RCPT":
			x.rcpts = append(x.rcpts, strings.Trim(strings.TrimSpace(strings.SplitN(line, ":", 2)[1]), "<>"))
			x.say("250 ok")
		case "DATA":
			if !x.data() {
				return
			}
		case "QUIT":
			x.say("221 bye")
			return
		default: // NOOP, RSET
			x.say("250 ok")
		}
	}
}

func (x *session) ehlo() {
	lines := []string{"test"}
	if x.s.cfg.cert != nil && !x.tls && !x.s.cfg.implicit {
		lines = append(lines, "STARTTLS")
	}
	if len(x.s.cfg.mechs) > 0 {
		lines = append(lines, "AUTH "+strings.Join(x.s.cfg.mechs, " "))
	}
	for i, l := range lines {
		sep := "-"
		if i == len(lines)-1 {
			sep = " "
		}
		x.say("250" + sep + l)
	}
}

// data takes a message; false: the connection is done.
func (x *session) data() bool {
	x.say("354 go on")
	var data strings.Builder
	for {
		l, err := x.r.ReadString('\n')
		if err != nil {
			return false
		}
		if l == ".\r\n" {
			break
		}
		data.WriteString(strings.TrimPrefix(l, "."))
	}
	x.s.mu.Lock()
	x.s.mail = append(x.s.mail, smtpMail{rcpts: x.rcpts, data: data.String(), tls: x.tls, auth: x.auth})
	x.s.mu.Unlock()
	if x.s.cfg.stallAt == "DATA" {
		x.stall()
		return false
	}
	x.say("250 queued")
	return true
}

// authenticate runs an AUTH exchange and checks the credentials.
func (x *session) authenticate(line string) {
	f := strings.Fields(line)
	mech, initial := strings.ToUpper(f[1]), ""
	if len(f) > 2 {
		initial = f[2]
	}
	// ask sends a challenge and decodes the answer.
	ask := func(challenge string) string {
		x.say("334 " + base64.StdEncoding.EncodeToString([]byte(challenge)))
		l, _ := x.read()
		b, _ := base64.StdEncoding.DecodeString(l)
		return string(b)
	}
	decode := func(s string) string { b, _ := base64.StdEncoding.DecodeString(s); return string(b) }
	cfg := x.s.cfg
	ok := false
	switch mech {
	case "PLAIN":
		resp := decode(initial)
		if initial == "" {
			resp = ask("")
		}
		ok = resp == "\x00"+cfg.user+"\x00"+cfg.password
	case "LOGIN":
		ok = ask("Username:") == cfg.user && ask("Password:") == cfg.password
	case "CRAM-MD5":
		challenge := "<1234.5678@test>"
		h := hmac.New(md5.New, []byte(cfg.password))
		h.Write([]byte(challenge))
		ok = ask(challenge) == cfg.user+" "+hex.EncodeToString(h.Sum(nil))
	case "XOAUTH2":
		ok = decode(initial) == "user="+cfg.user+"\x01auth=Bearer "+cfg.token+"\x01\x01"
	}
	if !ok || !strings.Contains(" "+strings.Join(cfg.mechs, " ")+" ", " "+mech+" ") {
		x.say("535 5.7.8 authentication failed")
		return
	}
	x.auth = mech
	x.say("235 2.7.0 authenticated")
}

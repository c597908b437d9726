package alarm

import mail "github.com/wneessen/go-mail"

// TLSMode is how an Email secures its connection to the SMTP server.
type TLSMode string

// The TLS modes of an Email.
const (
	// TLSStartTLS upgrades the connection with STARTTLS, and fails on a
	// server that does not offer it. The default.
	TLSStartTLS TLSMode = "starttls"
	// TLSOpportunistic upgrades with STARTTLS when the server offers it,
	// and goes on in clear when not (as net/smtp did).
	TLSOpportunistic TLSMode = "opportunistic"
	// TLSImplicit speaks TLS from the first byte (SMTPS, port 465).
	TLSImplicit TLSMode = "implicit"
	// TLSNone never uses TLS.
	TLSNone TLSMode = "none"
)

// TLSModes are the valid TLS modes, the default first.
var TLSModes = []TLSMode{TLSStartTLS, TLSOpportunistic, TLSImplicit, TLSNone}

// Valid reports whether m is one of TLSModes; "" is not (it means the
// default only in an Email).
func (m TLSMode) Valid() bool {
	switch m {
	case TLSStartTLS, TLSOpportunistic, TLSImplicit, TLSNone:
		return true
	}
	return false
}

// policy is go-mail's STARTTLS policy of m (TLSImplicit's is moot: no
// STARTTLS after TLS).
func (m TLSMode) policy() mail.TLSPolicy {
	switch m {
	case TLSOpportunistic:
		return mail.TLSOpportunistic
	case TLSImplicit, TLSNone:
		return mail.NoTLS
	}
	return mail.TLSMandatory
}

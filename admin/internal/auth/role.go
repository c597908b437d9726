package auth

import "slices"

// Role is what a user may do. The values are those of the API's
// carillon.v1.Role.
type Role int32

const (
	// RoleAdmin may do everything.
	RoleAdmin Role = 1
	// RoleMember reads and operates the jobs and runs of the groups granted
	// to the user, and nothing else.
	RoleMember Role = 2
	// RoleViewer reads everything and changes nothing.
	RoleViewer Role = 3
)

// Valid reports whether r is one of the three roles.
func (r Role) Valid() bool { return r == RoleAdmin || r == RoleMember || r == RoleViewer }

// String returns "ADMIN", "MEMBER" or "VIEWER".
func (r Role) String() string {
	switch r {
	case RoleAdmin:
		return "ADMIN"
	case RoleMember:
		return "MEMBER"
	case RoleViewer:
		return "VIEWER"
	}
	return "UNKNOWN"
}

// CredentialKind says how a request authenticated.
type CredentialKind int

const (
	// CredentialSession is a session token from Login.
	CredentialSession CredentialKind = 1
	// CredentialAPIToken is an API token from CreateApiToken.
	CredentialAPIToken CredentialKind = 2
)

// Principal is the user a request runs as, with the credential it came
// with. Its role and grants are read from the database on every request, so
// a change to a user applies at once.
type Principal struct {
	UserID   int64
	Username string
	Role     Role
	// Groups are a MEMBER's granted group IDs, sorted.
	Groups []int64
	// Credential and CredentialID name the session or API token used.
	Credential   CredentialKind
	CredentialID int64
}

// Admin reports whether p may do everything.
func (p *Principal) Admin() bool { return p != nil && p.Role == RoleAdmin }

// CanRead reports whether p may read the jobs and runs of the group.
func (p *Principal) CanRead(groupID int64) bool {
	if p == nil {
		return false
	}
	switch p.Role {
	case RoleAdmin, RoleViewer:
		return true
	case RoleMember:
		_, ok := slices.BinarySearch(p.Groups, groupID)
		return ok
	}
	return false
}

// CanWrite reports whether p may change or operate the jobs and runs of the
// group.
func (p *Principal) CanWrite(groupID int64) bool {
	if p == nil {
		return false
	}
	switch p.Role {
	case RoleAdmin:
		return true
	case RoleMember:
		_, ok := slices.BinarySearch(p.Groups, groupID)
		return ok
	}
	return false
}

// ReadScope returns which groups p may read: all of them, or only ids.
func (p *Principal) ReadScope() (all bool, ids []int64) {
	if p == nil {
		return false, nil
	}
	if p.Role == RoleAdmin || p.Role == RoleViewer {
		return true, nil
	}
	if p.Role == RoleMember {
		return false, p.Groups
	}
	return false, nil
}

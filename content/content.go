// Package content is edgecms's editorial repository: instances and their
// locales, credentials, content models, containers, content items, page
// models, channels and pages, the editorial workflow, schedules, media
// (assets and galleries) and URL redirections.
//
// Store is its Postgres repository. Every change runs in one transaction
// that also appends the change's rows to the event log (package eventlog),
// which the publisher, the webhook dispatcher, the origin's render cache
// and the sync stamper (package syncstamp) consume; nothing else writes
// content. The Fetch API renderer reads these tables through package
// render/source.
package content

import (
	"strings"
	"time"
)

// Instance is one customer's content space, addressed by its guid.
type Instance struct {
	ID        int64     `db:"id" json:"-"`
	Guid      string    `db:"guid" json:"guid"`
	CreatedAt time.Time `db:"created_at" json:"createdAt"`
}

// Locale is a language of an instance. Code is the exact string requests use.
type Locale struct {
	Code      string `db:"code" json:"code"`
	Name      string `db:"name" json:"name"`
	IsDefault bool   `db:"is_default" json:"isDefault"`
}

// State is the publication state of an item or page copy.
type State int

// The states of an item or page copy.
const (
	Staging          State = 1
	Published        State = 2
	Deleted          State = 3
	Approved         State = 4
	AwaitingApproval State = 5
	Declined         State = 6
	Unpublished      State = 7
)

var stateNames = map[State]string{
	Staging: "staging", Published: "published", Deleted: "deleted", Approved: "approved",
	AwaitingApproval: "awaiting approval", Declined: "declined", Unpublished: "unpublished",
}

// String is the state's name as editors know it.
func (s State) String() string { return stateNames[s] }

// Role is what a management token may do. Each role includes the ones before it.
type Role string

// The roles of a management token, weakest first.
const (
	RoleEdit    Role = "edit"
	RolePublish Role = "publish"
	RoleManage  Role = "manage"
	RoleFull    Role = "full"
)

var roleRank = map[Role]int{RoleEdit: 1, RolePublish: 2, RoleManage: 3, RoleFull: 4}

// Valid reports whether r is one of the four roles.
func (r Role) Valid() bool { return roleRank[r] > 0 }

// Includes reports whether a token of role r may do what needs role need.
func (r Role) Includes(need Role) bool { return roleRank[r] >= roleRank[need] && roleRank[need] > 0 }

// Roles lists the roles weakest first.
var Roles = []Role{RoleEdit, RolePublish, RoleManage, RoleFull}

func lower(s string) string { return strings.ToLower(s) }

package content

import (
	"fmt"

	"github.com/edgecms/edgecms/eventlog"
	"github.com/edgecms/edgecms/problem"
)

// Action is something an editor does to an item or page copy.
type Action string

// The actions of the workflow.
const (
	ActionSave            Action = "save"
	ActionPublish         Action = "publish"
	ActionUnpublish       Action = "unpublish"
	ActionRequestApproval Action = "request-approval"
	ActionApprove         Action = "approve"
	ActionDecline         Action = "decline"
	ActionDelete          Action = "delete"
)

// Actions lists every action, in the order of the workflow.
var Actions = []Action{ActionSave, ActionRequestApproval, ActionApprove, ActionDecline, ActionPublish, ActionUnpublish, ActionDelete}

// Role is the weakest role that may take the action.
func (a Action) Role() Role {
	switch a {
	case ActionSave, ActionRequestApproval:
		return RoleEdit
	default:
		return RolePublish
	}
}

// eventlog.State is the event (and webhook payload state) the action writes.
func (a Action) EventState() eventlog.State {
	switch a {
	case ActionSave:
		return eventlog.Saved
	case ActionPublish:
		return eventlog.Published
	case ActionRequestApproval:
		return eventlog.AwaitingApproval
	case ActionApprove:
		return eventlog.Approved
	case ActionDecline:
		return eventlog.Declined
	default: // unpublish and delete
		return eventlog.Deleted
	}
}

// ParseAction returns the action named in a route, or a NotFound problem.
func ParseAction(s string) (Action, error) {
	for _, a := range Actions {
		if string(a) == s && a != ActionSave && a != ActionDelete {
			return a, nil
		}
	}
	return "", problem.NotFoundf("unknown action %q; one of publish, unpublish, request-approval, approve, decline", s)
}

// Transition is the workflow's state machine: the state a copy in state from
// moves to when action a is taken, or a Conflict problem saying why it may
// not. hasPublished tells whether the copy has a published version.
//
//	save              any state but deleted          -> staging
//	request-approval  staging, declined, unpublished -> awaiting approval
//	approve           awaiting approval              -> approved
//	decline           awaiting approval              -> declined
//	publish           any state but published/deleted -> published
//	unpublish         any state with a published version, but deleted -> unpublished
//	delete            any state but deleted          -> deleted
func Transition(from State, hasPublished bool, a Action) (State, error) {
	deny := func(why string, args ...any) (State, error) {
		return from, problem.Conflictf("cannot %s: %s", a, fmt.Sprintf(why, args...))
	}
	if from == Deleted {
		return deny("it is deleted")
	}
	switch a {
	case ActionSave:
		return Staging, nil
	case ActionRequestApproval:
		switch from {
		case Staging, Declined, Unpublished:
			return AwaitingApproval, nil
		case Published:
			return deny("it is published and has no changes to approve")
		}
		return deny("it is already %s", from)
	case ActionApprove, ActionDecline:
		if from != AwaitingApproval {
			return deny("it is %s, not awaiting approval", from)
		}
		if a == ActionApprove {
			return Approved, nil
		}
		return Declined, nil
	case ActionPublish:
		if from == Published {
			return deny("it is already published with no changes since")
		}
		return Published, nil
	case ActionUnpublish:
		if !hasPublished {
			return deny("it has no published version")
		}
		return Unpublished, nil
	case ActionDelete:
		return Deleted, nil
	}
	return deny("unknown action")
}

package content

// The statements the plan check of the external tests (plans_test.go)
// runs.
const (
	SelectContainerHeadSQL = selectContainerHeadSQL
	LockItemSQL            = lockItemSQL
	SelectCopiesSQL        = selectCopiesSQL
	LinkedInContainerSQL   = linkedInContainerSQL
	InsertItemSQL          = insertItemSQL
	InsertCopySQL          = insertCopySQL
	UpdateCopySQL          = updateCopySQL
)

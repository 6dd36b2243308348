package slack

import (
	"context"
	"errors"
	"fmt"

	slackapi "github.com/slack-go/slack"

	"github.com/countersign/countersign/adapters"
)

var _ adapters.EmailFinder = (*Adapter)(nil)

// UserByEmail finds the member of the workspace whose e-mail address is
// email (users.lookupByEmail, which needs the users:read.email scope), for
// on-call approvers; "" when nobody has it. The bot keeps what it learns.
func (a *Adapter) UserByEmail(ctx context.Context, email string) (string, error) {
	u, err := a.api.GetUserByEmailContext(ctx, email)
	if se, ok := errors.AsType[slackapi.SlackErrorResponse](err); ok && se.Err == "users_not_found" {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("users.lookupByEmail: %w", err)
	}
	return u.ID, nil
}

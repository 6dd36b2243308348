package llm

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// Check reaches the model server's /models once, without retrying, and
// reports whether the configured model can be used: an *Error with the
// plain sentence when it cannot (the key is refused, the URL is wrong,
// nothing answers, the server does not list the model). For Azure, whose
// deployments are not listed there, only the connection and the key are
// checked.
func (c *Client) Check(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	list, err := c.client.ListModels(ctx)
	if err != nil {
		return fmt.Errorf("list models: %w", c.classify(err))
	}
	if c.cfg.APIType != APIOpenAI || len(list.Models) == 0 {
		return nil
	}
	ids := make([]string, 0, len(list.Models))
	for _, m := range list.Models {
		ids = append(ids, m.ID)
	}
	if slices.Contains(ids, c.cfg.Model) {
		return nil
	}
	slices.Sort(ids)
	shown := ids
	if len(shown) > 8 {
		shown = append(shown[:8:8], fmt.Sprintf("and %d more", len(ids)-8))
	}
	return &Error{
		permanent: true,
		Reason: fmt.Sprintf("the model server does not list model %q; set llm.model (or %s) to one it serves: %s",
			c.cfg.Model, EnvModel, strings.Join(shown, ", ")),
		Err: fmt.Errorf("model %q not among the %d listed", c.cfg.Model, len(ids)),
	}
}

// Server is where the client sends requests, without any password: the
// base URL, or OpenAI's.
func (c *Client) Server() string { return c.serverName() }

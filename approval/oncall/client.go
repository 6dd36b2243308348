package oncall

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
)

// Client asks one service who is on call now in a schedule: their
// e-mail addresses.
type Client interface {
	OnCall(ctx context.Context, schedule string) ([]string, error)
}

// maxBody caps what is read of one answer.
const maxBody = 1 << 20

// getJSON GETs url with the header auth (Authorization) and accept, and
// decodes a 2xx answer into v. Another status is an error that holds the
// service's own message (read by message from the body), never the token.
func getJSON(ctx context.Context, hc *http.Client, url, auth, accept string, v any, message func([]byte) string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", auth)
	req.Header.Set("Accept", accept)
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return fmt.Errorf("read the answer: %w", err)
	}
	if resp.StatusCode/100 != 2 {
		if m := message(body); m != "" {
			return fmt.Errorf("HTTP %d: %s", resp.StatusCode, m)
		}
		return fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("the answer is not the JSON expected: %w", err)
	}
	return nil
}

// addresses are the e-mail addresses given, lower case, each once, in
// order; blanks left out.
func addresses(emails []string) []string {
	out := make([]string, 0, len(emails))
	for _, e := range emails {
		e = strings.ToLower(strings.TrimSpace(e))
		if e != "" && !slices.Contains(out, e) {
			out = append(out, e)
		}
	}
	return out
}

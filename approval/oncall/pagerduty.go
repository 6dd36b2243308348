package oncall

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
)

// PagerDutyClient reads who is on call in a PagerDuty schedule: GET
// /oncalls?schedule_ids[]=<id>&earliest=true&include[]=users (REST API
// v2), the users with their e-mail, a page of 100 at a time.
type PagerDutyClient struct {
	BaseURL string // https://api.pagerduty.com
	Token   string // a REST API key
	HTTP    *http.Client
}

var _ Client = (*PagerDutyClient)(nil)

// pdPages caps the pages read for one schedule (100 on-calls a page).
const pdPages = 10

// pdOnCalls is the answer of GET /oncalls.
type pdOnCalls struct {
	OnCalls []struct {
		User struct {
			ID    string `json:"id"`
			Type  string `json:"type"`
			Email string `json:"email"`
		} `json:"user"`
	} `json:"oncalls"`
	More bool `json:"more"`
}

// OnCall returns the e-mail addresses of the people on call now in
// schedule.
func (p *PagerDutyClient) OnCall(ctx context.Context, schedule string) ([]string, error) {
	var emails []string
	for page := range pdPages {
		q := url.Values{}
		q.Set("schedule_ids[]", schedule)
		q.Set("earliest", "true")
		q.Set("include[]", "users")
		q.Set("limit", "100")
		q.Set("offset", strconv.Itoa(page*100))
		var got pdOnCalls
		err := getJSON(ctx, p.HTTP, p.BaseURL+"/oncalls?"+q.Encode(), "Token token="+p.Token,
			"application/vnd.pagerduty+json;version=2", &got, pdError)
		if err != nil {
			return nil, fmt.Errorf("pagerduty: on-calls of schedule %s: %w", schedule, err)
		}
		for _, oc := range got.OnCalls {
			if oc.User.Email == "" {
				return nil, fmt.Errorf("pagerduty: on-calls of schedule %s: user %s came without an e-mail (type %q); the token may not read users", schedule, oc.User.ID, oc.User.Type)
			}
			emails = append(emails, oc.User.Email)
		}
		if !got.More {
			return addresses(emails), nil
		}
	}
	return nil, fmt.Errorf("pagerduty: on-calls of schedule %s: more than %d pages", schedule, pdPages)
}

// pdError is PagerDuty's error message: {"error":{"message":…,"code":…}}.
func pdError(body []byte) string {
	var e struct {
		Error struct {
			Message string `json:"message"`
			Code    int    `json:"code"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &e) != nil || e.Error.Message == "" {
		return ""
	}
	return e.Error.Message + " (code " + strconv.Itoa(e.Error.Code) + ")"
}

package oncall

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
)

// OpsgenieClient reads who is on call in an Opsgenie schedule: GET
// /v2/schedules/<id>/on-calls?scheduleIdentifierType=id&flat=true, whose
// onCallRecipients are the people's user names (their e-mail addresses).
type OpsgenieClient struct {
	BaseURL string // https://api.opsgenie.com
	Key     string // an API integration's key
	HTTP    *http.Client
}

var _ Client = (*OpsgenieClient)(nil)

// ogOnCalls is the answer of GET /v2/schedules/<id>/on-calls, flat.
type ogOnCalls struct {
	Data *struct {
		OnCallRecipients []string `json:"onCallRecipients"`
	} `json:"data"`
}

// OnCall returns the e-mail addresses of the people on call now in
// schedule.
func (o *OpsgenieClient) OnCall(ctx context.Context, schedule string) ([]string, error) {
	q := url.Values{}
	q.Set("scheduleIdentifierType", "id")
	q.Set("flat", "true")
	var got ogOnCalls
	err := getJSON(ctx, o.HTTP, o.BaseURL+"/v2/schedules/"+url.PathEscape(schedule)+"/on-calls?"+q.Encode(),
		"GenieKey "+o.Key, "application/json", &got, ogError)
	if err != nil {
		return nil, fmt.Errorf("opsgenie: on-calls of schedule %s: %w", schedule, err)
	}
	if got.Data == nil {
		return nil, fmt.Errorf("opsgenie: on-calls of schedule %s: the answer has no data", schedule)
	}
	return addresses(got.Data.OnCallRecipients), nil
}

// ogError is Opsgenie's error message: {"message":…,"took":…,"requestId":…}.
func ogError(body []byte) string {
	var e struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(body, &e) != nil {
		return ""
	}
	return e.Message
}

package telemetry

import (
	"net/http"
	"regexp"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"
)

// chatTransport makes a span of each chat platform API call that goes
// through it: the platform, the method (Slack's Web API method such as
// chat.postMessage; Discord's route with its ids as {id}), the HTTP
// status. Never a header, a query or a body: they carry tokens and text.
type chatTransport struct {
	next     http.RoundTripper
	tracer   trace.Tracer
	platform string
}

// Attribute keys of a chat API call's span.
const (
	attrChatPlatform = attribute.Key("countersign.chat.platform")
	attrChatMethod   = attribute.Key("countersign.chat.method")
)

// RoundTrip sends r under a span named "<platform> <method>".
func (t *chatTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	method := apiMethod(r.URL.Path)
	ctx, sp := t.tracer.Start(r.Context(), t.platform+" "+method, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(attrChatPlatform.String(t.platform), attrChatMethod.String(method),
			semconv.HTTPRequestMethodKey.String(r.Method), semconv.ServerAddress(r.URL.Hostname())))
	defer sp.End()
	resp, err := t.next.RoundTrip(r.WithContext(ctx))
	if err != nil {
		sp.SetStatus(codes.Error, "the request failed")
		return resp, err
	}
	sp.SetAttributes(semconv.HTTPResponseStatusCode(resp.StatusCode))
	if resp.StatusCode >= 400 {
		sp.SetStatus(codes.Error, resp.Status)
	}
	return resp, nil
}

// ids are the path segments that name one thing (Discord's snowflakes,
// interaction tokens): a span's name is the route, not the thing.
var ids = regexp.MustCompile(`^[0-9]+$|^[A-Za-z0-9_-]{40,}$`)

// apiMethod is the API method of a request path: Slack's is the last
// segment after /api/ (chat.postMessage); Discord's, the route after
// /api/vN with each id as {id}.
func apiMethod(path string) string {
	_, rest, ok := strings.Cut(path, "/api/")
	if !ok {
		rest = strings.TrimPrefix(path, "/")
	}
	segs := strings.Split(rest, "/")
	if len(segs) > 0 && len(segs[0]) > 1 && segs[0][0] == 'v' && strings.Trim(segs[0][1:], "0123456789") == "" {
		segs = segs[1:] // Discord's version
	}
	for i, s := range segs {
		if ids.MatchString(s) {
			segs[i] = "{id}"
		}
	}
	if len(segs) == 1 {
		return segs[0] // Slack's chat.postMessage
	}
	return "/" + strings.Join(segs, "/")
}

// Package otlptest is a fake OTLP/HTTP trace receiver for tests: an
// httptest server that takes what the real exporter sends to /v1/traces
// (a protobuf ExportTraceServiceRequest, the wire format collectors
// read) and keeps the spans, flattened, for a test to read.
package otlptest

import (
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	"google.golang.org/protobuf/proto"
)

// Span is one received span, its ids in hex and its attributes (the
// span's and its resource's apart) as text.
type Span struct {
	Name              string
	TraceID, SpanID   string
	ParentID          string // "" for a root span
	Start, End        uint64 // Unix nanoseconds
	Attrs, Resource   map[string]string
	StatusError       bool
	StatusDescription string
}

// Receiver is the fake receiver.
type Receiver struct {
	srv *httptest.Server

	mu       sync.Mutex
	spans    []Span
	requests int
}

// New starts a receiver, closed when the test ends.
func New(tb testing.TB) *Receiver {
	r := &Receiver{}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	tb.Cleanup(r.srv.Close)
	return r
}

// URL is the receiver's base URL (telemetry.otlp_endpoint); the spans go
// to its /v1/traces.
func (r *Receiver) URL() string { return r.srv.URL }

func (r *Receiver) serve(w http.ResponseWriter, req *http.Request) {
	if req.URL.Path != "/v1/traces" || req.Method != http.MethodPost || req.Header.Get("Content-Type") != "application/x-protobuf" {
		http.Error(w, "want POST /v1/traces with application/x-protobuf", http.StatusNotFound)
		return
	}
	body, err := io.ReadAll(req.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var msg coltracepb.ExportTraceServiceRequest
	if err := proto.Unmarshal(body, &msg); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var got []Span
	for _, rs := range msg.ResourceSpans {
		res := attrs(rs.GetResource().GetAttributes())
		for _, ss := range rs.ScopeSpans {
			for _, s := range ss.Spans {
				got = append(got, Span{
					Name: s.Name, TraceID: hex.EncodeToString(s.TraceId), SpanID: hex.EncodeToString(s.SpanId),
					ParentID: hex.EncodeToString(s.ParentSpanId), Start: s.StartTimeUnixNano, End: s.EndTimeUnixNano,
					Attrs: attrs(s.Attributes), Resource: res,
					StatusError: s.GetStatus().GetCode() == 2, StatusDescription: s.GetStatus().GetMessage(),
				})
			}
		}
	}
	r.mu.Lock()
	r.spans = append(r.spans, got...)
	r.requests++
	r.mu.Unlock()
	out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}

// attrs flattens attributes to text.
func attrs(kvs []*commonpb.KeyValue) map[string]string {
	out := make(map[string]string, len(kvs))
	for _, kv := range kvs {
		v := kv.GetValue()
		switch x := v.GetValue().(type) {
		case *commonpb.AnyValue_StringValue:
			out[kv.Key] = x.StringValue
		case *commonpb.AnyValue_IntValue:
			out[kv.Key] = strconv.FormatInt(x.IntValue, 10)
		case *commonpb.AnyValue_BoolValue:
			out[kv.Key] = strconv.FormatBool(x.BoolValue)
		case *commonpb.AnyValue_DoubleValue:
			out[kv.Key] = strconv.FormatFloat(x.DoubleValue, 'g', -1, 64)
		default:
			out[kv.Key] = v.String()
		}
	}
	return out
}

// Spans returns the spans received so far, in arrival order.
func (r *Receiver) Spans() []Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Span(nil), r.spans...)
}

// Named returns the received spans named name.
func (r *Receiver) Named(name string) []Span {
	var out []Span
	for _, s := range r.Spans() {
		if s.Name == name {
			out = append(out, s)
		}
	}
	return out
}
